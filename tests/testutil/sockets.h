// Sockets inside throw-away namespaces, for the privileged tests that carry traffic: a published port's
// TCP and UDP exchange, and the rate a shaper lets through.
#pragma once

#include <sys/socket.h>

#include <cstdint>
#include <string>

#include "netiface/cni/unique_fd.h"

namespace netiface::testing {

// A socket created inside the namespace at `ns_path` (it stays there); the calling thread returns to its
// own namespace. Receive and send time out after 3 s (a bound on a failing test's wait).
int SocketIn(const std::string& ns_path, int family, int type);

struct SockAddr {
  sockaddr_storage ss{};
  socklen_t len = 0;
  int family() const { return ss.ss_family; }
  sockaddr* get() { return reinterpret_cast<sockaddr*>(&ss); }
};
SockAddr Addr(const std::string& ip, uint16_t port);  // IPv4 or IPv6 by the text
// The peer's address as text; an IPv4 peer of a dual-stack listener without its "::ffff:".
std::string Peer(const SockAddr& a);

// Dual-stack TCP and UDP listeners on all addresses of the namespace at `ns_path`.
struct Listeners {
  cni::UniqueFd tcp;
  cni::UniqueFd udp;
  Listeners(const std::string& ns_path, uint16_t tcp_port = 80, uint16_t udp_port = 53);
};

// A TCP exchange ("ping", "pong") from a client in `client_ns` to ip:port; returns the peer address the
// listener saw, "" when it failed.
std::string TcpVia(Listeners& l, const std::string& client_ns, const std::string& ip, uint16_t port);
// A UDP request and its reply (which must come back through the reverse NAT); the peer address or "".
std::string UdpVia(Listeners& l, const std::string& client_ns, const std::string& ip, uint16_t port);

// UDP payload bytes per second that reach `to_addr` (an IPv4 address in the namespace at `to_ns`) over
// 1.5 s, counted after 0.3 s (which drains a token bucket's burst), while a sender in `from_ns` offers
// `offered` payload bytes per second in datagrams of kUdpPayload bytes. UDP, not TCP: with no congestion
// control the bucket alone decides what passes, so the figure measures the shaper, not TCP's backoff.
constexpr size_t kUdpPayload = 1400;  // one frame per datagram on a 1500-byte MTU
double MeasureUdpBytesPerSecond(const std::string& from_ns, const std::string& to_ns, const std::string& to_addr,
                                double offered);

}  // namespace netiface::testing
