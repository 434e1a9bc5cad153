#include "netiface/cni/runtime/cache.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <system_error>

#include "netiface/cni/error.h"
#include "netiface/cni/file.h"
#include "netiface/cni/go_json.h"
#include "netiface/cni/log.h"

namespace netiface::cni {
namespace {

using nlohmann::json;
namespace fs = std::filesystem;

constexpr char kB64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

void AppendField(std::string& out, const char* key, const json& value) {
  if (out.size() > 1) out += ',';
  AppendGoString(out, key);
  out += ':';
  AppendGoJson(out, value);
}

[[noreturn]] void BadEntry(const std::string& what) { throw Error(kDecodeFailure, "invalid cache entry", what); }

std::string StringField(const json& j, const char* key) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return {};
  if (!it->is_string()) BadEntry(std::string("\"") + key + "\" must be a string");
  return it->get<std::string>();
}

}  // namespace

std::string GoJsonMarshal(const json& j) { return GoMarshal(j); }

std::string Base64Encode(std::string_view bytes) {
  std::string out;
  out.reserve((bytes.size() + 2) / 3 * 4);
  size_t i = 0;
  for (; i + 2 < bytes.size(); i += 3) {
    uint32_t v = (uint32_t(uint8_t(bytes[i])) << 16) | (uint32_t(uint8_t(bytes[i + 1])) << 8) | uint8_t(bytes[i + 2]);
    for (int s = 18; s >= 0; s -= 6) out += kB64[(v >> s) & 0x3F];
  }
  size_t rest = bytes.size() - i;
  if (rest > 0) {
    uint32_t v = uint32_t(uint8_t(bytes[i])) << 16;
    if (rest == 2) v |= uint32_t(uint8_t(bytes[i + 1])) << 8;
    out += kB64[(v >> 18) & 0x3F];
    out += kB64[(v >> 12) & 0x3F];
    out += rest == 2 ? kB64[(v >> 6) & 0x3F] : '=';
    out += '=';
  }
  return out;
}

std::string Base64Decode(std::string_view text) {
  std::array<int, 256> val;
  val.fill(-1);
  for (int k = 0; k < 64; ++k) val[static_cast<unsigned char>(kB64[k])] = k;
  if (text.size() % 4 != 0) throw Error(kDecodeFailure, "invalid base64: length is not a multiple of 4");
  std::string out;
  out.reserve(text.size() / 4 * 3);
  for (size_t i = 0; i < text.size(); i += 4) {
    int pad = 0;
    uint32_t v = 0;
    for (size_t k = 0; k < 4; ++k) {
      char c = text[i + k];
      if (c == '=' && i + 4 == text.size() && k >= 2) {
        ++pad;
        v <<= 6;
        continue;
      }
      int d = val[static_cast<unsigned char>(c)];
      if (d < 0 || pad > 0) throw Error(kDecodeFailure, "invalid base64 data");
      v = (v << 6) | uint32_t(d);
    }
    out += char((v >> 16) & 0xFF);
    if (pad < 2) out += char((v >> 8) & 0xFF);
    if (pad < 1) out += char(v & 0xFF);
  }
  return out;
}

std::string EncodeCacheEntry(const CacheEntry& e) {
  std::string out = "{";
  AppendField(out, "kind", std::string(kCacheKindV1));
  AppendField(out, "containerId", e.container_id);
  AppendField(out, "config", Base64Encode(e.config));
  AppendField(out, "ifName", e.ifname);
  AppendField(out, "networkName", e.network_name);
  if (!e.netns.empty()) AppendField(out, "netns", e.netns);
  if (!e.cni_args.empty()) {
    json args = json::array();
    for (const auto& [k, v] : e.cni_args) args.push_back(json::array({k, v}));
    AppendField(out, "cniArgs", args);
  }
  if (e.capability_args.is_object() && !e.capability_args.empty()) {
    AppendField(out, "capabilityArgs", e.capability_args);
  }
  if (e.result.is_object() && !e.result.empty()) AppendField(out, "result", e.result);
  out += '}';
  return out;
}

