#include "netiface/agent/hostgw.h"

#include <map>
#include <set>

namespace netiface::agent {
namespace {

bool SameNexthop(const nl::RouteSpec& want, const nl::RouteInfo& have) {
  return want.gw == have.gw && (want.ifindex == 0 || want.ifindex == have.ifindex);
}

}  // namespace

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

RouteDiff DiffRoutes(const std::vector<nl::RouteSpec>& desired, const std::vector<nl::RouteInfo>& observed,
                     int protocol) {
  RouteDiff diff;
  // The observed routes by destination, ours and foreign apart (the first of each): one pass, so that a
  // reconcile costs O(n log n) in the number of routes, not O(n^2).
  std::map<cni::IpNet, const nl::RouteInfo*> ours_by_dst, foreign_by_dst;
  for (const auto& o : observed) {
    auto& index = o.protocol == protocol ? ours_by_dst : foreign_by_dst;
    index.emplace(o.dst.Network(), &o);
  }
  std::set<cni::IpNet> wanted;
  for (const auto& d : desired) {
    const cni::IpNet dst = d.dst.Network();
    if (!wanted.insert(dst).second) continue;  // the first lease of a destination wins
    auto ours = ours_by_dst.find(dst);
    auto foreign = foreign_by_dst.find(dst);
    if (ours != ours_by_dst.end()) {
      if (!SameNexthop(d, *ours->second)) diff.replace.push_back(d);
    } else if (foreign != foreign_by_dst.end()) {
      const nl::RouteInfo& f = *foreign->second;
      std::string c = dst.ToString() + " is held by a route of protocol " + std::to_string(f.protocol);
      if (f.gw) c += " via " + f.gw->ToString();
      diff.conflicts.push_back(std::move(c));
    } else {
      diff.add.push_back(d);
    }
  }
  for (const auto& o : observed) {
    if (o.protocol != protocol || wanted.count(o.dst.Network()) != 0) continue;
    nl::RouteSpec r;
    r.dst = o.dst.Network();
    r.gw = o.gw;
    r.ifindex = o.ifindex;
    r.priority = o.priority;
    r.protocol = protocol;
    diff.remove.push_back(r);
  }
  return diff;
}

}  // namespace netiface::agent
