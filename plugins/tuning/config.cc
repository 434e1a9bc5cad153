// The tuning config: the reference's keys and precedence, every value checked before anything changes.
#include "netiface/tuning/config.h"

#include <limits>
#include <map>

#include "netiface/cni/error.h"
#include "netiface/cni/json_get.h"
#include "netiface/cni/mac.h"

namespace netiface::tuning {
namespace {

using nlohmann::json;

constexpr const char* kOwner = "tuning";

std::string Mac(const std::string& v, const std::string& where) {
  std::optional<std::string> mac = cni::NormalizeMac(v);
  bool multicast = mac && (std::stoi(mac->substr(0, 2), nullptr, 16) & 1);
  if (!mac || multicast || *mac == "00:00:00:00:00:00") {
    throw cni::Error(cni::kInvalidConfig,
                     std::string(kOwner) + ": invalid MAC address in " + where + " (need a unicast 6-byte MAC)", v);
  }
  return *mac;
}

std::optional<std::string> GetString(const json& obj, const char* key, const std::string& path) {
  const json* v = cni::FindSet(obj, key);
  if (v == nullptr) return std::nullopt;
  if (!v->is_string()) cni::ThrowInvalidValue(kOwner, path + key, "must be a string", *v);
  return v->get<std::string>();
}

std::optional<bool> GetBool(const json& obj, const char* key, const std::string& path) {
  const json* v = cni::FindSet(obj, key);
  if (v == nullptr) return std::nullopt;
  if (!v->is_boolean()) cni::ThrowInvalidValue(kOwner, path + key, "must be true or false", *v);
  return v->get<bool>();
}

std::optional<int64_t> GetInt(const json& obj, const char* key, const std::string& path) {
  const json* v = cni::FindSet(obj, key);
  if (v == nullptr) return std::nullopt;
  if (!v->is_number_integer() || (v->is_number_unsigned() && v->get<uint64_t>() > (uint64_t{1} << 40))) {
    cni::ThrowInvalidValue(kOwner, path + key, "must be an integer", *v);
  }
  return v->get<int64_t>();
}

// Raw sysctl entries of one object, checked for type.
void ReadSysctls(const json& obj, const std::string& path, std::map<std::string, std::string>& out) {
  const json* v = cni::FindSet(obj, "sysctl");
  if (v == nullptr) return;
  if (!v->is_object()) cni::ThrowInvalidValue(kOwner, path + "sysctl", "must be an object of strings", *v);
  for (const auto& [key, value] : v->items()) {
    if (!value.is_string()) cni::ThrowInvalidValue(kOwner, path + "sysctl." + key, "must be a string", value);
    out[key] = value.get<std::string>();
  }
}

// The attribute keys of one object (the top level or args.cni) over what `c` has so far. The
// reference's mtu 0 and promisc false at the top level mean "not set".
void ReadAttributes(const json& obj, const std::string& path, Config& c) {
  if (auto mac = GetString(obj, "mac", path); mac && !mac->empty()) c.mac = Mac(*mac, path + "mac");
  if (auto p = GetBool(obj, "promisc", path)) c.promisc = *p;
  if (auto mtu = GetInt(obj, "mtu", path)) {
    if (*mtu != 0 && (*mtu < 68 || *mtu > 65535)) {
      cni::ThrowInvalidValue(kOwner, path + "mtu", "must be between 68 and 65535", json(*mtu));
    }
    c.mtu = *mtu == 0 ? std::nullopt : std::optional<int>(static_cast<int>(*mtu));
  }
  if (auto a = GetBool(obj, "allmulti", path)) c.allmulti = *a;
  if (auto q = GetInt(obj, "txQLen", path)) {
    if (*q < 0 || *q > std::numeric_limits<uint32_t>::max()) {
      cni::ThrowInvalidValue(kOwner, path + "txQLen", "must be between 0 and 4294967295", json(*q));
    }
    c.txqlen = static_cast<uint32_t>(*q);
  }
}

}  // namespace

std::string SysctlPath(std::string_view key, std::string_view ifname) {
  const char sep = key.find('/') != std::string_view::npos ? '/' : '.';
  std::string path(key);
  if (sep == '.') {
    for (char& ch : path) ch = ch == '.' ? '/' : ch;
  }
  // After the separators, as the reference: the interface name keeps its dots.
  if (size_t at = path.find("IFNAME"); at != std::string::npos) path.replace(at, 6, ifname);
  auto refuse = [&](const char* why) {
    throw cni::Error(cni::kInvalidConfig,
                     std::string(kOwner) + ": invalid net sysctl key \"" + std::string(key) + "\": " + why);
  };
  if (path.rfind("net/", 0) != 0) refuse("only keys under net. (the container's network namespace) can be set");
  size_t start = 0;
  while (start <= path.size()) {
    size_t end = path.find('/', start);
    if (end == std::string::npos) end = path.size();
    std::string_view part = std::string_view(path).substr(start, end - start);
    if (part.empty() || part == "." || part == "..") refuse("empty, \".\" or \"..\" parts are not allowed");
    for (char ch : part) {
      if (static_cast<unsigned char>(ch) < 0x20 || ch == 0x7f) refuse("control characters are not allowed");
    }
    start = end + 1;
  }
  return path;
}

Config ParseConfig(const cni::NetConf& conf, std::string_view cni_args, std::string_view ifname) {
  Config c{.cni_version = conf.cni_version};
  if (auto dir = GetString(conf.raw, "dataDir", ""); dir && !dir->empty()) {
    if (dir->front() != '/') cni::ThrowInvalidValue(kOwner, "dataDir", "must be an absolute path", json(*dir));
    c.data_dir = *dir;
  }
  std::map<std::string, std::string> sysctls;
  ReadSysctls(conf.raw, "", sysctls);
  ReadAttributes(conf.raw, "", c);
  if (!cni_args.empty()) {
    auto parsed = cni::CniArgs::Parse(
        cni_args, {"MAC", "IP", "K8S_POD_NAME", "K8S_POD_NAMESPACE", "K8S_POD_INFRA_CONTAINER_ID", "K8S_POD_UID"});
    if (auto mac = parsed.Get("MAC"); mac && !mac->empty()) c.mac = Mac(*mac, "CNI_ARGS MAC");
  }
  if (auto mac = GetString(conf.runtime_config, "mac", "runtimeConfig."); mac && !mac->empty()) {
    c.mac = Mac(*mac, "runtimeConfig.mac");
  }
  if (const json* a = cni::FindSet(conf.args, "cni"); a != nullptr && a->is_object()) {
    ReadSysctls(*a, "args.cni.", sysctls);
    ReadAttributes(*a, "args.cni.", c);
  }
  std::map<std::string, std::string> by_path;  // path -> the key that named it
  for (const auto& [key, value] : sysctls) {
    for (char ch : value) {
      if (static_cast<unsigned char>(ch) < 0x20 && ch != '\t') {
        cni::ThrowInvalidValue(kOwner, "sysctl." + key, "must not contain control characters", json(value));
      }
    }
    std::string path = SysctlPath(key, ifname);
    if (auto [it, fresh] = by_path.emplace(path, key); !fresh) {
      throw cni::Error(
          cni::kInvalidConfig,
          std::string(kOwner) + ": sysctl keys \"" + it->second + "\" and \"" + key + "\" name the same setting", path);
    }
    c.sysctls.emplace_back(std::move(path), value);
  }
  return c;
}

std::string BackupPath(const Config& c, std::string_view container_id, std::string_view ifname) {
  std::string dir = c.data_dir;
  while (dir.size() > 1 && dir.back() == '/') dir.pop_back();
  return dir + "/" + std::string(container_id) + "_" + std::string(ifname) + ".json";
}

}  // namespace netiface::tuning
