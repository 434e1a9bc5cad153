#include "netiface/cni/config.h"

#include <algorithm>
#include <cctype>

#include "netiface/cni/error.h"
#include "netiface/cni/version.h"

namespace netiface::cni {
namespace {

using nlohmann::json;

[[noreturn]] void Invalid(const std::string& msg) { throw Error(kInvalidConfig, msg); }

json ParseObject(std::string_view bytes, const char* what) {
  json j;
  try {
    j = json::parse(bytes.begin(), bytes.end());
  } catch (const json::exception& e) {
    throw Error(kDecodeFailure, std::string("error decoding ") + what, e.what());
  }
  if (!j.is_object()) throw Error(kDecodeFailure, std::string("error decoding ") + what, "not a JSON object");
  return j;
}

// The string at `key`, "" when absent or null; kInvalidConfig when it is another type.
std::string StringKey(const json& j, const char* key) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return {};
  if (!it->is_string()) Invalid(std::string("\"") + key + "\" must be a string");
  return it->get<std::string>();
}

json ObjectKey(const json& j, const char* key, json absent) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return absent;
  if (!it->is_object()) Invalid(std::string("\"") + key + "\" must be an object");
  return *it;
}

// true/false, or the strings "true"/"false" in any case (as libcni accepts).
bool BoolKey(const json& j, const char* key) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return false;
  if (it->is_boolean()) return it->get<bool>();
  if (it->is_string()) {
    std::string s = it->get<std::string>();
    std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
    if (s == "true") return true;
    if (s == "false") return false;
  }
  Invalid(std::string("\"") + key + "\" must be a boolean");
}

void CheckName(const json& j) {
  std::string name = StringKey(j, "name");
  if (name.empty()) Invalid("missing network name");
  if (!IsValidName(name)) Invalid("invalid network name \"" + name + "\"");
}

std::vector<Attachment> ParseAttachments(const json& arr, const char* key) {
  if (!arr.is_array()) Invalid(std::string("\"") + key + "\" must be an array");
  std::vector<Attachment> out;
  for (const auto& e : arr) {
    if (!e.is_object()) Invalid(std::string("\"") + key + "\" entries must be objects");
    Attachment a;
    a.container_id = StringKey(e, "containerID");
    a.ifname = StringKey(e, "ifname");
    out.push_back(std::move(a));
  }
  return out;
}

}  // namespace

std::string NetConf::IpamType() const {
  if (!ipam.is_object()) return {};
  auto it = ipam.find("type");
  if (it == ipam.end() || !it->is_string()) return {};
  return it->get<std::string>();
}

bool IsValidName(std::string_view s) {
  if (s.empty() || !std::isalnum(static_cast<unsigned char>(s[0]))) return false;
  return std::all_of(s.begin(), s.end(), [](char ch) {
    unsigned char c = static_cast<unsigned char>(ch);
    return c < 0x80 && (std::isalnum(c) || c == '_' || c == '.' || c == '-');
  });
}

NetConf ParseNetConf(std::string_view bytes) {
  NetConf c;
  c.raw = ParseObject(bytes, "network config");
  const json& j = c.raw;
  c.cni_version = StringKey(j, "cniVersion");
  if (c.cni_version.empty()) c.cni_version = "0.1.0";
  if (!IsSupportedVersion(c.cni_version)) {
    throw Error(kIncompatibleVersion, "unsupported CNI version \"" + c.cni_version + "\"");
  }
  CheckName(j);
  c.name = StringKey(j, "name");
  c.type = StringKey(j, "type");
  c.ipam = ObjectKey(j, "ipam", nullptr);
  if (c.ipam.is_object() && c.ipam.contains("type") && !c.ipam["type"].is_string()) {
    Invalid("\"ipam.type\" must be a string");
  }
  if (auto it = j.find("dns"); it != j.end() && !it->is_null()) {
    if (!it->is_object()) Invalid("\"dns\" must be an object");
    try {
      c.dns = DnsFromJson(*it);
    } catch (const Error& e) {
      Invalid("invalid \"dns\": " + e.msg());
    }
  }
  c.runtime_config = ObjectKey(j, "runtimeConfig", json::object());
  c.args = ObjectKey(j, "args", json::object());
  if (auto it = j.find("prevResult"); it != j.end() && !it->is_null()) {
    try {
      c.prev_result = ParseResult(*it, c.cni_version);
    } catch (const Error& e) {
      throw Error(kDecodeFailure, "could not parse prevResult", e.what());
    }
  }
  for (const char* key : {"cni.dev/valid-attachments", "cni.dev/attachments"}) {
    if (auto it = j.find(key); it != j.end() && !it->is_null()) {
      c.valid_attachments = ParseAttachments(*it, key);
      break;
    }
  }
  return c;
}

