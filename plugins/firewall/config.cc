// The firewall config and the attachment's rule spec.
#include "netiface/firewall/config.h"

#include <algorithm>

#include "netiface/cni/error.h"
#include "netiface/cni/json_get.h"

namespace netiface::firewall {
namespace {

constexpr const char* kOwner = "firewall";

std::string GetString(const nlohmann::json& obj, const char* key) {
  const nlohmann::json* v = cni::FindSet(obj, key);
  if (v == nullptr) return "";
  if (!v->is_string()) cni::ThrowInvalidValue(kOwner, key, "must be a string", *v);
  return v->get<std::string>();
}

}  // namespace

Config ParseConfig(const cni::NetConf& conf) {
  Config c{.network = conf.name, .cni_version = conf.cni_version};
  const std::string backend = GetString(conf.raw, "backend");
  if (backend == "firewalld") {
    cni::ThrowInvalidValue(kOwner, "backend", "is not supported: this plugin keeps its rules in nftables",
                           nlohmann::json(backend));
  }
  if (!backend.empty() && backend != "iptables") {
    cni::ThrowInvalidValue(kOwner, "backend", "must be \"iptables\" (or absent)", nlohmann::json(backend));
  }
  GetString(conf.raw, "iptablesAdminChainName");  // type-checked only: see README
  GetString(conf.raw, "firewalldZone");
  const std::string policy = GetString(conf.raw, "ingressPolicy");
  if (!policy.empty() && policy != "open" && policy != "same-bridge") {
    cni::ThrowInvalidValue(kOwner, "ingressPolicy", "must be \"open\" or \"same-bridge\"", nlohmann::json(policy));
  }
  c.same_bridge = policy == "same-bridge";
  return c;
}

nat::FirewallSpec PlanSpec(const Config& c, const std::string& container_id, const std::string& ifname,
                           const cni::Result& prev) {
  nat::FirewallSpec spec{.tag = {c.network, container_id, ifname}};
  for (const cni::IpConfig& ip : prev.ips) {
    const cni::IpAddr a = ip.address.addr();
    if (std::find(spec.addrs.begin(), spec.addrs.end(), a) == spec.addrs.end()) spec.addrs.push_back(a);
  }
  if (spec.addrs.empty()) throw cni::Error(cni::kInvalidConfig, "firewall: prevResult has no IP address");
  if (c.same_bridge) {
    if (prev.interfaces.empty() || prev.interfaces[0].name.empty() || !prev.interfaces[0].sandbox.empty()) {
      throw cni::Error(cni::kInvalidConfig,
                       "firewall: ingressPolicy \"same-bridge\" needs the bridge as prevResult's first interface "
                       "(chain the firewall plugin after bridge)");
    }
    spec.isolated_bridge = prev.interfaces[0].name;
  }
  return spec;
}

}  // namespace netiface::firewall
