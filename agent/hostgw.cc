// The host-gw backend: one route per remote host-gw lease and family through the uplink, tagged with the
// agent's route protocol. Its socket acts in the namespace current when MakeHostGwBackend was called.
#include "netiface/agent/hostgw.h"

#include <sys/socket.h>

#include "netiface/agent/peer_programmer.h"
#include "netiface/cni/log.h"
#include "netiface/netlink/socket.h"

namespace netiface::agent {
namespace {

class HostGwBackend : public Backend {
 public:
  HostGwBackend(const Uplink& uplink, bool ipv6, int protocol)
      : uplink_(uplink), ipv6_(ipv6), protocol_(protocol), socket_(nl::Socket::Open()),
        programmer_(socket_, protocol, "host-gw") {}

  std::string Type() const override { return "host-gw"; }
  nlohmann::json BackendData() const override { return nullptr; }
  nlohmann::json BackendV6Data() const override { return nullptr; }
  int Mtu() const override { return uplink_.mtu; }

  void Setup(const Lease& own) override {
    own_ = own.subnet;
    programmer_.LoadRoutes();
    // Our own subnet may have been a peer's before: no route to it.
    programmer_.Remove(own.subnet, PeerEntries{});
    log::Info("host-gw: own subnet {} on {} ({})", FormatSubnetKey(own.subnet), uplink_.name,
              uplink_.public_ip.ToString());
  }

  void AddPeer(const Lease& peer) override {
    auto entries = EntriesFor(peer);
    if (!entries) {
      programmer_.Remove(peer.subnet, PeerEntries{});  // it may have switched away from host-gw
      return;
    }
    programmer_.Set(peer.subnet, *entries);
  }

  void RemovePeer(const Lease& peer) override {
    warned_.erase(peer.subnet);
    if (own_ && peer.subnet == *own_) return;
    programmer_.Remove(peer.subnet, EntriesFor(peer).value_or(PeerEntries{}));
  }

  void Reconcile(const std::vector<Lease>& peers) override {
    std::map<SubnetKey, PeerEntries> desired;
    for (const auto& p : peers) {
      if (auto e = EntriesFor(p)) desired.emplace(p.subnet, std::move(*e));
    }
    programmer_.Reconcile(desired);
  }

 private:
  // What `peer` needs; nullopt (warned once per lease and reason) when it needs nothing from us.
  std::optional<PeerEntries> EntriesFor(const Lease& peer) {
    if (own_ && peer.subnet == *own_) return std::nullopt;
    std::string why;
    auto e = HostGwEntries(peer, uplink_.ifindex, protocol_, ipv6_, &why);
    if (e) {
      warned_.erase(peer.subnet);
      return e;
    }
    auto [it, fresh] = warned_.emplace(peer.subnet, why);
    if (fresh || it->second != why) {
      it->second = why;
      log::Warn("host-gw: skipping {}", why);
    }
    return std::nullopt;
  }

  Uplink uplink_;
  bool ipv6_;
  int protocol_;
  nl::Socket socket_;
  PeerProgrammer programmer_;
  std::optional<SubnetKey> own_;
  std::map<SubnetKey, std::string> warned_;  // leases skipped, with the reason last logged
};

}  // namespace

std::unique_ptr<Backend> MakeHostGwBackend(const Uplink& uplink, bool ipv6, int protocol) {
  return std::make_unique<HostGwBackend>(uplink, ipv6, protocol);
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
