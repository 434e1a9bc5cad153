#include "netiface/agent/vxlan.h"

#include <linux/rtnetlink.h>
#include <sys/socket.h>

#include <algorithm>
#include <regex>

#include <fmt/ranges.h>

#include "netiface/agent/peer_backend.h"
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

class VxlanBackend : public PeerBackend {
 public:
  VxlanBackend(const Uplink& uplink, const VxlanConfig& cfg, bool ipv6, int protocol)
      : PeerBackend("vxlan", protocol), uplink_(uplink), cfg_(cfg) {
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
    log::Info("vxlan: own subnet {}, VNI {}, VTEP {} on {}", FormatSubnetKey(own.subnet), cfg_.vni,
              uplink_.public_ip.ToString(), uplink_.name);
    PeerBackend::Setup(own);
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

  std::optional<PeerEntries> Plan(const Lease& peer, std::string* why) override {
    return VxlanEntries(peer, local_, why);
  }

  // Makes both devices what they must be; a device that is missing or differs is (re-)created, and its
  // peers' entries come back with the reconcile that follows (the plan names the new ifindex).
  void PrepareDevices(bool always) override {
    if (devices_ok_ && !always) return;
    devices_ok_ = false;
    const std::optional<SubnetKey>& own = this->own();
    if (!own) return;
    Ensure(v4_, cni::IpNet::Host(own->v4.Network().addr()));
    local_.device_ifindex = v4_.ifindex;
    std::vector<int> devices = {v4_.ifindex};
    if (v6_ && own->v6) {
      Ensure(*v6_, cni::IpNet::Host(own->v6->Network().addr()));
      local_.device6_ifindex = v6_->ifindex;
      devices.push_back(v6_->ifindex);
    }
    programmer().SetDevices(devices);
    devices_ok_ = true;
  }

  void Ensure(Device& d, const cni::IpNet& address) {
    const std::string& name = d.spec.name;
    auto have = nl::FindVxlan(socket(), name);
    if (have) {
      auto diffs = nl::VxlanDifferences(d.spec, *have);
      if (!diffs.empty()) {
        log::Warn("vxlan: {} differs in {}: re-creating it", name, fmt::join(diffs, ", "));
        nl::DeleteLink(socket(), name);
        have.reset();
      }
    }
    if (!have) {
      nl::CreateVxlan(socket(), d.spec);
      have = nl::FindVxlan(socket(), name);
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
    for (const auto& a : nl::ListAddresses(socket(), d.ifindex, family)) {
      if (a.scope != RT_SCOPE_UNIVERSE) continue;
      if (a.local == address) {
        present = true;
      } else {
        nl::DeleteAddress(socket(), d.ifindex, a.local);
        log::Info("vxlan: removed address {} from {}", a.local.ToString(), name);
      }
    }
    if (!present) nl::AddAddress(socket(), d.ifindex, address, /*nodad=*/true);
    if (!have->admin_up) nl::SetLinkUp(socket(), name);
  }

  Uplink uplink_;
  VxlanConfig cfg_;
  Device v4_;
  std::optional<Device> v6_;
  VxlanLocal local_;
  bool devices_ok_ = false;
};

}  // namespace

std::unique_ptr<Backend> MakeVxlanBackend(const Uplink& uplink, const VxlanConfig& cfg, bool ipv6, int protocol) {
  if (ipv6 && !uplink.public_ipv6)
    throw std::invalid_argument("vxlan over IPv6 needs the uplink's public IPv6 address");
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
