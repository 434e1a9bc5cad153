// The node's uplink: the interface whose address is this node's public IP, chosen as flanneld does.
#pragma once

#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "netiface/cni/ip.h"
#include "netiface/netlink/addr.h"
#include "netiface/netlink/link.h"
#include "netiface/netlink/route.h"

namespace netiface::agent {

struct Uplink {
  std::string name;
  int ifindex = 0;
  int mtu = 0;
  cni::IpAddr public_ip;  // IPv4
  // IPv6 (dual stack): --public-ipv6, else the link's first global IPv6 address; nullopt when the link has
  // none (the daemon refuses EnableIPv6 then).
  std::optional<cni::IpAddr> public_ipv6;
  std::optional<cni::IpNet> net;   // the link's address holding public_ip, with its prefix (DirectRouting)
  std::optional<cni::IpNet> net6;  // ... holding public_ipv6
};

struct UplinkQuery {
  std::vector<std::string> ifaces;         // --iface, repeatable: a name or an address, first match wins
  std::optional<cni::IpAddr> public_ip;    // --public-ip
  std::optional<cni::IpAddr> public_ipv6;  // --public-ipv6 (must be an address of the chosen link)
};

class UplinkError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Pure: --iface entries in order (a name: that link and its first global IPv4 address; an address: the
// link holding it); else the link holding --public-ip; else the link of the IPv4 default route with the
// lowest metric. With --public-ip and --iface both given, --public-ip must be an address of that link.
// The IPv6 side follows the chosen link: --public-ipv6 (an address of it), else its first global IPv6
// address, else none. Throws UplinkError saying what was looked for and not found.
Uplink SelectUplink(const UplinkQuery& q, const std::vector<nl::LinkInfo>& links,
                    const std::vector<nl::AddrInfo>& addrs, const std::vector<nl::RouteInfo>& routes);

// Reads links, addresses and routes of the current namespace and calls SelectUplink.
Uplink FindUplink(const UplinkQuery& q);

}  // namespace netiface::agent
