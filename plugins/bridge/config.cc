#include "netiface/bridge/config.h"

#include <cctype>

#include "netiface/cni/error.h"
#include "netiface/cni/ifname.h"
#include "netiface/cni/json_get.h"
#include "netiface/cni/result.h"

namespace netiface::bridge {
namespace {

using nlohmann::json;

bool GetBool(const json& raw, const char* key, bool def) {
  return cni::GetOptional<bool>(raw, key, "bridge", key).value_or(def);
}

std::string GetString(const json& raw, const char* key, std::string def) {
  return cni::GetOptional<std::string>(raw, key, "bridge", key).value_or(std::move(def));
}

// Reference features we do not implement: a config that switches one on is refused rather than
// silently given a different network.
void RejectUnsupported(const json& raw) {
  auto unsupported = [](const char* key, const json& v) {
    throw cni::Error(cni::kUnsupportedField, std::string("bridge: unsupported field \"") + key + "\" = " + v.dump());
  };
  if (auto it = raw.find("vlan"); it != raw.end() && !it->is_null() && *it != json(0)) {
    unsupported("vlan", *it);
  }
  if (auto it = raw.find("vlanTrunk"); it != raw.end() && !it->is_null() && !(it->is_array() && it->empty())) {
    unsupported("vlanTrunk", *it);
  }
  for (const char* key : {"macspoofchk", "portIsolation", "disableContainerInterface"}) {
    if (auto it = raw.find(key); it != raw.end() && *it == json(true)) unsupported(key, *it);
  }
}

}  // namespace

Config ParseConfig(const cni::NetConf& conf) {
  const json& raw = conf.raw;
  Config c;
  c.network = conf.name;
  c.cni_version = conf.cni_version;
  c.bridge = GetString(raw, "bridge", std::string(kDefaultBridgeName));
  if (c.bridge.empty()) c.bridge = kDefaultBridgeName;
  if (!cni::IsValidIfname(c.bridge)) {
    throw cni::Error(cni::kInvalidConfig, "bridge: \"bridge\" is not a valid interface name", c.bridge);
  }
  c.is_default_gateway = GetBool(raw, "isDefaultGateway", false);
  c.is_gateway = GetBool(raw, "isGateway", false) || c.is_default_gateway;
  c.force_address = GetBool(raw, "forceAddress", false);
  c.hairpin = GetBool(raw, "hairpinMode", false);
  c.promisc = GetBool(raw, "promiscMode", false);
  c.ip_masq = GetBool(raw, "ipMasq", false);
  c.ip_masq_backend = GetString(raw, "ipMasqBackend", "");
  if (!c.ip_masq_backend.empty() && c.ip_masq_backend != "iptables" && c.ip_masq_backend != "nftables") {
    throw cni::Error(cni::kInvalidConfig, "bridge: \"ipMasqBackend\" must be \"iptables\" or \"nftables\"",
                     c.ip_masq_backend);
  }
  c.enable_dad = GetBool(raw, "enabledad", false);
  if (auto it = raw.find("mtu"); it != raw.end() && !it->is_null()) {
    if (!it->is_number_integer() || it->get<long long>() < 0 || it->get<long long>() > 65535) {
      throw cni::Error(cni::kInvalidConfig, "bridge: \"mtu\" must be an integer between 0 and 65535", it->dump());
    }
    c.mtu = it->get<int>();
  }
  RejectUnsupported(raw);
  c.ipam_type = conf.IpamType();
  if (conf.dns && !conf.dns->empty()) c.dns = conf.dns;
  return c;
}

void ValidateForAdd(const Config& c) {
  if (c.hairpin && c.promisc) {
    throw cni::Error(cni::kInvalidConfig, "bridge: cannot set hairpin mode and promiscuous mode at the same time");
  }
  // Without IPAM the attachment has no address, and a result of these versions cannot be written
  // without one: the ADD could only fail after its changes.
  if (c.ipam_type.empty() && cni::ResultNeedsAnAddress(c.cni_version)) {
    throw cni::Error(cni::kIncompatibleVersion,
                     "bridge: without \"ipam\" the result has no IP address, which cniVersion " + c.cni_version +
                         " cannot express; use 0.3.0 or later");
  }
}

std::string RequestedMac(const cni::NetConf& conf, std::string_view cni_args) {
  auto normalize = [](const std::string& v, const char* where) {
    auto mac = NormalizeMac(v);
    if (!mac) throw cni::Error(cni::kInvalidConfig, std::string("bridge: invalid MAC address in ") + where, v);
    return *mac;
  };
  if (auto it = conf.runtime_config.find("mac"); it != conf.runtime_config.end() && it->is_string()) {
    return normalize(it->get<std::string>(), "runtimeConfig.mac");
  }
  if (auto cni = conf.args.find("cni"); cni != conf.args.end() && cni->is_object()) {
    if (auto it = cni->find("mac"); it != cni->end() && it->is_string()) {
      return normalize(it->get<std::string>(), "args.cni.mac");
    }
  }
  if (!cni_args.empty()) {
    // The keys runtimes send besides ours, so that a missing IgnoreUnknown does not fail the ADD.
    auto parsed = cni::CniArgs::Parse(
        cni_args, {"MAC", "IP", "K8S_POD_NAME", "K8S_POD_NAMESPACE", "K8S_POD_INFRA_CONTAINER_ID", "K8S_POD_UID"});
    if (auto mac = parsed.Get("MAC"); mac && !mac->empty()) return normalize(*mac, "CNI_ARGS MAC");
  }
  return "";
}

}  // namespace netiface::bridge
