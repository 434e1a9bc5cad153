#include "netiface/agent/vxlan_plan.h"

#define OPENSSL_SUPPRESS_DEPRECATED

#include <fmt/format.h>

#include "json_fold.h"
#include "netiface/cni/hash.h"
#include "netiface/cni/mac.h"

namespace netiface::agent {
namespace {

using internal::FindFold;

// An integer key in [lo, hi]; absent: `def`.
int64_t IntKey(const nlohmann::ordered_json& obj, const char* key, int64_t lo, int64_t hi, int64_t def) {
  const nlohmann::ordered_json* v = FindFold(obj, key);
  if (v == nullptr) return def;
  if (!v->is_number_integer() && !v->is_number_unsigned()) {
    throw ConfigError(fmt::format("Backend.{} {} is not an integer", key, v->dump()));
  }
  int64_t n = v->is_number_unsigned() ? static_cast<int64_t>(std::min<uint64_t>(v->get<uint64_t>(), INT64_MAX))
                                      : v->get<int64_t>();
  if (n < lo || n > hi) throw ConfigError(fmt::format("Backend.{} {} is outside {}..{}", key, n, lo, hi));
  return n;
}

bool BoolKey(const nlohmann::ordered_json& obj, const char* key) {
  const nlohmann::ordered_json* v = FindFold(obj, key);
  if (v == nullptr) return false;
  if (!v->is_boolean()) throw ConfigError(fmt::format("Backend.{} {} is not true or false", key, v->dump()));
  return v->get<bool>();
}

}  // namespace

VxlanConfig ParseVxlanConfig(const nlohmann::json& backend) {
  nlohmann::ordered_json obj = nlohmann::ordered_json::parse(backend.is_null() ? "{}" : backend.dump());
  if (!obj.is_object()) throw ConfigError("Backend " + backend.dump() + " is not an object");
  VxlanConfig c;
  c.vni = static_cast<uint32_t>(IntKey(obj, "VNI", 0, (1 << 24) - 1, 1));
  c.port = static_cast<int>(IntKey(obj, "Port", 0, 65535, 0));
  c.gbp = BoolKey(obj, "GBP");
  c.direct_routing = BoolKey(obj, "DirectRouting");
  c.mtu = static_cast<int>(IntKey(obj, "MTU", 0, 65535, 0));
  if (c.mtu != 0 && c.mtu < 68) throw ConfigError(fmt::format("Backend.MTU {} is below 68", c.mtu));
  return c;
}

std::string VxlanDeviceName(uint32_t vni, bool ipv6) {
  return (ipv6 ? "flannel-v6." : "flannel.") + std::to_string(vni);
}

int VxlanMtu(const VxlanConfig& cfg, int uplink_mtu, bool ipv6_underlay) {
  if (cfg.mtu > 0) return cfg.mtu;
  return uplink_mtu - (ipv6_underlay ? 70 : 50);
}

std::string StableVtepMac(const cni::IpAddr& public_ip, uint32_t vni) {
  std::string input = "netiface-vtep";
  input += '\0';
  input += public_ip.ToString();
  input += '\0';
  input += std::to_string(vni);
  std::vector<unsigned char> md = cni::Digest(cni::Hash::kSha256, input);
  md[0] = static_cast<unsigned char>((md[0] | 0x02) & ~0x01);  // locally administered, unicast
  return fmt::format("{:02x}:{:02x}:{:02x}:{:02x}:{:02x}:{:02x}", md[0], md[1], md[2], md[3], md[4], md[5]);
}

nlohmann::json VxlanBackendData(uint32_t vni, const std::string& vtep_mac) {
  // flanneld's vxlanLeaseAttrs field order: VNI, VtepMAC.
  nlohmann::json d = nlohmann::json::object();
  d["VNI"] = vni;
  d["VtepMAC"] = vtep_mac;
  return d;
}

std::optional<VxlanPeerPlan> PlanVxlanPeer(const Lease& peer, const VxlanLocal& local, bool ipv6, std::string* why) {
  auto fail = [&](std::string reason) -> std::optional<VxlanPeerPlan> {
    if (why != nullptr) *why = std::move(reason);
    return std::nullopt;
  };
  const std::string subnet = peer.subnet.v4.ToString();
  if (peer.attrs.backend_type != "vxlan") {
    return fail("lease " + subnet + " is of backend type \"" + peer.attrs.backend_type + "\", not vxlan");
  }
  const std::optional<cni::IpAddr>& public_ip = ipv6 ? peer.attrs.public_ipv6 : peer.attrs.public_ip;
  const char* family = ipv6 ? "IPv6" : "IPv4";
  if (!public_ip || public_ip->is_v4() == ipv6)
    return fail(fmt::format("lease {} has no {} public IP", subnet, family));
  if (ipv6 && !peer.subnet.v6) return fail("lease " + subnet + " has no IPv6 subnet");
  const cni::IpNet dst = ipv6 ? peer.subnet.v6->Network() : peer.subnet.v4.Network();
  const nlohmann::json& raw = ipv6 ? peer.attrs.backend_v6_data : peer.attrs.backend_data;
  const char* data_key = ipv6 ? "BackendV6Data" : "BackendData";
  nlohmann::ordered_json data = nlohmann::ordered_json::parse(raw.is_null() ? "{}" : raw.dump());
  const nlohmann::ordered_json* mac = data.is_object() ? FindFold(data, "VtepMAC") : nullptr;
  if (mac == nullptr || !mac->is_string()) return fail(fmt::format("lease {} has no {}.VtepMAC", subnet, data_key));
  auto parsed = cni::NormalizeMac(mac->get<std::string>());
  if (!parsed) return fail(fmt::format("lease {} has an invalid {}.VtepMAC {}", subnet, data_key, mac->dump()));
  const nlohmann::ordered_json* vni = data.is_object() ? FindFold(data, "VNI") : nullptr;
  if (vni != nullptr && vni->is_number_integer() && vni->get<int64_t>() != local.vni) {
    return fail(fmt::format("lease {} is on VNI {}, this node on {}", subnet, vni->get<int64_t>(), local.vni));
  }
  const std::optional<cni::IpNet> uplink_net = ipv6 ? local.uplink_net6 : std::optional<cni::IpNet>(local.uplink_net);
  VxlanPeerPlan p;
  p.neigh_ip = dst.addr();
  p.mac = *parsed;
  p.fdb_dst = *public_ip;
  p.route.dst = dst;
  p.route.protocol = local.protocol;
  if (local.direct_routing && uplink_net && uplink_net->Contains(*public_ip)) {
    p.direct = true;
    p.route.gw = public_ip;
    p.route.ifindex = local.uplink_ifindex;
  } else {
    p.route.gw = p.neigh_ip;
    p.route.ifindex = ipv6 ? local.device6_ifindex : local.device_ifindex;
    p.route.onlink = true;
  }
  return p;
}

std::optional<PeerEntries> VxlanEntries(const Lease& peer, const VxlanLocal& local, std::string* why) {
  PeerEntries e;
  auto add = [&](const VxlanPeerPlan& p, int device) {
    if (!p.direct) {
      e.neighs.push_back(nl::NeighSpec{device, p.neigh_ip, p.mac});
      e.fdbs.push_back(nl::FdbSpec{device, p.mac, p.fdb_dst});
    }
    e.routes.push_back(p.route);
  };
  auto v4 = PlanVxlanPeer(peer, local, false, why);
  if (!v4) return std::nullopt;
  add(*v4, local.device_ifindex);
  if (local.device6_ifindex != 0) {
    if (auto v6 = PlanVxlanPeer(peer, local, true, nullptr)) add(*v6, local.device6_ifindex);
  }
  return e;
}

}  // namespace netiface::agent
