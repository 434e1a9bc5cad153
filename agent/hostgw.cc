// The host-gw backend: one route per remote host-gw lease through the uplink, tagged with the agent's
// route protocol. Its socket acts in the namespace current when MakeHostGwBackend was called.
#include "netiface/agent/hostgw.h"

#include <sys/socket.h>

#include "netiface/cni/error.h"
#include "netiface/cni/log.h"
#include "netiface/netlink/socket.h"

namespace netiface::agent {
namespace {

std::string Describe(const nl::RouteSpec& r) {
  return r.dst.ToString() + (r.gw ? " via " + r.gw->ToString() : std::string());
}

class HostGwBackend : public Backend {
 public:
  HostGwBackend(const Uplink& uplink, int protocol)
      : uplink_(uplink), protocol_(protocol), socket_(nl::Socket::Open()) {}

  std::string Type() const override { return "host-gw"; }
  nlohmann::json BackendData() const override { return nullptr; }
  int Mtu() const override { return uplink_.mtu; }

  void Setup(const Lease& own) override {
    own_ = own.subnet.v4.Network();
    if (installed_.count(*own_) != 0) Forget(*own_);  // it was a peer's subnet before
    log::Info("host-gw: own subnet {} on {} ({})", own_->ToString(), uplink_.name, uplink_.public_ip.ToString());
  }

  void AddPeer(const Lease& peer) override {
    auto route = RouteFor(peer);
    if (!route) {
      Forget(peer.subnet.v4.Network());  // it may have switched away from host-gw
      return;
    }
    auto it = installed_.find(route->dst);
    if (it == installed_.end()) {
      if (nl::AddRoute(socket_, *route) == nl::AddRouteOutcome::kExists) {
        log::Warn("host-gw: a route to {} that the agent did not install exists; leaving it (peer {})",
                  route->dst.ToString(), route->gw->ToString());
        return;
      }
      log::Info("host-gw: added route {}", Describe(*route));
      installed_.emplace(route->dst, *route);
    } else if (it->second.gw != route->gw || it->second.ifindex != route->ifindex) {
      nl::ReplaceRoute(socket_, *route);
      log::Info("host-gw: replaced route {} (was via {})", Describe(*route), it->second.gw->ToString());
      it->second = *route;
    }
  }

  void RemovePeer(const Lease& peer) override {
    const cni::IpNet dst = peer.subnet.v4.Network();
    warned_.erase(dst);
    if (own_ && dst == *own_) return;
    Forget(dst);
  }

  void Reconcile(const std::vector<Lease>& peers) override {
    std::vector<nl::RouteSpec> desired;
    for (const auto& p : peers) {
      if (auto r = RouteFor(p)) desired.push_back(*r);
    }
    const std::vector<nl::RouteInfo> observed = nl::ListRoutes(socket_, AF_INET);
    RouteDiff diff = DiffRoutes(desired, observed, protocol_);
    // The map is rebuilt from the one dump and what the changes below did.
    installed_.clear();
    for (const auto& r : observed) {
      if (r.protocol != protocol_) continue;
      installed_.emplace(r.dst.Network(),
                         nl::RouteSpec{.dst = r.dst.Network(), .gw = r.gw, .ifindex = r.ifindex, .protocol = protocol_});
    }
    std::vector<std::string> failures;
    auto attempt = [&](auto&& fn) {
      try {
        fn();
      } catch (const cni::Error& e) {
        failures.push_back(e.msg());
      }
    };
    for (const auto& c : diff.conflicts) log::Warn("host-gw: {}; leaving it", c);
    for (const auto& r : diff.remove) {
      attempt([&] {
        if (nl::DeleteRoute(socket_, r)) log::Info("host-gw: removed stale route {}", Describe(r));
        installed_.erase(r.dst);
      });
    }
    for (const auto& r : diff.replace) {
      attempt([&] {
        nl::ReplaceRoute(socket_, r);
        log::Info("host-gw: corrected route {}", Describe(r));
        installed_[r.dst] = r;
      });
    }
    for (const auto& r : diff.add) {
      attempt([&] {
        if (nl::AddRoute(socket_, r) == nl::AddRouteOutcome::kExists) {
          log::Warn("host-gw: a route to {} appeared meanwhile; leaving it", r.dst.ToString());
          return;
        }
        log::Info("host-gw: re-added route {}", Describe(r));
        installed_[r.dst] = r;
      });
    }
    // A peer the kernel refuses (its gateway not on-link, ...) must not keep the node from being ready:
    // flanneld logs these too. They are retried at the next reconcile; a failed dump throws above.
    for (const auto& f : failures) log::Warn("host-gw reconcile: {}", f);
  }

 private:
  // The route `peer` needs; nullopt (warned once per lease) when it needs none from us.
  std::optional<nl::RouteSpec> RouteFor(const Lease& peer) {
    const cni::IpNet dst = peer.subnet.v4.Network();
    if (own_ && dst == *own_) return std::nullopt;
    std::string why;
    auto r = HostGwRoute(peer, uplink_.ifindex, protocol_, &why);
    if (r) {
      warned_.erase(dst);
      return r;
    }
    auto [it, fresh] = warned_.emplace(dst, why);
    if (fresh || it->second != why) {
      it->second = why;
      log::Warn("host-gw: skipping {}", why);
    }
    return std::nullopt;
  }

  // Deletes our route to `dst`, if the kernel has one (a route of another protocol is never touched).
  void Forget(const cni::IpNet& dst) {
    installed_.erase(dst);
    nl::RouteSpec r{.dst = dst, .protocol = protocol_};
    if (nl::DeleteRoute(socket_, r)) log::Info("host-gw: removed route to {}", dst.ToString());
  }

  Uplink uplink_;
  int protocol_;
  nl::Socket socket_;
  std::optional<cni::IpNet> own_;
  std::map<cni::IpNet, nl::RouteSpec> installed_;  // what we installed, by destination
  std::map<cni::IpNet, std::string> warned_;       // leases skipped, with the reason last logged
};

}  // namespace

std::unique_ptr<Backend> MakeHostGwBackend(const Uplink& uplink, int protocol) {
  return std::make_unique<HostGwBackend>(uplink, protocol);
}

int RemoveAgentRoutes(int protocol) {
  nl::Socket s = nl::Socket::Open();
  int removed = 0;
  for (const auto& r : nl::ListRoutes(s, AF_UNSPEC)) {
    if (r.protocol != protocol) continue;
    nl::RouteSpec spec{.dst = r.dst.Network(), .gw = r.gw, .ifindex = r.ifindex, .priority = r.priority,
                       .protocol = protocol};
    if (nl::DeleteRoute(s, spec)) ++removed;
  }
  return removed;
}

}  // namespace netiface::agent