NetConfList ParseNetConfList(std::string_view bytes) {
  NetConfList l;
  json j = ParseObject(bytes, "network configuration list");
  if (!j.contains("plugins") && j.contains("type")) {
    // A single-plugin .conf: the list takes its name and version.
    json list = json::object();
    for (const char* key : {"cniVersion", "name"}) {
      if (j.contains(key)) list[key] = j[key];
    }
    list["plugins"] = json::array({j});
    j = std::move(list);
  }
  l.raw = j;
  CheckName(j);
  l.name = StringKey(j, "name");

  std::vector<std::string> versions;
  if (std::string v = StringKey(j, "cniVersion"); !v.empty()) versions.push_back(v);
  if (auto it = j.find("cniVersions"); it != j.end() && !it->is_null()) {
    if (!it->is_array()) Invalid("\"cniVersions\" must be an array of strings");
    for (const auto& v : *it) {
      if (!v.is_string()) Invalid("\"cniVersions\" must be an array of strings");
      if (!SpecVersion::Parse(v.get<std::string>())) {
        Invalid("invalid version \"" + v.get<std::string>() + "\" in \"cniVersions\"");
      }
      versions.push_back(v.get<std::string>());
    }
  }
  if (versions.empty()) {
    l.cni_version = "0.1.0";
  } else {
    for (const auto& v : versions) {
      if (IsSupportedVersion(v) && (l.cni_version.empty() || CompareVersions(v, l.cni_version) > 0)) {
        l.cni_version = v;
      }
    }
    if (l.cni_version.empty()) {
      throw Error(kIncompatibleVersion, "no supported CNI version in \"cniVersion\"/\"cniVersions\"");
    }
  }
  l.disable_check = BoolKey(j, "disableCheck");
  l.disable_gc = BoolKey(j, "disableGC");

  auto plugins = j.find("plugins");
  if (plugins == j.end() || !plugins->is_array()) Invalid("\"plugins\" must be an array");
  if (plugins->empty()) Invalid("\"plugins\" must not be empty");
  for (size_t i = 0; i < plugins->size(); ++i) {
    const json& p = (*plugins)[i];
    std::string where = "plugins[" + std::to_string(i) + "]";
    if (!p.is_object()) Invalid("\"" + where + "\" must be an object");
    auto type = p.find("type");
    if (type == p.end() || !type->is_string() || type->get<std::string>().empty()) {
      Invalid("\"" + where + ".type\" must be a non-empty string");
    }
    l.plugins.push_back(p);
  }
  return l;
}

CniArgs CniArgs::Parse(std::string_view s, const std::vector<std::string_view>& known) {
  CniArgs a;
  std::vector<std::string> unknown;
  while (!s.empty()) {
    size_t semi = s.find(';');
    std::string_view pair = s.substr(0, semi);
    size_t eq = pair.find('=');
    if (eq == std::string_view::npos || eq == 0 || pair.find('=', eq + 1) != std::string_view::npos) {
      throw Error(kInvalidEnv, "CNI_ARGS: invalid pair \"" + std::string(pair) + "\"");
    }
    std::string key(pair.substr(0, eq));
    a.kv_.emplace_back(key, std::string(pair.substr(eq + 1)));
    if (key != "IgnoreUnknown" && std::find(known.begin(), known.end(), key) == known.end()) {
      unknown.push_back(key);
    }
    if (semi == std::string_view::npos) break;
    s.remove_prefix(semi + 1);
    if (s.empty()) throw Error(kInvalidEnv, "CNI_ARGS: invalid pair \"\"");
  }
  bool ignore_unknown = false;
  if (auto v = a.Get("IgnoreUnknown")) {
    std::string lower = *v;
    std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return std::tolower(c); });
    if (lower == "1" || lower == "true") {
      ignore_unknown = true;
    } else if (lower != "0" && lower != "false") {
      throw Error(kInvalidEnv, "CNI_ARGS: invalid IgnoreUnknown value \"" + *v + "\"");
    }
  }
  if (!unknown.empty() && !ignore_unknown) {
    std::string names;
    for (const auto& k : unknown) names += (names.empty() ? "" : ", ") + k;
    throw Error(kInvalidEnv, "CNI_ARGS: unknown args [" + names + "]");
  }
  return a;
}

std::optional<std::string> CniArgs::Get(std::string_view key) const {
  for (auto it = kv_.rbegin(); it != kv_.rend(); ++it) {
    if (it->first == key) return it->second;
  }
  return std::nullopt;
}

}  // namespace netiface::cni
