// Applies PeerEntries to the kernel for a backend: per peer, all or nothing, in the order that keeps a
// peer's traffic correct (neighbour, FDB, then route; removal in reverse), touching only routes of the
// agent's protocol and entries of the backend's own devices.
#pragma once

#include <map>
#include <set>
#include <string>
#include <vector>

#include "netiface/agent/peer_entries.h"
#include "netiface/netlink/socket.h"

namespace netiface::agent {

class PeerProgrammer {
 public:
  // `name` prefixes the log lines ("vxlan", "host-gw"). The socket must outlive the programmer.
  PeerProgrammer(nl::Socket& socket, int protocol, std::string name);

  // The devices whose permanent neighbour and FDB entries belong to the backend (a reconcile removes what
  // no peer wants there). A device that changed index drops what was recorded on the old one.
  void SetDevices(std::vector<int> ifindexes);
  // Learns which destinations already carry our protocol (after a restart, before the first reconcile),
  // so that Set replaces our own routes and never a foreign one. Throws cni::Error on a failed dump.
  void LoadRoutes();

  // Makes the kernel hold exactly `entries` for peer `key` (what it had before and no longer needs is
  // removed). On any failure, everything of that peer is removed again and cni::Error is thrown: a
  // destination held by a route of another protocol is such a failure (that route is left alone).
  void Set(const SubnetKey& key, const PeerEntries& entries);
  // Removes what peer `key` has, and `hint` too (what its lease needs: covers a restart that never Set it).
  void Remove(const SubnetKey& key, const PeerEntries& hint);
  // Reads the kernel once and makes it exactly `desired` (PlanReconcile). A peer whose changes the kernel
  // refuses is removed whole and logged (the next reconcile retries it). Throws only when a dump fails.
  // Returns the number of peers that failed.
  int Reconcile(const std::map<SubnetKey, PeerEntries>& desired);

 private:
  void SetRoute(const nl::RouteSpec& r, bool replace);
  void Undo(const PeerEntries& e, const char* what = nullptr);

  nl::Socket& s_;
  int protocol_;
  std::string name_;
  std::vector<int> devices_;
  std::map<SubnetKey, PeerEntries> installed_;
  std::set<cni::IpNet> our_routes_;  // destinations holding a route of our protocol
};

}  // namespace netiface::agent
