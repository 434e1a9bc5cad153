#include "agent_kernel_monitor.h"

#include <arpa/inet.h>
#include <linux/if_ether.h>
#include <linux/neighbour.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>

#include <fmt/format.h>

namespace netiface::bench::agent {
namespace {

// Large enough for the notifications of a few thousand entries added in one burst.
constexpr int kReceiveBuffer = 32 << 20;

std::string Ip(int family, const void* bytes) {
  char buf[INET6_ADDRSTRLEN] = {};
  ::inet_ntop(family, bytes, buf, sizeof buf);
  return buf;
}

std::string Mac(const unsigned char* b) {
  return fmt::format("{:02x}:{:02x}:{:02x}:{:02x}:{:02x}:{:02x}", b[0], b[1], b[2], b[3], b[4], b[5]);
}

}  // namespace

std::string NeighKey(const std::string& ip) { return "neigh " + ip; }
std::string FdbKey(const std::string& mac) { return "fdb " + mac; }

std::optional<KernelChange> ParseRouteMessage(const nlmsghdr* h, int protocol) {
  if (h->nlmsg_type != RTM_NEWROUTE && h->nlmsg_type != RTM_DELROUTE) return std::nullopt;
  if (h->nlmsg_len < NLMSG_LENGTH(sizeof(rtmsg))) return std::nullopt;
  const auto* r = static_cast<const rtmsg*>(NLMSG_DATA(h));
  if (r->rtm_family != AF_INET || r->rtm_protocol != protocol) return std::nullopt;
  uint32_t table = r->rtm_table;
  std::string dst = "0.0.0.0", gw;
  int len = static_cast<int>(RTM_PAYLOAD(h));
  for (auto* a = RTM_RTA(r); RTA_OK(a, len); a = RTA_NEXT(a, len)) {
    if (a->rta_type == RTA_DST && RTA_PAYLOAD(a) == 4) dst = Ip(AF_INET, RTA_DATA(a));
    if (a->rta_type == RTA_GATEWAY && RTA_PAYLOAD(a) == 4) gw = Ip(AF_INET, RTA_DATA(a));
    if (a->rta_type == RTA_TABLE && RTA_PAYLOAD(a) == 4) std::memcpy(&table, RTA_DATA(a), 4);
  }
  if (table != RT_TABLE_MAIN) return std::nullopt;
  return KernelChange{dst + "/" + std::to_string(r->rtm_dst_len), gw, h->nlmsg_type == RTM_NEWROUTE};
}

std::optional<KernelChange> ParseNeighMessage(const nlmsghdr* h) {
  if (h->nlmsg_type != RTM_NEWNEIGH && h->nlmsg_type != RTM_DELNEIGH) return std::nullopt;
  if (h->nlmsg_len < NLMSG_LENGTH(sizeof(ndmsg))) return std::nullopt;
  const auto* n = static_cast<const ndmsg*>(NLMSG_DATA(h));
  if (n->ndm_family != AF_INET && n->ndm_family != AF_BRIDGE) return std::nullopt;
  std::string dst, mac;
  int len = static_cast<int>(h->nlmsg_len - NLMSG_LENGTH(sizeof(ndmsg)));
  for (auto* a = reinterpret_cast<const rtattr*>(reinterpret_cast<const char*>(n) + NLMSG_ALIGN(sizeof(ndmsg)));
       RTA_OK(a, len); a = RTA_NEXT(a, len)) {
    if (a->rta_type == NDA_DST && RTA_PAYLOAD(a) == 4) dst = Ip(AF_INET, RTA_DATA(a));
    if (a->rta_type == NDA_DST && RTA_PAYLOAD(a) == 16) dst = Ip(AF_INET6, RTA_DATA(a));
    if (a->rta_type == NDA_LLADDR && RTA_PAYLOAD(a) == ETH_ALEN)
      mac = Mac(static_cast<const unsigned char*>(RTA_DATA(a)));
  }
  const bool added = h->nlmsg_type == RTM_NEWNEIGH;
  if (n->ndm_family == AF_BRIDGE) {
    if (dst.empty() || mac.empty()) return std::nullopt;
    return KernelChange{FdbKey(mac), dst, added};
  }
  if (dst.empty()) return std::nullopt;
  return KernelChange{NeighKey(dst), mac, added && (n->ndm_state & NUD_PERMANENT) != 0};
}

std::unique_ptr<KernelMonitor> KernelMonitor::Routes(int protocol) {
  return std::make_unique<KernelMonitor>(RTNLGRP_IPV4_ROUTE,
                                         [protocol](const nlmsghdr* h) { return ParseRouteMessage(h, protocol); });
}

std::unique_ptr<KernelMonitor> KernelMonitor::Neighbours() {
  return std::make_unique<KernelMonitor>(RTNLGRP_NEIGH, ParseNeighMessage);
}

KernelMonitor::KernelMonitor(int group, Parser parse) : parse_(std::move(parse)) {
  fd_ = ::socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
  if (fd_ < 0) throw std::runtime_error(std::string("netlink socket: ") + std::strerror(errno));
  int size = kReceiveBuffer;
  if (::setsockopt(fd_, SOL_SOCKET, SO_RCVBUFFORCE, &size, sizeof size) != 0) {
    ::setsockopt(fd_, SOL_SOCKET, SO_RCVBUF, &size, sizeof size);
  }
  sockaddr_nl sa{};
  sa.nl_family = AF_NETLINK;
  if (::bind(fd_, reinterpret_cast<sockaddr*>(&sa), sizeof sa) != 0 ||
      ::setsockopt(fd_, SOL_NETLINK, NETLINK_ADD_MEMBERSHIP, &group, sizeof group) != 0) {
    int err = errno;
    ::close(fd_);
    throw std::runtime_error(fmt::format("netlink subscription to group {}: {}", group, std::strerror(err)));
  }
  thread_ = std::thread([this] { Loop(); });
}

KernelMonitor::~KernelMonitor() {
  stop_ = true;
  if (thread_.joinable()) thread_.join();
  ::close(fd_);
}

void KernelMonitor::Loop() {
  std::vector<char> buf(1 << 16);
  while (!stop_) {
    pollfd p{fd_, POLLIN, 0};
    if (::poll(&p, 1, 100) <= 0) continue;
    ssize_t k = ::recv(fd_, buf.data(), buf.size(), 0);
    Clock::time_point at = Clock::now();
    if (k < 0) {
      if (errno == ENOBUFS) ++overflows_;
      continue;
    }
    Handle(buf.data(), static_cast<size_t>(k), at);
  }
}

void KernelMonitor::Handle(const char* buf, size_t len, Clock::time_point at) {
  bool changed = false;
  {
    std::lock_guard<std::mutex> lock(mu_);
    int left = static_cast<int>(len);
    for (auto* h = reinterpret_cast<const nlmsghdr*>(buf); NLMSG_OK(h, left); h = NLMSG_NEXT(h, left)) {
      std::optional<KernelChange> c = parse_(h);
      if (!c) continue;
      Entry& e = entries_[c->key];
      if (c->present) {
        e.added = at;
        e.value = std::move(c->value);
      }
      e.present = c->present;
      changed = true;
    }
  }
  if (changed) cv_.notify_all();
}

std::optional<Clock::time_point> KernelMonitor::WaitAdded(const std::string& key, const std::string& value,
                                                          Clock::time_point since, Clock::time_point deadline) {
  std::unique_lock<std::mutex> lock(mu_);
  std::optional<Clock::time_point> out;
  cv_.wait_until(lock, deadline, [&] {
    auto it = entries_.find(key);
    if (it == entries_.end() || !it->second.present || it->second.added < since || it->second.value != value) {
      return false;
    }
    out = it->second.added;
    return true;
  });
  return out;
}

bool KernelMonitor::WaitRemoved(const std::string& key, Clock::time_point deadline) {
  std::unique_lock<std::mutex> lock(mu_);
  return cv_.wait_until(lock, deadline, [&] {
    auto it = entries_.find(key);
    return it == entries_.end() || !it->second.present;
  });
}

std::optional<Clock::time_point> KernelMonitor::WaitAllAdded(const std::vector<std::string>& keys,
                                                             Clock::time_point since, Clock::time_point deadline) {
  std::unique_lock<std::mutex> lock(mu_);
  std::optional<Clock::time_point> out;
  cv_.wait_until(lock, deadline, [&] {
    Clock::time_point last = since;
    for (const std::string& k : keys) {
      auto it = entries_.find(k);
      if (it == entries_.end() || !it->second.present || it->second.added < since) return false;
      last = std::max(last, it->second.added);
    }
    out = last;
    return true;
  });
  return out;
}

size_t KernelMonitor::Present() {
  std::lock_guard<std::mutex> lock(mu_);
  size_t n = 0;
  for (const auto& [key, e] : entries_) n += e.present ? 1 : 0;
  return n;
}

}  // namespace netiface::bench::agent
