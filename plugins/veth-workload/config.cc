#include "netiface/veth_workload/config.h"

#include <unistd.h>

#include <cctype>
#include <climits>

#include "netiface/cni/error.h"
#include "netiface/cni/file.h"
#include "netiface/cni/json_get.h"

namespace netiface::veth_workload {
namespace {

using nlohmann::json;

using cni::FindSet;

constexpr std::string_view kOwner = "veth-workload";

[[noreturn]] void Invalid(const std::string& key, const std::string& what, const json& value = nullptr) {
  cni::ThrowInvalidValue(kOwner, key, what, value);
}

bool GetBool(const json& obj, const char* key, const std::string& path, bool def) {
  return cni::GetOptional<bool>(obj, key, kOwner, path).value_or(def);
}

std::string GetString(const json& obj, const char* key, const std::string& path, std::string def) {
  return cni::GetOptional<std::string>(obj, key, kOwner, path).value_or(std::move(def));
}

int GetInt(const json& obj, const char* key, int def, int min, int max) {
  auto n = cni::GetOptional<int64_t>(obj, key, kOwner, key);
  if (!n) return def;
  if (*n < min || *n > max) {
    Invalid(key, "must be between " + std::to_string(min) + " and " + std::to_string(max), *FindSet(obj, key));
  }
  return static_cast<int>(*n);
}

bool IsLinkNameChar(unsigned char c) { return std::isalnum(c) || c == '_' || c == '-' || c == '.'; }

// A non-empty JSON array of strings at obj[key], or nullopt when absent/null.
std::optional<std::vector<std::string>> StringList(const json& obj, const char* key, const std::string& path) {
  const json* v = FindSet(obj, key);
  if (!v) return std::nullopt;
  if (!v->is_array()) Invalid(path, "must be an array of strings", *v);
  std::vector<std::string> out;
  for (const auto& e : *v) {
    if (!e.is_string()) Invalid(path, "must be an array of strings", *v);
    out.push_back(e.get<std::string>());
  }
  return out;
}

const json& ArgsCni(const cni::NetConf& conf) {
  static const json kEmpty = json::object();
  const json* cni = FindSet(conf.args, "cni");
  if (!cni) return kEmpty;
  if (!cni->is_object()) Invalid("args.cni", "must be an object", *cni);
  return *cni;
}

std::string Trim(std::string s) {
  size_t b = s.find_first_not_of(" \t\r\n");
  if (b == std::string::npos) return {};
  size_t e = s.find_last_not_of(" \t\r\n");
  return s.substr(b, e - b + 1);
}

}  // namespace

Config ParseConfig(const cni::NetConf& conf) {
  const json& raw = conf.raw;
  Config c;
  c.network = conf.name;
  c.cni_version = conf.cni_version;
  if (!conf.ipam.is_object()) Invalid("ipam", "is required (an object with a \"type\")");
  c.ipam = conf.ipam;
  c.ipam_type = conf.IpamType();
  if (c.ipam_type.empty()) Invalid("ipam.type", "is required");

  c.mtu = GetInt(raw, "mtu", kDefaultMtu, 68, 65535);
  c.num_queues = GetInt(raw, "numQueues", 1, 1, 1024);
  c.veth_prefix = GetString(raw, "vethPrefix", "vethPrefix", std::string(kDefaultVethPrefix));
  if (c.veth_prefix.empty() || c.veth_prefix.size() > kMaxLinkName - kMinHashDigits) {
    Invalid("vethPrefix", "must have 1 to " + std::to_string(kMaxLinkName - kMinHashDigits) + " characters",
            c.veth_prefix);
  }
  for (unsigned char ch : c.veth_prefix) {
    if (!IsLinkNameChar(ch)) Invalid("vethPrefix", "may only contain letters, digits, '_', '-' and '.'", c.veth_prefix);
  }
  c.include_default_routes = GetBool(raw, "includeDefaultRoutes", "includeDefaultRoutes", false);
  c.allow_ip_forwarding = GetBool(raw, "allowIpForwarding", "allowIpForwarding", false);
  c.nodename = GetString(raw, "nodename", "nodename", "");
  c.nodename_file = GetString(raw, "nodenameFile", "nodenameFile", "");
  c.data_dir = GetString(raw, "dataDir", "dataDir", std::string(kDefaultDataDir));
  if (c.data_dir.empty()) Invalid("dataDir", "must not be empty");

  if (const json* fc = FindSet(raw, "featureControl")) {
    if (!fc->is_object()) Invalid("featureControl", "must be an object", *fc);
    c.feature_ip_addrs_no_ipam = GetBool(*fc, "ipAddrsNoIpam", "featureControl.ipAddrsNoIpam", false);
    c.feature_floating_ips = GetBool(*fc, "floatingIps", "featureControl.floatingIps", false);
  }
  c.ip_masq = GetBool(raw, "ipMasq", "ipMasq", false);
  if (const json* b = FindSet(raw, "ipMasqBackend")) c.ip_masq_backend = *b;
  if (conf.dns && !conf.dns->empty()) c.dns = conf.dns;
  GetString(raw, "logFile", "logFile", "");
  GetString(raw, "logLevel", "logLevel", "");
  return c;
}

std::string ResolveNodename(const Config& c) {
  std::string name;
  std::string key;
  if (!c.nodename.empty()) {
    name = c.nodename;
    key = "nodename";
  } else if (!c.nodename_file.empty()) {
    key = "nodenameFile";
    std::optional<std::string> data;
    try {
      data = cni::ReadFileIfExists(c.nodename_file);
    } catch (const cni::Error& e) {
      Invalid(key, "cannot be read: " + e.msg(), c.nodename_file);
    }
    if (!data) Invalid(key, "does not exist", c.nodename_file);
    name = Trim(data->substr(0, data->find('\n')));
    if (name.empty()) Invalid(key, "is empty", c.nodename_file);
  } else {
    key = "nodename";
    char host[HOST_NAME_MAX + 1] = {};
    if (::gethostname(host, sizeof(host) - 1) != 0) Invalid(key, "is not set and the host name is unavailable");
    name = host;
  }
  if (!cni::IsValidName(name)) Invalid(key, "is not a valid node name", name);
  return name;
}

const std::vector<std::string_view>& KnownCniArgs() {
  static const std::vector<std::string_view> kKnown = {
      "IP", "MAC", "K8S_POD_NAMESPACE", "K8S_POD_NAME", "K8S_POD_INFRA_CONTAINER_ID", "K8S_POD_UID"};
  return kKnown;
}

Identity ParseIdentity(const cni::CmdArgs& args, const std::string& node) {
  auto parsed = cni::CniArgs::Parse(args.args, KnownCniArgs());
  Identity id;
  id.node = node;
  id.container_id = args.container_id;
  id.ifname = args.ifname;
  std::string ns = parsed.Get("K8S_POD_NAMESPACE").value_or("");
  std::string pod = parsed.Get("K8S_POD_NAME").value_or("");
  if (!ns.empty() && !pod.empty()) {
    if (!cni::IsValidName(ns)) throw cni::Error(cni::kInvalidEnv, "CNI_ARGS: invalid K8S_POD_NAMESPACE", ns);
    if (!cni::IsValidName(pod)) throw cni::Error(cni::kInvalidEnv, "CNI_ARGS: invalid K8S_POD_NAME", pod);
    id.pod_namespace = ns;
    id.pod = pod;
  }
  return id;
}

AddRequest ParseAddRequest(const Config& c, const cni::CmdArgs& args) {
  const cni::NetConf& conf = args.conf;
  auto cni_args = cni::CniArgs::Parse(args.args, KnownCniArgs());
  const json& args_cni = ArgsCni(conf);
  AddRequest r;

  auto check_mac = [](const std::string& v, const std::string& where, int code) {
    auto mac = NormalizeMac(v);
    bool multicast = mac && (std::stoi(mac->substr(0, 2), nullptr, 16) & 1);
    if (!mac || multicast || *mac == "00:00:00:00:00:00") {
      throw cni::Error(code, "veth-workload: invalid MAC address in " + where + " (need a unicast MAC)", v);
    }
    return *mac;
  };
  if (const json* m = FindSet(conf.runtime_config, "mac")) {
    if (!m->is_string()) Invalid("runtimeConfig.mac", "must be a string", *m);
    r.mac = check_mac(m->get<std::string>(), "runtimeConfig.mac", cni::kInvalidConfig);
  } else if (const json* m2 = FindSet(args_cni, "mac")) {
    if (!m2->is_string()) Invalid("args.cni.mac", "must be a string", *m2);
    r.mac = check_mac(m2->get<std::string>(), "args.cni.mac", cni::kInvalidConfig);
  } else if (auto m3 = cni_args.Get("MAC"); m3 && !m3->empty()) {
    r.mac = check_mac(*m3, "CNI_ARGS MAC", cni::kInvalidEnv);
  }

  auto ips_cni = StringList(args_cni, "ips", "args.cni.ips");
  auto ips_rt = StringList(conf.runtime_config, "ips", "runtimeConfig.ips");
  auto ip_arg = cni_args.Get("IP");
  r.requests_ips = (ips_cni && !ips_cni->empty()) || (ips_rt && !ips_rt->empty()) || (ip_arg && !ip_arg->empty());

  if (auto no_ipam = StringList(args_cni, "ipAddrsNoIpam", "args.cni.ipAddrsNoIpam")) {
    if (!c.feature_ip_addrs_no_ipam) {
      Invalid("args.cni.ipAddrsNoIpam", "needs featureControl.ipAddrsNoIpam to be enabled");
    }
    if (no_ipam->empty()) Invalid("args.cni.ipAddrsNoIpam", "must not be empty");
    if (r.requests_ips) {
      Invalid("args.cni.ipAddrsNoIpam", "cannot be combined with requested IPs (IP, args.cni.ips, runtimeConfig.ips)");
    }
    std::vector<cni::IpNet> nets;
    for (const auto& s : *no_ipam) {
      std::optional<cni::IpNet> n = cni::IpNet::Parse(s);
      if (!n) {
        if (auto a = cni::IpAddr::Parse(s)) n = cni::IpNet::Host(*a);
      }
      if (!n) Invalid("args.cni.ipAddrsNoIpam", "contains an invalid address", s);
      nets.push_back(*n);
    }
    r.ip_addrs_no_ipam = std::move(nets);
  }

  // "floatingIPs" as Calico's annotation spells it; "floatingIps" is accepted too.
  const char* floating_key = FindSet(args_cni, "floatingIPs") ? "floatingIPs" : "floatingIps";
  const std::string floating_path = std::string("args.cni.") + floating_key;
  if (auto floating = StringList(args_cni, floating_key, floating_path)) {
    if (!c.feature_floating_ips) Invalid(floating_path, "needs featureControl.floatingIps to be enabled");
    for (const auto& s : *floating) {
      auto a = cni::IpAddr::Parse(s);
      if (!a) Invalid(floating_path, "contains an invalid address", s);
      r.floating_ips.push_back(*a);
    }
  }
  return r;
}

}  // namespace netiface::veth_workload
