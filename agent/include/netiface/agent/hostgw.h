// host-gw: one route "<subnet> via <peer public IP> dev <uplink>" per remote host-gw lease, tagged with
// the agent's route protocol so that only routes it made are ever replaced or removed.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "netiface/agent/backend.h"
#include "netiface/agent/peer_entries.h"
#include "netiface/netlink/route.h"

namespace netiface::agent {

// The protocol number on every route the agent installs (`ip route` shows "proto 78"). Not one of
// /etc/iproute2/rt_protos' registered values.
inline constexpr int kDefaultRouteProtocol = 78;

// Pure. The route a peer's lease needs; nullopt (with *why set) when the lease is not for us: another
// backend type, no public IP, or the peer's subnet is not IPv4.
std::optional<nl::RouteSpec> HostGwRoute(const Lease& peer, int uplink_ifindex, int protocol, std::string* why);

// Pure. Everything a host-gw peer needs: its IPv4 route (HostGwRoute) and, when this node runs IPv6 and
// the lease has an IPv6 subnet and a PublicIPv6, "<IPv6 subnet> via <PublicIPv6> dev <uplink>".
std::optional<PeerEntries> HostGwEntries(const Lease& peer, int uplink_ifindex, int protocol, bool ipv6,
                                         std::string* why);

// The backend acts in the network namespace current at this call (its netlink socket is opened here).
// Throws cni::Error(kNetlink) when the socket cannot be opened.
std::unique_ptr<Backend> MakeHostGwBackend(const Uplink& uplink, bool ipv6 = false,
                                           int protocol = kDefaultRouteProtocol);

// Deletes every IPv4 and IPv6 route of the main table carrying `protocol` (the cleanup command), in the
// current network namespace. Returns how many were deleted.
int RemoveAgentRoutes(int protocol = kDefaultRouteProtocol);

}  // namespace netiface::agent
