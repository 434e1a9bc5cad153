#include "netiface/agent/peer_programmer.h"

#include <sys/socket.h>

#include <algorithm>

#include "netiface/cni/error.h"
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
    throw cni::Error(cni::kNetlink, "a route to " + dst.ToString() + " that the agent did not install exists; leaving it");
  }
  our_routes_.insert(dst);
}

// Best effort: each entry is tried whatever happened to the one before.
void PeerProgrammer::Undo(const PeerEntries& e) {
  for (const auto& r : e.routes) {
    try {
      // Matches only a route of our protocol: a foreign route of that destination stays.
      nl::RouteSpec del{.dst = r.dst.Network(), .protocol = protocol_};
      nl::DeleteRoute(s_, del);
      our_routes_.erase(r.dst.Network());
    } catch (const cni::Error& err) {
      log::Warn("{}: removing route {}: {}", name_, Describe(r), err.msg());
    }
  }
  for (const auto& f : e.fdbs) {
    try {
      nl::DeleteFdb(s_, f);
    } catch (const cni::Error& err) {
      log::Warn("{}: removing FDB entry {} dst {}: {}", name_, f.mac, f.dst.ToString(), err.msg());
    }
  }
  for (const auto& n : e.neighs) {
    try {
      nl::DeleteNeighbor(s_, n);
    } catch (const cni::Error& err) {
      log::Warn("{}: removing neighbour {}: {}", name_, n.dst.ToString(), err.msg());
    }
  }
}

void PeerProgrammer::Set(const SubnetKey& key, const PeerEntries& entries) {
  PeerEntries old;
  if (auto it = installed_.find(key); it != installed_.end()) old = it->second;
  try {
    // What the peer had and no longer needs goes first (a moved FDB destination: the old one out).
    PeerEntries stale;
    for (const auto& r : old.routes) {
      if (!HasRoute(entries, r)) stale.routes.push_back(r);
    }
    for (const auto& f : old.fdbs) {
      if (!HasFdb(entries, f)) stale.fdbs.push_back(f);
    }
    for (const auto& n : old.neighs) {
      if (!HasNeigh(entries, n)) stale.neighs.push_back(n);
    }
    Undo(stale);
    for (const auto& n : entries.neighs) nl::ReplaceNeighbor(s_, n);
    for (const auto& f : entries.fdbs) nl::ReplaceFdb(s_, f);
    for (const auto& r : entries.routes) SetRoute(r, false);
  } catch (const cni::Error& e) {
    installed_.erase(key);
    PeerEntries all = entries;
    all.neighs.insert(all.neighs.end(), old.neighs.begin(), old.neighs.end());
    all.fdbs.insert(all.fdbs.end(), old.fdbs.begin(), old.fdbs.end());
    all.routes.insert(all.routes.end(), old.routes.begin(), old.routes.end());
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
    const PeerEntries& had = it->second;
    for (const auto& r : had.routes) {
      if (!HasRoute(all, r)) all.routes.push_back(r);
    }
    for (const auto& f : had.fdbs) {
      if (!HasFdb(all, f)) all.fdbs.push_back(f);
    }
    for (const auto& n : had.neighs) {
      if (!HasNeigh(all, n)) all.neighs.push_back(n);
    }
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
  for (const auto& r : plan.remove.routes) {
    try {
      if (nl::DeleteRoute(s_, r)) log::Info("{}: removed stale route {}", name_, Describe(r));
      our_routes_.erase(r.dst.Network());
    } catch (const cni::Error& e) {
      log::Warn("{}: removing stale route {}: {}", name_, Describe(r), e.msg());
    }
  }
  for (const auto& f : plan.remove.fdbs) {
    try {
      if (nl::DeleteFdb(s_, f)) log::Info("{}: removed stale FDB entry {} dst {}", name_, f.mac, f.dst.ToString());
    } catch (const cni::Error& e) {
      log::Warn("{}: removing stale FDB entry {}: {}", name_, f.mac, e.msg());
    }
  }
  for (const auto& n : plan.remove.neighs) {
    try {
      if (nl::DeleteNeighbor(s_, n)) log::Info("{}: removed stale neighbour {}", name_, n.dst.ToString());
    } catch (const cni::Error& e) {
      log::Warn("{}: removing stale neighbour {}: {}", name_, n.dst.ToString(), e.msg());
    }
  }
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
