#include "agent_pinger.h"

#include <arpa/inet.h>
#include <netinet/ip.h>
#include <netinet/ip_icmp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <vector>

#include "netiface/netlink/netns.h"

namespace netiface::bench::agent {
namespace {

uint16_t Checksum(const void* data, size_t len) {
  const auto* p = static_cast<const uint8_t*>(data);
  uint32_t sum = 0;
  for (size_t i = 0; i + 1 < len; i += 2) sum += static_cast<uint32_t>(p[i] << 8 | p[i + 1]);
  if (len % 2) sum += static_cast<uint32_t>(p[len - 1] << 8);
  while (sum >> 16) sum = (sum & 0xffff) + (sum >> 16);
  return htons(static_cast<uint16_t>(~sum));
}

}  // namespace

Pinger::Pinger(const std::string& netns_path) {
  auto ns = nl::NetNs::Open(netns_path);
  if (!ns) throw std::runtime_error("no namespace at " + netns_path);
  {
    nl::ScopedSetNs in(*ns);
    fd_ = ::socket(AF_INET, SOCK_RAW | SOCK_CLOEXEC | SOCK_NONBLOCK, IPPROTO_ICMP);
  }
  if (fd_ < 0) throw std::runtime_error(std::string("raw ICMP socket: ") + std::strerror(errno));
  run_ = static_cast<uint16_t>(::getpid() << 4);
}

Pinger::~Pinger() {
  Stop();
  ::close(fd_);
}

void Pinger::Start(const std::string& target, std::chrono::microseconds interval) {
  Stop();
  in_addr dst{};
  if (::inet_pton(AF_INET, target.c_str(), &dst) != 1) throw std::invalid_argument("not an IPv4 address: " + target);
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = false;
    reply_.reset();
    error_.clear();
  }
  const uint16_t id = ++run_;
  thread_ = std::thread([this, dst, interval, id] { Probe(dst.s_addr, interval, id); });
}

void Pinger::Stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

std::optional<Pinger::Reply> Pinger::WaitReply(Clock::time_point deadline) {
  std::unique_lock<std::mutex> lock(mu_);
  cv_.wait_until(lock, deadline, [&] { return reply_.has_value() || !error_.empty(); });
  return reply_;
}

std::string Pinger::error() {
  std::lock_guard<std::mutex> lock(mu_);
  return error_;
}

// Runs on the prober thread: sends, and reads replies in between, until the first reply of `id` or stop_.
void Pinger::Probe(uint32_t target, std::chrono::microseconds interval, uint16_t id) {
  std::vector<Clock::time_point> sent;  // by sequence number
  sockaddr_in to{};
  to.sin_family = AF_INET;
  to.sin_addr.s_addr = target;
  auto fail = [&](const char* what) {
    std::lock_guard<std::mutex> lock(mu_);
    error_ = std::string(what) + ": " + std::strerror(errno);
    cv_.notify_all();
  };
  Clock::time_point next = Clock::now();
  for (;;) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (stop_ || reply_) return;
    }
    Clock::time_point now = Clock::now();
    if (now >= next && sent.size() < 0xffff) {
      icmphdr h{};
      h.type = ICMP_ECHO;
      h.un.echo.id = htons(id);
      h.un.echo.sequence = htons(static_cast<uint16_t>(sent.size()));
      h.checksum = Checksum(&h, sizeof h);
      sent.push_back(Clock::now());
      // EINVAL/ENETUNREACH and the like are a closed path, not a failure: the next probe tries again.
      if (::sendto(fd_, &h, sizeof h, 0, reinterpret_cast<sockaddr*>(&to), sizeof to) < 0 && errno == EBADF) {
        return fail("sendto");
      }
      next += interval;
      if (next < now) next = now + interval;
    }
    auto wait = sent.size() < 0xffff ? std::chrono::duration_cast<std::chrono::nanoseconds>(next - Clock::now())
                                     : std::chrono::nanoseconds(std::chrono::milliseconds(10));
    if (wait.count() < 0) wait = {};
    timespec ts{static_cast<time_t>(wait.count() / 1'000'000'000), static_cast<long>(wait.count() % 1'000'000'000)};
    pollfd p{fd_, POLLIN, 0};
    if (::ppoll(&p, 1, &ts, nullptr) <= 0) continue;
    alignas(iphdr) unsigned char buf[1500];
    for (;;) {
      sockaddr_in from{};
      socklen_t from_len = sizeof from;
      ssize_t k = ::recvfrom(fd_, buf, sizeof buf, 0, reinterpret_cast<sockaddr*>(&from), &from_len);
      Clock::time_point at = Clock::now();
      if (k < 0) {
        if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) break;
        return fail("recvfrom");
      }
      const auto* ip = reinterpret_cast<const iphdr*>(buf);
      size_t ihl = static_cast<size_t>(ip->ihl) * 4;
      if (static_cast<size_t>(k) < ihl + sizeof(icmphdr) || from.sin_addr.s_addr != target) continue;
      icmphdr r;
      std::memcpy(&r, buf + ihl, sizeof r);
      uint16_t seq = ntohs(r.un.echo.sequence);
      if (r.type != ICMP_ECHOREPLY || ntohs(r.un.echo.id) != id || seq >= sent.size()) continue;
      std::lock_guard<std::mutex> lock(mu_);
      reply_ = Reply{sent[seq], at, seq + 1};
      cv_.notify_all();
      return;
    }
  }
}

}  // namespace netiface::bench::agent