CacheEntry DecodeCacheEntry(std::string_view bytes) {
  json j;
  try {
    j = json::parse(bytes.begin(), bytes.end());
  } catch (const json::exception& ex) {
    BadEntry(ex.what());
  }
  if (!j.is_object()) BadEntry("not a JSON object");
  CacheEntry e;
  if (StringField(j, "kind") != kCacheKindV1) {
    e.legacy = true;
    e.result = std::move(j);
    return e;
  }
  e.container_id = StringField(j, "containerId");
  e.ifname = StringField(j, "ifName");
  e.network_name = StringField(j, "networkName");
  e.netns = StringField(j, "netns");
  e.config = Base64Decode(StringField(j, "config"));
  if (auto it = j.find("cniArgs"); it != j.end() && !it->is_null()) {
    if (!it->is_array()) BadEntry("\"cniArgs\" must be an array");
    for (const auto& p : *it) {
      if (!p.is_array() || p.size() != 2 || !p[0].is_string() || !p[1].is_string()) {
        BadEntry("\"cniArgs\" entries must be [key, value] string pairs");
      }
      e.cni_args.emplace_back(p[0].get<std::string>(), p[1].get<std::string>());
    }
  }
  if (auto it = j.find("capabilityArgs"); it != j.end() && !it->is_null()) {
    if (!it->is_object()) BadEntry("\"capabilityArgs\" must be an object");
    e.capability_args = *it;
  }
  if (auto it = j.find("result"); it != j.end() && !it->is_null()) {
    if (!it->is_object()) BadEntry("\"result\" must be an object");
    e.result = *it;
  }
  return e;
}

std::string ResultCache::PathFor(const std::string& network, const std::string& container_id,
                                 const std::string& ifname) const {
  for (const auto* part : {&network, &container_id, &ifname}) {
    if (part->empty() || part->find('/') != std::string::npos) {
      throw Error(kInvalidConfig, "cache file path requires network name (\"" + network + "\"), container ID (\"" +
                                      container_id + "\"), and interface name (\"" + ifname + "\") without '/'");
    }
  }
  return dir_ + "/results/" + network + "-" + container_id + "-" + ifname;
}

void ResultCache::Write(const CacheEntry& e) const {
  std::string path = PathFor(e.network_name, e.container_id, e.ifname);
  MakeDirs(dir_ + "/results", 0700);
  // Go libcni writes its cache without fsync; atomic against a killed process is what readers need.
  WriteFileAtomic(path, EncodeCacheEntry(e), 0600, Sync::kProcessCrash);
}

std::optional<CacheEntry> ResultCache::Read(const std::string& network, const std::string& container_id,
                                            const std::string& ifname) const {
  auto bytes = ReadFileIfExists(PathFor(network, container_id, ifname));
  if (!bytes) return std::nullopt;
  return DecodeCacheEntry(*bytes);
}

bool ResultCache::Remove(const std::string& network, const std::string& container_id, const std::string& ifname) const {
  std::string path = PathFor(network, container_id, ifname);
  std::error_code ec;
  bool removed = fs::remove(path, ec);
  if (ec) throw Error(kIoFailure, "failed to remove cache entry " + path, ec.message());
  return removed;
}

std::vector<CacheEntry> ResultCache::List(const std::string& container_id) const {
  std::vector<std::string> names;
  std::error_code ec;
  for (auto it = fs::directory_iterator(dir_ + "/results", ec); !ec && it != fs::directory_iterator();
       it.increment(ec)) {
    names.push_back(it->path().filename().string());
  }
  std::sort(names.begin(), names.end());
  std::vector<CacheEntry> out;
  const std::string part = "-" + container_id + "-";
  for (const auto& name : names) {
    // A WriteFileAtomic temporary left by a crash is not an entry.
    if (name.find(".tmp-") != std::string::npos) continue;
    if (!container_id.empty()) {
      auto pos = name.find(part);
      if (pos == std::string::npos || pos == 0 || pos + part.size() >= name.size()) continue;
    }
    try {
      auto bytes = ReadFileIfExists(dir_ + "/results/" + name);
      if (!bytes) continue;
      CacheEntry e = DecodeCacheEntry(*bytes);
      if (e.legacy || e.ifname.empty() || e.network_name.empty()) continue;
      if (!container_id.empty() && e.container_id != container_id) continue;
      out.push_back(std::move(e));
    } catch (const Error& err) {
      log::Debug("skipping cache entry {}: {}", name, err.what());
    }
  }
  return out;
}

}  // namespace netiface::cni
