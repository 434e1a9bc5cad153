#include "netiface/agent/peer_entries.h"

#include <set>
#include <tuple>

namespace netiface::agent {
namespace {

using NeighKey = std::pair<int, cni::IpAddr>;                   // (ifindex, dst)
using FdbKey = std::pair<int, std::string>;                     // (ifindex, mac)
using FdbEntryKey = std::tuple<int, std::string, cni::IpAddr>;  // (ifindex, mac, dst)

bool SameNexthop(const nl::RouteSpec& want, const nl::RouteInfo& have) {
  return want.gw == have.gw && (want.ifindex == 0 || want.ifindex == have.ifindex);
}

nl::RouteSpec Removal(const nl::RouteInfo& o, int protocol) {
  return nl::RouteSpec{
      .dst = o.dst.Network(), .gw = o.gw, .ifindex = o.ifindex, .priority = o.priority, .protocol = protocol};
}

}  // namespace

ReconcilePlan PlanReconcile(const std::map<SubnetKey, PeerEntries>& desired, const ObservedEntries& observed,
                            int protocol) {
  ReconcilePlan plan;
  // Indexes of what is there, one pass each: a reconcile costs O(n log n) in the number of entries.
  std::map<cni::IpNet, const nl::RouteInfo*> ours, foreign;
  for (const auto& o : observed.routes) (o.protocol == protocol ? ours : foreign).emplace(o.dst.Network(), &o);
  std::map<NeighKey, std::string> neighs;
  for (const auto& n : observed.neighs) neighs.emplace(NeighKey{n.ifindex, n.dst}, n.mac);
  std::set<FdbEntryKey> fdbs;
  for (const auto& f : observed.fdbs) fdbs.emplace(f.ifindex, f.mac, f.dst);

  std::set<cni::IpNet> wanted_routes;
  std::set<NeighKey> wanted_neighs;
  std::map<FdbKey, cni::IpAddr> wanted_fdbs;
  for (const auto& [key, entries] : desired) {
    // A peer is planned whole or not at all: a destination another protocol holds, or that an earlier
    // peer has, leaves it out.
    std::string conflict;
    for (const auto& r : entries.routes) {
      const cni::IpNet dst = r.dst.Network();
      auto f = foreign.find(dst);
      if (wanted_routes.count(dst) != 0) {
        conflict = dst.ToString() + " is routed to an earlier peer";
      } else if (ours.count(dst) == 0 && f != foreign.end()) {
        conflict = dst.ToString() + " is held by a route of protocol " + std::to_string(f->second->protocol);
        if (f->second->gw) conflict += " via " + f->second->gw->ToString();
      }
      if (!conflict.empty()) break;
    }
    if (!conflict.empty()) {
      plan.conflicts.push_back(conflict + " (peer " + FormatSubnetKey(key) + ")");
      continue;
    }
    PeerChanges c;
    for (const auto& n : entries.neighs) {
      NeighKey k{n.ifindex, n.dst};
      wanted_neighs.insert(k);
      auto it = neighs.find(k);
      if (it == neighs.end() || it->second != n.mac) c.neighs.push_back(n);
    }
    for (const auto& f : entries.fdbs) {
      wanted_fdbs.emplace(FdbKey{f.ifindex, f.mac}, f.dst);
      if (fdbs.count(FdbEntryKey{f.ifindex, f.mac, f.dst}) == 0) c.fdbs.push_back(f);
    }
    for (const auto& r : entries.routes) {
      const cni::IpNet dst = r.dst.Network();
      wanted_routes.insert(dst);
      auto o = ours.find(dst);
      if (o == ours.end()) {
        c.routes_add.push_back(r);
      } else if (!SameNexthop(r, *o->second)) {
        c.routes_replace.push_back(r);
      }
    }
    if (!c.empty()) plan.set.emplace(key, std::move(c));
  }

  for (const auto& o : observed.routes) {
    if (o.protocol == protocol && wanted_routes.count(o.dst.Network()) == 0)
      plan.remove.routes.push_back(Removal(o, protocol));
  }
  for (const auto& n : observed.neighs) {
    if (wanted_neighs.count(NeighKey{n.ifindex, n.dst}) == 0) plan.remove.neighs.push_back(n);
  }
  for (const auto& f : observed.fdbs) {
    auto it = wanted_fdbs.find(FdbKey{f.ifindex, f.mac});
    if (it == wanted_fdbs.end() || it->second != f.dst) plan.remove.fdbs.push_back(f);
  }
  return plan;
}

}  // namespace netiface::agent
