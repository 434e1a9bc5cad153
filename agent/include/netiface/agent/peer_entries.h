// What the other nodes' leases need in this node's kernel, as values: per peer, permanent neighbour
// entries and FDB entries (on the backend's own devices) and routes (tagged with the agent's protocol).
// Every backend plans a peer into PeerEntries; one planner (this file) and one programmer
// (peer_programmer.h) turn them into kernel changes, so host-gw and vxlan share the same rules of
// ownership, ordering and all-or-nothing per peer.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "netiface/agent/lease.h"
#include "netiface/netlink/neigh.h"
#include "netiface/netlink/route.h"

namespace netiface::agent {

struct PeerEntries {
  std::vector<nl::NeighSpec> neighs;
  std::vector<nl::FdbSpec> fdbs;
  std::vector<nl::RouteSpec> routes;
  bool empty() const { return neighs.empty() && fdbs.empty() && routes.empty(); }
};

// What a reconcile must set for one peer: entries missing or different. Routes split by how they are
// written: `routes_add` (no route to that destination: create-exclusive), `routes_replace` (ours, with
// another next hop).
struct PeerChanges {
  std::vector<nl::NeighSpec> neighs;
  std::vector<nl::FdbSpec> fdbs;
  std::vector<nl::RouteSpec> routes_add;
  std::vector<nl::RouteSpec> routes_replace;
  bool empty() const { return neighs.empty() && fdbs.empty() && routes_add.empty() && routes_replace.empty(); }
};

// The kernel as a reconcile reads it: the main table's routes (any protocol, both families), and the
// permanent neighbour and FDB entries of the backend's own devices (all of them are the backend's).
struct ObservedEntries {
  std::vector<nl::RouteInfo> routes;
  std::vector<nl::NeighSpec> neighs;
  std::vector<nl::FdbSpec> fdbs;
};

struct ReconcilePlan {
  std::map<SubnetKey, PeerChanges> set;  // peers with something to set (only those)
  PeerEntries remove;                    // the backend's entries no peer wants: routes of our protocol,
                                         // neighbours and FDB entries of our devices
  // Peers left out entirely because a route they need is held by a route of another protocol (never
  // touched): "10.5.2.0/24 is held by a route of protocol 4 via 192.0.2.77 (peer 10.5.2.0-24)". Their
  // neighbour and FDB entries are not wanted either: a peer is programmed whole or not at all.
  std::vector<std::string> conflicts;
};

// Pure. Makes the kernel exactly `desired`: a destination wanted by two peers goes to the first (in key
// order), a route of our protocol with another gateway or device is replaced, an FDB entry for a peer's
// MAC with another destination is removed and the right one set.
ReconcilePlan PlanReconcile(const std::map<SubnetKey, PeerEntries>& desired, const ObservedEntries& observed,
                            int protocol);

}  // namespace netiface::agent
