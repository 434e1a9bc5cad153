#include "netiface/agent/vxlan.h"

#include <linux/rtnetlink.h>
#include <sys/socket.h>

#include <algorithm>
#include <regex>

#include <fmt/ranges.h>

#include "netiface/agent/peer_programmer.h"
#include "netiface/cni/error.h"
#include "netiface/cni/log.h"
#include "netiface/netlink/addr.h"
#include "netiface/netlink/link.h"
#include "netiface/netlink/vxlan.h"

namespace netiface::agent {
namespace {

// One family's device: what it must be, and what it is.
struct Device {
  nl::VxlanSpec spec;
  int ifindex = 0;
};

class VxlanBackend : public Backend {
 public:
  VxlanBackend(const Uplink& uplink, const VxlanConfig& cfg, bool ipv6, int protocol)
      : uplink_(uplink), cfg_(cfg), socket_(nl::Socket::Open()), programmer_(socket_, protocol, "vxlan") {
    v4_.spec = SpecFor(false, uplink.public_ip);
    if (ipv6) v6_ = Device{SpecFor(true, *uplink.public_ipv6), 0};
    local_.vni = cfg.vni;
    local_.uplink_ifindex = uplink.ifindex;
    local_.uplink_net = uplink.net.value_or(cni::IpNet::Host(uplink.public_ip));
    local_.uplink_net6 = uplink.net6;
    local_.direct_routing = cfg.direct_routing;
    local_.protocol = protocol;
  }

  std::string Type() const override { return "vxlan"; }
  nlohmann::json BackendData() const override { return VxlanBackendData(cfg_.vni, v4_.spec.mac); }
  nlohmann::json BackendV6Data() const override {
    return v6_ ? VxlanBackendData(cfg_.vni, v6_->spec.mac) : nlohmann::json(nullptr);
  }
  // Pods must fit the smaller of the two tunnels.
  int Mtu() const override { return v6_ ? std::min(v4_.spec.mtu, v6_->spec.mtu) : v4_.spec.mtu; }

  void Setup(const Lease& own) override {
    own_ = own.subnet;
    programmer_.LoadRoutes();
    programmer_.Remove(own.subnet, PeerEntries{});  // our subnet may have been a peer's before
    log::Info("vxlan: own subnet {}, VNI {}, VTEP {} on {}", FormatSubnetKey(own.subnet), cfg_.vni,
              uplink_.public_ip.ToString(), uplink_.name);
    EnsureDevices();
  }

