// A namespace's IPv4 forwarding switches as RTM_GETNETCONF reports them: read over netlink they cost
// no /proc/sys lookup, which in a namespace that has just been created is the slowest part of a
// sysctl write (the kernel compares its entry under /proc/sys/net with every other namespace's).
// Sysctls (sysctl.h) uses them to leave out a write that would change nothing.
#pragma once

#include <optional>
#include <string_view>

namespace netiface::nl {

class Socket;

// What RTM_GETNETCONF is asked for a sysctl key.
struct NetconfQuery {
  int family = 0;   // AF_INET
  int ifindex = 0;  // NETCONFA_IFINDEX_ALL or NETCONFA_IFINDEX_DEFAULT
  friend bool operator==(const NetconfQuery&, const NetconfQuery&) = default;
};

// The query that reads `key` ("net/ipv4/ip_forward", "net/ipv4/conf/all/forwarding",
// "net/ipv4/conf/default/forwarding"), or nullopt. Only keys whose write of the value they already
// have is a no-op in the kernel are mapped: IPv6's all.forwarding is not (writing it resets every
// interface's own forwarding), per-interface keys are not (they would need the interface's index).
std::optional<NetconfQuery> NetconfQueryFor(std::string_view key);

// NETCONFA_FORWARDING for the query, nullopt when the kernel does not report it. Throws
// cni::Error(kNetlink) when the request fails.
std::optional<int> NetconfForwarding(Socket& s, const NetconfQuery& q);

}  // namespace netiface::nl
