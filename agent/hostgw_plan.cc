#include "netiface/agent/hostgw.h"

namespace netiface::agent {

std::optional<nl::RouteSpec> HostGwRoute(const Lease& peer, int uplink_ifindex, int protocol, std::string* why) {
  auto fail = [&](std::string reason) -> std::optional<nl::RouteSpec> {
    if (why != nullptr) *why = std::move(reason);
    return std::nullopt;
  };
  const std::string subnet = peer.subnet.v4.ToString();
  if (peer.attrs.backend_type != "host-gw") {
    return fail("lease " + subnet + " is of backend type \"" + peer.attrs.backend_type + "\", not host-gw");
  }
  if (!peer.attrs.public_ip) return fail("lease " + subnet + " has no PublicIP");
  if (!peer.attrs.public_ip->is_v4()) {
    return fail("lease " + subnet + " has a PublicIP that is not IPv4: " + peer.attrs.public_ip->ToString());
  }
  if (!peer.subnet.v4.addr().is_v4()) return fail("lease " + subnet + " is not an IPv4 subnet");
  nl::RouteSpec r;
  r.dst = peer.subnet.v4.Network();
  r.gw = peer.attrs.public_ip;
  r.ifindex = uplink_ifindex;
  r.protocol = protocol;
  return r;
}

std::optional<PeerEntries> HostGwEntries(const Lease& peer, int uplink_ifindex, int protocol, bool ipv6,
                                         std::string* why) {
  auto v4 = HostGwRoute(peer, uplink_ifindex, protocol, why);
  if (!v4) return std::nullopt;
  PeerEntries e;
  e.routes.push_back(*v4);
  if (ipv6 && peer.subnet.v6 && peer.attrs.public_ipv6 && !peer.attrs.public_ipv6->is_v4()) {
    e.routes.push_back(nl::RouteSpec{.dst = peer.subnet.v6->Network(),
                                     .gw = peer.attrs.public_ipv6,
                                     .ifindex = uplink_ifindex,
                                     .protocol = protocol});
  }
  return e;
}

}  // namespace netiface::agent
