#include "sockets.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sched.h>
#include <sys/time.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <thread>

#include <gtest/gtest.h>

namespace netiface::testing {

int SocketIn(const std::string& ns_path, int family, int type) {
  int self = ::open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC);
  int target = ::open(ns_path.c_str(), O_RDONLY | O_CLOEXEC);
  EXPECT_GE(self, 0);
  EXPECT_GE(target, 0) << ns_path;
  int fd = -1;
  if (self >= 0 && target >= 0 && ::setns(target, CLONE_NEWNET) == 0) {
    fd = ::socket(family, type | SOCK_CLOEXEC, 0);
    EXPECT_EQ(::setns(self, CLONE_NEWNET), 0);
  }
  if (self >= 0) ::close(self);
  if (target >= 0) ::close(target);
  EXPECT_GE(fd, 0);
  timeval tv{3, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  ::setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
  return fd;
}

SockAddr Addr(const std::string& ip, uint16_t port) {
  SockAddr a;
  if (ip.find(':') != std::string::npos) {
    auto* in6 = reinterpret_cast<sockaddr_in6*>(&a.ss);
    in6->sin6_family = AF_INET6;
    in6->sin6_port = htons(port);
    EXPECT_EQ(::inet_pton(AF_INET6, ip.c_str(), &in6->sin6_addr), 1) << ip;
    a.len = sizeof *in6;
  } else {
    auto* in = reinterpret_cast<sockaddr_in*>(&a.ss);
    in->sin_family = AF_INET;
    in->sin_port = htons(port);
    EXPECT_EQ(::inet_pton(AF_INET, ip.c_str(), &in->sin_addr), 1) << ip;
    a.len = sizeof *in;
  }
  return a;
}

std::string Peer(const SockAddr& a) {
  char buf[INET6_ADDRSTRLEN] = {};
  if (a.family() == AF_INET) {
    ::inet_ntop(AF_INET, &reinterpret_cast<const sockaddr_in*>(&a.ss)->sin_addr, buf, sizeof buf);
    return buf;
  }
  ::inet_ntop(AF_INET6, &reinterpret_cast<const sockaddr_in6*>(&a.ss)->sin6_addr, buf, sizeof buf);
  std::string s = buf;
  return s.starts_with("::ffff:") ? s.substr(7) : s;
}

Listeners::Listeners(const std::string& ns_path, uint16_t tcp_port, uint16_t udp_port)
    : tcp(SocketIn(ns_path, AF_INET6, SOCK_STREAM)), udp(SocketIn(ns_path, AF_INET6, SOCK_DGRAM)) {
  int one = 1;
  int zero = 0;
  ::setsockopt(tcp.get(), SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  for (int fd : {tcp.get(), udp.get()}) ::setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof zero);
  auto t = Addr("::", tcp_port);
  auto u = Addr("::", udp_port);
  EXPECT_EQ(::bind(tcp.get(), t.get(), t.len), 0);
  EXPECT_EQ(::listen(tcp.get(), 8), 0);
  EXPECT_EQ(::bind(udp.get(), u.get(), u.len), 0);
}

std::string TcpVia(Listeners& l, const std::string& client_ns, const std::string& ip, uint16_t port) {
  auto a = Addr(ip, port);
  cni::UniqueFd c(SocketIn(client_ns, a.family(), SOCK_STREAM));
  if (::connect(c.get(), a.get(), a.len) != 0) return "";
  SockAddr peer;
  peer.len = sizeof peer.ss;
  cni::UniqueFd s(::accept(l.tcp.get(), peer.get(), &peer.len));
  if (s.get() < 0) return "";
  if (::send(c.get(), "ping", 4, 0) != 4) return "";
  char buf[8] = {};
  if (::recv(s.get(), buf, sizeof buf, 0) != 4 || std::string(buf, 4) != "ping") return "";
  if (::send(s.get(), "pong", 4, 0) != 4) return "";
  if (::recv(c.get(), buf, sizeof buf, 0) != 4 || std::string(buf, 4) != "pong") return "";
  return Peer(peer);
}

std::string UdpVia(Listeners& l, const std::string& client_ns, const std::string& ip, uint16_t port) {
  auto a = Addr(ip, port);
  cni::UniqueFd c(SocketIn(client_ns, a.family(), SOCK_DGRAM));
  if (::sendto(c.get(), "ping", 4, 0, a.get(), a.len) != 4) return "";
  SockAddr peer;
  peer.len = sizeof peer.ss;
  char buf[8] = {};
  if (::recvfrom(l.udp.get(), buf, sizeof buf, 0, peer.get(), &peer.len) != 4) return "";
  if (::sendto(l.udp.get(), "pong", 4, 0, peer.get(), peer.len) != 4) return "";
  if (::recv(c.get(), buf, sizeof buf, 0) != 4 || std::string(buf, 4) != "pong") return "";
  return Peer(peer);
}

double MeasureUdpBytesPerSecond(const std::string& from_ns, const std::string& to_ns, const std::string& to_addr,
                                double offered) {
  cni::UniqueFd server(SocketIn(to_ns, AF_INET, SOCK_DGRAM));
  int rcvbuf = 4 << 20;
  ::setsockopt(server.get(), SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof rcvbuf);
  SockAddr a = Addr(to_addr, 0);  // port 0: the kernel's choice
  EXPECT_EQ(::bind(server.get(), a.get(), a.len), 0);
  a.len = sizeof a.ss;
  ::getsockname(server.get(), a.get(), &a.len);
  cni::UniqueFd client(SocketIn(from_ns, AF_INET, SOCK_DGRAM));
  EXPECT_EQ(::connect(client.get(), a.get(), a.len), 0);
  using Clock = std::chrono::steady_clock;
  const auto start = Clock::now();
  const auto window_start = start + std::chrono::milliseconds(300), end = start + std::chrono::milliseconds(1800);
  std::atomic<bool> stop{false};
  std::thread sender([&] {
    static char buf[kUdpPayload] = {};
    double sent = 0;
    while (!stop) {
      const double due = offered * std::chrono::duration<double>(Clock::now() - start).count();
      while (sent < due) {
        ::send(client.get(), buf, sizeof buf, MSG_NOSIGNAL);  // a drop by the bucket is the point
        sent += sizeof buf;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  });
  timeval tv{0, 200000};
  ::setsockopt(server.get(), SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  static char buf[65536];
  uint64_t counted = 0;
  for (auto now = Clock::now(); now < end; now = Clock::now()) {
    ssize_t n = ::recv(server.get(), buf, sizeof buf, 0);
    if (n > 0 && Clock::now() >= window_start) counted += static_cast<uint64_t>(n);
  }
  stop = true;
  sender.join();
  return static_cast<double>(counted) / 1.5;
}

}  // namespace netiface::testing