  void AddPeer(const Lease& peer) override {
    if (!devices_ok_) EnsureDevices();
    auto entries = EntriesFor(peer);
    if (!entries) {
      programmer_.Remove(peer.subnet, PeerEntries{});
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
    EnsureDevices();
    std::map<SubnetKey, PeerEntries> desired;
    for (const auto& p : peers) {
      if (auto e = EntriesFor(p)) desired.emplace(p.subnet, std::move(*e));
    }
    programmer_.Reconcile(desired);
  }

 private:
  nl::VxlanSpec SpecFor(bool ipv6, const cni::IpAddr& local) const {
    nl::VxlanSpec s;
    s.name = VxlanDeviceName(cfg_.vni, ipv6);
    s.vni = cfg_.vni;
    s.local = local;
    s.lower_ifindex = uplink_.ifindex;
    s.port = cfg_.port;
    s.learning = false;
    s.gbp = cfg_.gbp;
    s.mtu = VxlanMtu(cfg_, uplink_.mtu, ipv6);
    s.mac = StableVtepMac(local, cfg_.vni);
    return s;
  }

  // Makes both devices what they must be; a device that is missing or differs is (re-)created, and its
  // peers' entries come back with the reconcile that follows (the plan names the new ifindex).
  void EnsureDevices() {
    devices_ok_ = false;
    if (!own_) return;
    Ensure(v4_, cni::IpNet::Host(own_->v4.Network().addr()));
    local_.device_ifindex = v4_.ifindex;
    std::vector<int> devices = {v4_.ifindex};
    if (v6_ && own_->v6) {
      Ensure(*v6_, cni::IpNet::Host(own_->v6->Network().addr()));
      local_.device6_ifindex = v6_->ifindex;
      devices.push_back(v6_->ifindex);
    }
    programmer_.SetDevices(devices);
    devices_ok_ = true;
  }

  void Ensure(Device& d, const cni::IpNet& address) {
    const std::string& name = d.spec.name;
    auto have = nl::FindVxlan(socket_, name);
    if (have) {
      auto diffs = nl::VxlanDifferences(d.spec, *have);
      if (!diffs.empty()) {
        log::Warn("vxlan: {} differs in {}: re-creating it", name, fmt::join(diffs, ", "));
        nl::DeleteLink(socket_, name);
        have.reset();
      }
    }
    if (!have) {
      nl::CreateVxlan(socket_, d.spec);
      have = nl::FindVxlan(socket_, name);
      if (!have) throw cni::Error(cni::kNetlink, "vxlan device " + name + " vanished right after it was created");
      log::Info("vxlan: created {} (VNI {}, local {}, MAC {}, MTU {})", name, d.spec.vni, d.spec.local->ToString(),
                have->mac, have->mtu);
    }
    if (d.ifindex != 0 && d.ifindex != have->index) {
      log::Warn("vxlan: {} was re-created (index {} -> {}): every peer's entries are re-added", name, d.ifindex,
                have->index);
    }
    d.ifindex = have->index;
    // Exactly one global address of the family: the subnet's network address as a host route.
    const int family = address.addr().is_v4() ? AF_INET : AF_INET6;
    bool present = false;
    for (const auto& a : nl::ListAddresses(socket_, d.ifindex, family)) {
      if (a.scope != RT_SCOPE_UNIVERSE) continue;
      if (a.local == address) {
        present = true;
      } else {
        nl::DeleteAddress(socket_, d.ifindex, a.local);
        log::Info("vxlan: removed address {} from {}", a.local.ToString(), name);
      }
    }
    if (!present) nl::AddAddress(socket_, d.ifindex, address, /*nodad=*/true);
    if (!have->admin_up) nl::SetLinkUp(socket_, name);
  }

  std::optional<PeerEntries> EntriesFor(const Lease& peer) {
    if (own_ && peer.subnet == *own_) return std::nullopt;
    std::string why;
    auto e = VxlanEntries(peer, local_, &why);
    if (e) {
      warned_.erase(peer.subnet);
      return e;
    }
    auto [it, fresh] = warned_.emplace(peer.subnet, why);
    if (fresh || it->second != why) {
      it->second = why;
      log::Warn("vxlan: skipping {}", why);
    }
    return std::nullopt;
  }

  Uplink uplink_;
  VxlanConfig cfg_;
  nl::Socket socket_;
  PeerProgrammer programmer_;
  Device v4_;
  std::optional<Device> v6_;
  VxlanLocal local_;
  bool devices_ok_ = false;
  std::optional<SubnetKey> own_;
  std::map<SubnetKey, std::string> warned_;
};

}  // namespace

std::unique_ptr<Backend> MakeVxlanBackend(const Uplink& uplink, const VxlanConfig& cfg, bool ipv6, int protocol) {
  if (ipv6 && !uplink.public_ipv6) throw std::invalid_argument("vxlan over IPv6 needs the uplink's public IPv6 address");
  return std::make_unique<VxlanBackend>(uplink, cfg, ipv6, protocol);
}

int RemoveVxlanDevices() {
  static const std::regex kName(R"(flannel(-v6)?\.[0-9]+)");
  nl::Socket s = nl::Socket::Open();
  int removed = 0;
  for (const auto& l : nl::ListLinks(s)) {
    if (l.kind != "vxlan" || !std::regex_match(l.name, kName)) continue;
    if (nl::DeleteLink(s, l.name)) ++removed;
  }
  return removed;
}

}  // namespace netiface::agent
