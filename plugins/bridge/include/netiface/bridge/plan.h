// What a bridge attachment should look like, computed from the config and the IPAM result (pure), and
// the comparisons CHECK makes against what the kernel reports (pure). The apply code in add.cc/check.cc
// only reads the kernel and carries these plans out.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "netiface/bridge/config.h"
#include "netiface/cni/ip.h"
#include "netiface/cni/result.h"
#include "netiface/netlink/addr.h"
#include "netiface/netlink/route.h"

namespace netiface::bridge {

// Index of the container interface in Result::interfaces: [bridge, host veth, container].
inline constexpr int kContainerIfaceIndex = 2;

struct Plan {
  // The IPAM result completed: with isGateway every IP has a gateway (IPAM's, or the subnet's first
  // address); with isDefaultGateway a default route via the gateway per family unless the result has one;
  // ips[].interface = 2; DNS from the config when set. `interfaces` is left empty for the apply step.
  cni::Result result;
  std::vector<cni::IpNet> container_addrs;
  // Routes for the container link (ifindex 0: the apply step sets it). A result route without a gateway
  // goes via its family's gateway, or straight out of the link when the family has none.
  std::vector<nl::RouteSpec> container_routes;
  // isGateway: each distinct gateway with its subnet's prefix, to be put on the bridge.
  std::vector<cni::IpNet> bridge_addrs;
  bool forward_v4 = false;  // isGateway with an IPv4 gateway: net.ipv4.ip_forward=1 on the host
  bool forward_v6 = false;  // isGateway with an IPv6 gateway: net.ipv6.conf.all.forwarding=1
  bool has_v4 = false;      // the container gets an IPv4 address
  bool has_v6 = false;      // the container gets an IPv6 address
};

Plan MakePlan(const Config& c, const cni::Result& ipam_result);

// The first gateway of each family among `ips`, used for result routes that have none.
struct FamilyGateways {
  std::optional<cni::IpAddr> v4, v6;
  const std::optional<cni::IpAddr>& For(int family) const;
};
FamilyGateways GatewaysOf(const std::vector<cni::IpConfig>& ips);

// The kernel route for a result route: dst as a network, gw as above, 1.1 attributes carried over.
nl::RouteSpec ToRouteSpec(const cni::Route& r, const FamilyGateways& gws);

struct BridgeAddrChanges {
  std::vector<cni::IpNet> remove;
  std::vector<cni::IpNet> add;
};
// How to get `wanted` onto the bridge given its `existing` addresses (link-local ones are ignored).
// An existing address with the same IP is kept whatever its prefix. Another IPv4 address, or an IPv6 one
// whose subnet overlaps, conflicts: with `force` it is removed, else cni::Error(kInvalidConfig) naming
// the bridge and both addresses.
BridgeAddrChanges PlanBridgeAddrs(const std::string& bridge, const std::vector<cni::IpNet>& existing,
                                  const std::vector<cni::IpNet>& wanted, bool force);

// CHECK: a description of every expected address not present among `actual` (same IP and prefix).
std::vector<std::string> MissingAddresses(const std::vector<cni::IpNet>& expected,
                                          const std::vector<cni::IpNet>& actual);
// CHECK: a description of every expected route with no match among `actual`: same destination network,
// and the same gateway when the result names one; a route without a gateway matches a route via the
// family's gateway or one without a gateway (that is how ADD installs it).
std::vector<std::string> MissingRoutes(const std::vector<cni::Route>& expected, const FamilyGateways& gws,
                                       const std::vector<nl::RouteInfo>& actual);

}  // namespace netiface::bridge
