#include "netiface/agent/peer_programmer.h"

#include <sys/socket.h>

#include <algorithm>

#include "netiface/cni/error.h"
#include "netiface/cni/fault.h"
#include "netiface/cni/log.h"

namespace netiface::agent {
namespace {

std::string Describe(const nl::RouteSpec& r) {
  return r.dst.ToString() + (r.gw ? " via " + r.gw->ToString() : std::string()) + " dev #" + std::to_string(r.ifindex);
}

bool HasNeigh(const PeerEntries& e, const nl::NeighSpec& n) {
  return std::any_of(e.neighs.begin(), e.neighs.end(),
                     [&](const nl::NeighSpec& x) { return x.ifindex == n.ifindex && x.dst == n.dst; });
}
bool HasFdb(const PeerEntries& e, const nl::FdbSpec& f) {
  return std::any_of(e.fdbs.begin(), e.fdbs.end(),
                     [&](const nl::FdbSpec& x) { return x.ifindex == f.ifindex && x.mac == f.mac && x.dst == f.dst; });
}
bool HasRoute(const PeerEntries& e, const nl::RouteSpec& r) {
  return std::any_of(e.routes.begin(), e.routes.end(),
                     [&](const nl::RouteSpec& x) { return x.dst.Network() == r.dst.Network(); });
}

// The entries of `a` that `b` does not have (routes by destination, neighbours by device and address,
// FDB entries whole).
PeerEntries Minus(const PeerEntries& a, const PeerEntries& b) {
  PeerEntries out;
  for (const auto& r : a.routes) {
    if (!HasRoute(b, r)) out.routes.push_back(r);
  }
  for (const auto& f : a.fdbs) {
    if (!HasFdb(b, f)) out.fdbs.push_back(f);
  }
  for (const auto& n : a.neighs) {
    if (!HasNeigh(b, n)) out.neighs.push_back(n);
  }
  return out;
}

void Append(PeerEntries& to, const PeerEntries& more) {
  to.neighs.insert(to.neighs.end(), more.neighs.begin(), more.neighs.end());
  to.fdbs.insert(to.fdbs.end(), more.fdbs.begin(), more.fdbs.end());
  to.routes.insert(to.routes.end(), more.routes.begin(), more.routes.end());
}

}  // namespace

PeerProgrammer::PeerProgrammer(nl::Socket& socket, int protocol, std::string name)
    : s_(socket), protocol_(protocol), name_(std::move(name)) {}

void PeerProgrammer::SetDevices(std::vector<int> ifindexes) {
  std::sort(ifindexes.begin(), ifindexes.end());
  if (ifindexes == devices_) return;
  // Entries recorded on a device that is gone went with it (and so did the routes through it).
  for (auto& [key, e] : installed_) {
    auto gone = [&](int ifindex) { return !std::binary_search(ifindexes.begin(), ifindexes.end(), ifindex); };
    std::erase_if(e.neighs, [&](const nl::NeighSpec& n) { return gone(n.ifindex); });
    std::erase_if(e.fdbs, [&](const nl::FdbSpec& f) { return gone(f.ifindex); });
  }
  devices_ = std::move(ifindexes);
}

void PeerProgrammer::LoadRoutes() {
  our_routes_.clear();
  for (const auto& r : nl::ListRoutes(s_, AF_UNSPEC)) {
    if (r.protocol == protocol_) our_routes_.insert(r.dst.Network());
  }
}

void PeerProgrammer::SetRoute(const nl::RouteSpec& r, bool replace) {
  const cni::IpNet dst = r.dst.Network();
  if (replace || our_routes_.count(dst) != 0) {
    nl::ReplaceRoute(s_, r);
  } else if (nl::AddRoute(s_, r) == nl::AddRouteOutcome::kExists) {
    throw cni::Error(cni::kNetlink,
                     "a route to " + dst.ToString() + " that the agent did not install exists; leaving it");
  }
  our_routes_.insert(dst);
  cni::fault::Point("route " + dst.ToString());
}

// Best effort: each entry is tried whatever happened to the one before. `what` ("stale") logs each
// removal; without it only failures are logged.
void PeerProgrammer::Undo(const PeerEntries& e, const char* what) {
  auto attempt = [&](const std::string& entry, auto&& remove) {
    try {
      if (remove() && what != nullptr) log::Info("{}: removed {} {}", name_, what, entry);
    } catch (const cni::Error& err) {
      log::Warn("{}: removing {}: {}", name_, entry, err.msg());
    }
  };
  for (const auto& r : e.routes) {
    attempt("route " + Describe(r), [&] {
      // Matches only a route of our protocol: a foreign route of that destination stays.
      nl::RouteSpec del{.dst = r.dst.Network(), .protocol = protocol_};
      bool removed = nl::DeleteRoute(s_, del);
      our_routes_.erase(r.dst.Network());
      return removed;
    });
  }
  for (const auto& f : e.fdbs) {
    attempt("FDB entry " + f.mac + " dst " + f.dst.ToString(), [&] { return nl::DeleteFdb(s_, f); });
  }
  for (const auto& n : e.neighs) {
    attempt("neighbour " + n.dst.ToString(), [&] { return nl::DeleteNeighbor(s_, n); });
  }
}

void PeerProgrammer::Set(const SubnetKey& key, const PeerEntries& entries) {
  PeerEntries old;
  if (auto it = installed_.find(key); it != installed_.end()) old = it->second;
  try {
    // What the peer had and no longer needs goes first (a moved FDB destination: the old one out).
    Undo(Minus(old, entries));
    for (const auto& n : entries.neighs) nl::ReplaceNeighbor(s_, n);
    for (const auto& f : entries.fdbs) nl::ReplaceFdb(s_, f);
    for (const auto& r : entries.routes) SetRoute(r, false);
  } catch (const cni::Error& e) {
    installed_.erase(key);
    PeerEntries all = entries;
    Append(all, old);
    Undo(all);
    throw;
  }
  bool changed = old.routes.size() != entries.routes.size() || old.neighs.size() != entries.neighs.size() ||
                 old.fdbs.size() != entries.fdbs.size();
  installed_[key] = entries;
  if (changed || old.empty()) {
    for (const auto& r : entries.routes) log::Info("{}: peer {}: route {}", name_, FormatSubnetKey(key), Describe(r));
  }
}

void PeerProgrammer::Remove(const SubnetKey& key, const PeerEntries& hint) {
  PeerEntries all = hint;
  if (auto it = installed_.find(key); it != installed_.end()) {
    Append(all, Minus(it->second, hint));
    installed_.erase(it);
  }
  Undo(all);
  if (!all.empty()) log::Info("{}: peer {} removed", name_, FormatSubnetKey(key));
}

int PeerProgrammer::Reconcile(const std::map<SubnetKey, PeerEntries>& desired) {
  ObservedEntries observed;
  observed.routes = nl::ListRoutes(s_, AF_UNSPEC);
  for (int dev : devices_) {
    for (auto& n : nl::ListPermanentNeighbors(s_, dev)) observed.neighs.push_back(std::move(n));
    for (auto& f : nl::ListFdb(s_, dev)) observed.fdbs.push_back(std::move(f));
  }
  ReconcilePlan plan = PlanReconcile(desired, observed, protocol_);
  our_routes_.clear();
  for (const auto& r : observed.routes) {
    if (r.protocol == protocol_) our_routes_.insert(r.dst.Network());
  }
  for (const auto& c : plan.conflicts) log::Warn("{}: {}; leaving it", name_, c);
  // Stale entries first: routes, then FDB, then neighbours (the reverse of adding).
  Undo(plan.remove, "stale");
  installed_.clear();
  for (const auto& [key, entries] : desired) installed_.emplace(key, entries);
  int failed = 0;
  for (const auto& [key, c] : plan.set) {
    try {
      for (const auto& n : c.neighs) nl::ReplaceNeighbor(s_, n);
      for (const auto& f : c.fdbs) nl::ReplaceFdb(s_, f);
      for (const auto& r : c.routes_replace) SetRoute(r, true);
      for (const auto& r : c.routes_add) SetRoute(r, false);
      log::Info("{}: peer {}: repaired {} neighbour, {} FDB, {} route entr{}", name_, FormatSubnetKey(key),
                c.neighs.size(), c.fdbs.size(), c.routes_add.size() + c.routes_replace.size(),
                c.routes_add.size() + c.routes_replace.size() == 1 ? "y" : "ies");
    } catch (const cni::Error& e) {
      ++failed;
      log::Warn("{}: peer {}: {}; removed its entries, retrying at the next reconcile", name_, FormatSubnetKey(key),
                e.msg());
      Undo(desired.at(key));
      installed_.erase(key);
    }
  }
  // Peers left out for a conflict hold nothing.
  for (auto it = installed_.begin(); it != installed_.end();) {
    bool routed = std::all_of(it->second.routes.begin(), it->second.routes.end(),
                              [&](const nl::RouteSpec& r) { return our_routes_.count(r.dst.Network()) != 0; });
    it = routed ? std::next(it) : installed_.erase(it);
  }
  return failed;
}

}  // namespace netiface::agent
