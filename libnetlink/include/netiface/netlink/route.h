// Routes in the main table (or another). Acts in the socket's namespace.
#pragma once

#include <optional>
#include <vector>

#include "netiface/cni/ip.h"
#include "netiface/netlink/socket.h"

namespace netiface::nl {

struct RouteSpec {
  cni::IpNet dst;  // network (host bits are cleared by the kernel's rules: pass a network)
  std::optional<cni::IpAddr> gw;
  int ifindex = 0;                 // output interface (0: let the kernel pick from gw)
  int scope = -1;                  // RT_SCOPE_*; -1: universe with gw, link without
  bool onlink = false;             // RTNH_F_ONLINK
  std::optional<cni::IpAddr> src;  // preferred source
  int table = 0;                   // 0: main
  int priority = 0;                // metric
  int mtu = 0;
  int advmss = 0;
  // RTPROT_*; 0: RTPROT_BOOT on add and any protocol on delete. Non-zero: set on add, and a delete
  // only matches a route of this protocol.
  int protocol = 0;
};

enum class AddRouteOutcome { kAdded, kExists };
// Adds the route. An identical route (same dst/table/priority) already present yields kExists
// (the caller decides whether the existing one is acceptable). Other failures throw cni::Error(kNetlink).
AddRouteOutcome AddRoute(Socket& s, const RouteSpec& r);
// Adds or replaces (NLM_F_REPLACE).
void ReplaceRoute(Socket& s, const RouteSpec& r);
// Returns false when no such route existed.
bool DeleteRoute(Socket& s, const RouteSpec& r);

struct RouteInfo {
  cni::IpNet dst;
  std::optional<cni::IpAddr> gw;
  int ifindex = 0;
  int scope = 0;
  int table = 0;
  int priority = 0;
  int protocol = 0;
};
// Unicast routes of the main table (or `table`) for a family (AF_INET, AF_INET6, AF_UNSPEC).
std::vector<RouteInfo> ListRoutes(Socket& s, int family, int table = 0);

}  // namespace netiface::nl
