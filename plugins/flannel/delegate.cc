#include "netiface/flannel/delegate.h"

#include "netiface/cni/error.h"
#include "netiface/cni/json_get.h"

namespace netiface::flannel {
namespace {

using nlohmann::json;

std::string GetString(const json& raw, const char* key, std::string_view def) {
  const json* v = cni::FindSet(raw, key);
  if (!v) return std::string(def);
  if (!v->is_string() || v->get_ref<const std::string&>().empty()) {
    cni::ThrowInvalidValue("flannel", key, "must be a non-empty string", *v);
  }
  return v->get<std::string>();
}

}  // namespace

Config ParseConfig(const cni::NetConf& conf) {
  const json& raw = conf.raw;
  Config c;
  c.name = conf.name;
  c.cni_version = conf.cni_version;
  c.has_cni_version = raw.contains("cniVersion");
  c.subnet_file = GetString(raw, "subnetFile", kDefaultSubnetFile);
  c.data_dir = GetString(raw, "dataDir", kDefaultDataDir);
  if (auto it = raw.find("delegate"); it != raw.end() && !it->is_null()) {
    if (!it->is_object()) throw cni::Error(cni::kInvalidConfig, "flannel: \"delegate\" must be an object");
    c.delegate = *it;
  }
  for (const char* forbidden : {"name", "ipam"}) {
    if (c.delegate.contains(forbidden)) {
      throw cni::Error(cni::kInvalidConfig, std::string("flannel: \"delegate\" must not contain \"") + forbidden + "\"",
                       "the delegate's name is the network's, its ipam is built from subnet.env");
    }
  }
  if (auto it = c.delegate.find("type"); it != c.delegate.end() && !it->is_string()) {
    throw cni::Error(cni::kInvalidConfig, "flannel: \"delegate.type\" must be a string", it->dump());
  }
  if (auto it = raw.find("ipam"); it != raw.end() && !it->is_null()) {
    if (!it->is_object()) throw cni::Error(cni::kInvalidConfig, "flannel: \"ipam\" must be an object");
    c.ipam = *it;
    if (auto r = c.ipam.find("routes"); r != c.ipam.end() && !r->is_null() && !r->is_array()) {
      throw cni::Error(cni::kInvalidConfig, "flannel: \"ipam.routes\" must be an array");
    }
  }
  c.runtime_config = conf.runtime_config;
  c.raw = raw;
  return c;
}

json RenderDelegate(const Config& c, const SubnetEnv& env) {
  json d = c.delegate;
  d["name"] = c.name;
  if (!d.contains("type")) d["type"] = "bridge";
  if (!d.contains("ipMasq")) d["ipMasq"] = !env.ipmasq;  // flanneld masquerades itself when IPMASQ=true
  if (!d.contains("mtu")) d["mtu"] = env.mtu;
  if (d["type"] == "bridge" && !d.contains("isGateway")) d["isGateway"] = true;
  if (c.has_cni_version || !d.contains("cniVersion")) d["cniVersion"] = c.cni_version;
  if (c.runtime_config.is_object() && !c.runtime_config.empty()) d["runtimeConfig"] = c.runtime_config;
  // The delegate logs as flannel was told to, unless its own section says otherwise.
  for (const char* key : {"logLevel", "logFile", "logFileMaxSize", "logFileMaxCount"}) {
    if (auto it = c.raw.find(key); it != c.raw.end() && !d.contains(key)) d[key] = *it;
  }

  json ipam = c.ipam.is_object() ? c.ipam : json::object();
  if (!ipam.contains("type")) ipam["type"] = "host-local";
  json ranges = json::array();
  if (env.subnet) ranges.push_back(json::array({{{"subnet", env.subnet->ToString()}}}));
  if (env.ipv6_subnet) ranges.push_back(json::array({{{"subnet", env.ipv6_subnet->ToString()}}}));
  ipam["ranges"] = ranges;
  json routes = ipam.contains("routes") && ipam["routes"].is_array() ? ipam["routes"] : json::array();
  for (const auto& n : env.networks) routes.push_back({{"dst", n.ToString()}});
  for (const auto& n : env.ipv6_networks) routes.push_back({{"dst", n.ToString()}});
  ipam["routes"] = routes;
  d["ipam"] = ipam;
  return d;
}

std::string DelegateType(const json& delegate) {
  auto it = delegate.find("type");
  if (it == delegate.end() || !it->is_string() || it->get<std::string>().empty()) {
    throw cni::Error(cni::kInvalidConfig, "flannel: the delegate config has no \"type\"");
  }
  return it->get<std::string>();
}

std::string SavedConfigPath(const std::string& data_dir, const std::string& container_id, const std::string& ifname) {
  return data_dir + "/" + container_id + "-" + ifname;
}

std::string LegacyConfigPath(const std::string& data_dir, const std::string& container_id) {
  return data_dir + "/" + container_id;
}

}  // namespace netiface::flannel
