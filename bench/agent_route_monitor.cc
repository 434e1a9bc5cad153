#include "agent_route_monitor.h"

#include <arpa/inet.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>

namespace netiface::bench::agent {
namespace {

// Large enough for the notifications of a few thousand routes added in one burst.
constexpr int kReceiveBuffer = 32 << 20;

std::string Ip4(const void* bytes) {
  char buf[INET_ADDRSTRLEN] = {};
  ::inet_ntop(AF_INET, bytes, buf, sizeof buf);
  return buf;
}

}  // namespace

RouteMonitor::RouteMonitor(int protocol) : protocol_(protocol) {
  fd_ = ::socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
  if (fd_ < 0) throw std::runtime_error(std::string("netlink socket: ") + std::strerror(errno));
  int size = kReceiveBuffer;
  if (::setsockopt(fd_, SOL_SOCKET, SO_RCVBUFFORCE, &size, sizeof size) != 0) {
    ::setsockopt(fd_, SOL_SOCKET, SO_RCVBUF, &size, sizeof size);
  }
  sockaddr_nl sa{};
  sa.nl_family = AF_NETLINK;
  sa.nl_groups = 1u << (RTNLGRP_IPV4_ROUTE - 1);
  if (::bind(fd_, reinterpret_cast<sockaddr*>(&sa), sizeof sa) != 0) {
    int err = errno;
    ::close(fd_);
    throw std::runtime_error(std::string("netlink bind to RTNLGRP_IPV4_ROUTE: ") + std::strerror(err));
  }
  thread_ = std::thread([this] { Loop(); });
}

RouteMonitor::~RouteMonitor() {
  stop_ = true;
  if (thread_.joinable()) thread_.join();
  ::close(fd_);
}

void RouteMonitor::Loop() {
  std::vector<char> buf(1 << 16);
  while (!stop_) {
    pollfd p{fd_, POLLIN, 0};
    int n = ::poll(&p, 1, 100);
    if (n <= 0) continue;
    ssize_t k = ::recv(fd_, buf.data(), buf.size(), 0);
    Clock::time_point at = Clock::now();
    if (k < 0) {
      if (errno == ENOBUFS) ++overflows_;
      continue;
    }
    Handle(buf.data(), static_cast<size_t>(k), at);
  }
}

void RouteMonitor::Handle(const char* buf, size_t len, Clock::time_point at) {
  bool changed = false;
  {
    std::lock_guard<std::mutex> lock(mu_);
    int left = static_cast<int>(len);
    for (auto* h = reinterpret_cast<const nlmsghdr*>(buf); NLMSG_OK(h, left); h = NLMSG_NEXT(h, left)) {
      if (h->nlmsg_type != RTM_NEWROUTE && h->nlmsg_type != RTM_DELROUTE) continue;
      if (h->nlmsg_len < NLMSG_LENGTH(sizeof(rtmsg))) continue;
      const auto* r = static_cast<const rtmsg*>(NLMSG_DATA(h));
      if (r->rtm_family != AF_INET || r->rtm_protocol != protocol_) continue;
      uint32_t table = r->rtm_table;
      std::string dst = "0.0.0.0", gw;
      int attr_len = static_cast<int>(RTM_PAYLOAD(h));
      for (auto* a = RTM_RTA(r); RTA_OK(a, attr_len); a = RTA_NEXT(a, attr_len)) {
        if (a->rta_type == RTA_DST && RTA_PAYLOAD(a) == 4) dst = Ip4(RTA_DATA(a));
        if (a->rta_type == RTA_GATEWAY && RTA_PAYLOAD(a) == 4) gw = Ip4(RTA_DATA(a));
        if (a->rta_type == RTA_TABLE && RTA_PAYLOAD(a) == 4) std::memcpy(&table, RTA_DATA(a), 4);
      }
      if (table != RT_TABLE_MAIN) continue;
      Entry& e = routes_[dst + "/" + std::to_string(r->rtm_dst_len)];
      if (h->nlmsg_type == RTM_NEWROUTE) {
        e.added = at;
        e.gw = gw;
        e.present = true;
      } else {
        e.present = false;
      }
      changed = true;
    }
  }
  if (changed) cv_.notify_all();
}

std::optional<Clock::time_point> RouteMonitor::WaitAdded(const std::string& dst, const std::string& gw,
                                                         Clock::time_point since, Clock::time_point deadline) {
  std::unique_lock<std::mutex> lock(mu_);
  std::optional<Clock::time_point> out;
  cv_.wait_until(lock, deadline, [&] {
    auto it = routes_.find(dst);
    if (it == routes_.end() || !it->second.present || it->second.added < since || it->second.gw != gw) return false;
    out = it->second.added;
    return true;
  });
  return out;
}

bool RouteMonitor::WaitRemoved(const std::string& dst, Clock::time_point deadline) {
  std::unique_lock<std::mutex> lock(mu_);
  return cv_.wait_until(lock, deadline, [&] {
    auto it = routes_.find(dst);
    return it == routes_.end() || !it->second.present;
  });
}

std::optional<Clock::time_point> RouteMonitor::WaitAllAdded(const std::vector<std::string>& dsts,
                                                            Clock::time_point since, Clock::time_point deadline) {
  std::unique_lock<std::mutex> lock(mu_);
  std::optional<Clock::time_point> out;
  cv_.wait_until(lock, deadline, [&] {
    Clock::time_point last = since;
    for (const std::string& d : dsts) {
      auto it = routes_.find(d);
      if (it == routes_.end() || !it->second.present || it->second.added < since) return false;
      last = std::max(last, it->second.added);
    }
    out = last;
    return true;
  });
  return out;
}

size_t RouteMonitor::Present() {
  std::lock_guard<std::mutex> lock(mu_);
  size_t n = 0;
  for (const auto& [dst, e] : routes_) n += e.present ? 1 : 0;
  return n;
}

}  // namespace netiface::bench::agent
