// Interface addresses. Acts in the socket's namespace.
#pragma once

#include <chrono>
#include <optional>
#include <vector>

#include "netiface/cni/ip.h"
#include "netiface/netlink/socket.h"

namespace netiface::nl {

struct AddrInfo {
  int ifindex = 0;
  cni::IpNet local;  // address with prefix length
  int scope = 0;     // RT_SCOPE_*
  int flags = 0;     // IFA_F_*
};

// Adds `addr` to the link. nodad sets IFA_F_NODAD (v6). An identical address already present is fine.
void AddAddress(Socket& s, int ifindex, const cni::IpNet& addr, bool nodad = false);
// Returns false when the address was not there.
bool DeleteAddress(Socket& s, int ifindex, const cni::IpNet& addr);
// family: AF_INET, AF_INET6 or AF_UNSPEC (both). ifindex 0 = every link.
std::vector<AddrInfo> ListAddresses(Socket& s, int ifindex, int family);

// Waits (polling every `poll`, bounded by timeout_ms) for a non-tentative IPv6 link-local address on
// the link; nullopt when none appeared in time. Without DAD the address appears within a fraction of a
// millisecond of carrier-up: a caller on that path polls faster than the default.
// Waits (polling every 20 ms, bounded by timeout_ms) until no IPv6 address of the link is tentative.
// Throws cni::Error(kNetlink) naming the address when DAD failed for one, and when addresses are still
// tentative at the deadline.
void WaitForDad(Socket& s, int ifindex, int timeout_ms);

std::optional<cni::IpAddr> WaitForLinkLocal(Socket& s, int ifindex, int timeout_ms,
                                            std::chrono::microseconds poll = std::chrono::milliseconds(5));

}  // namespace netiface::nl
