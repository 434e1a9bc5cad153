// The pure half of runtime.h: loading conflists and computing each plugin's stdin and environment.
#include <algorithm>
#include <filesystem>
#include <set>
#include <system_error>

#include "netiface/cni/file.h"
#include "netiface/cni/log.h"
#include "netiface/cni/result.h"
#include "netiface/cni/runtime/runtime.h"

namespace netiface::cni {
namespace {

using nlohmann::json;
namespace fs = std::filesystem;

// Files of `dir` whose name ends in one of `exts` (regular files or links to them), sorted.
std::vector<std::string> ConfFiles(const std::string& dir, std::initializer_list<std::string_view> exts) {
  std::vector<std::string> out;
  std::error_code ec;
  auto it = fs::directory_iterator(dir, ec);
  if (ec) {
    if (ec == std::errc::no_such_file_or_directory) return out;
    throw Error(kIoFailure, "failed to read network configuration folder " + dir, ec.message());
  }
  for (; it != fs::directory_iterator(); it.increment(ec)) {
    if (ec) throw Error(kIoFailure, "failed to read network configuration folder " + dir, ec.message());
    std::error_code sec;
    if (!it->is_regular_file(sec)) continue;
    std::string name = it->path().filename().string();
    for (auto ext : exts) {
      if (name.size() > ext.size() && name.compare(name.size() - ext.size(), ext.size(), ext) == 0) {
        out.push_back(it->path().string());
        break;
      }
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

// The "name" of a config file, or nullopt when it is not a JSON object (skipped with a warning).
std::optional<std::string> PeekName(const std::string& path, const std::string& bytes) {
  json j = json::parse(bytes, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) {
    log::Warn("skipping {}: not a JSON object", path);
    return std::nullopt;
  }
  auto it = j.find("name");
  return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
}

}  // namespace

NetworkConfigList NetworkConfigListFromBytes(std::string bytes) {
  NetworkConfigList l;
  l.conf = ParseNetConfList(bytes);
  json raw = json::parse(bytes, nullptr, false);
  if (raw.is_object() && !raw.contains("plugins")) {
    // libcni's ConfListFromConf: {"cniVersion","name","plugins":[conf]} marshaled by Go.
    json list = json::object();
    list["cniVersion"] = raw.value("cniVersion", json(""));
    list["name"] = raw.value("name", json(""));
    list["plugins"] = json::array({raw});
    l.bytes = GoJsonMarshal(list);
  } else {
    l.bytes = std::move(bytes);
  }
  return l;
}

NetworkConfigList LoadNetworkConfigList(const std::string& dir, const std::string& name) {
  for (auto exts : {std::initializer_list<std::string_view>{".conflist"},
                    std::initializer_list<std::string_view>{".conf", ".json"}}) {
    for (const auto& path : ConfFiles(dir, exts)) {
      auto bytes = ReadFileIfExists(path);
      if (!bytes) continue;
      auto file_name = PeekName(path, *bytes);
      if (!file_name || *file_name != name) continue;
      try {
        return NetworkConfigListFromBytes(std::move(*bytes));
      } catch (const Error& e) {
        throw Error(e.code(), path + ": " + e.msg(), e.details());
      }
    }
  }
  throw Error(kInvalidConfig, "no net configuration with name \"" + name + "\" in " + dir);
}

ArgPairs ParseArgPairs(std::string_view s) {
  ArgPairs out;
  if (s.empty()) return out;
  size_t start = 0;
  while (true) {
    size_t semi = s.find(';', start);
    std::string_view pair = s.substr(start, semi == std::string_view::npos ? std::string_view::npos : semi - start);
    size_t eq = pair.find('=');
    if (eq == std::string_view::npos || eq == 0 || eq + 1 == pair.size() ||
        pair.find('=', eq + 1) != std::string_view::npos) {
      throw Error(kInvalidEnv, "invalid CNI_ARGS pair \"" + std::string(pair) + "\"");
    }
    out.emplace_back(std::string(pair.substr(0, eq)), std::string(pair.substr(eq + 1)));
    if (semi == std::string_view::npos) break;
    start = semi + 1;
  }
  return out;
}

std::string JoinArgPairs(const ArgPairs& args) {
  std::string out;
  for (const auto& [k, v] : args) {
    if (!out.empty()) out += ';';
    out += k + "=" + v;
  }
  return out;
}

json BuildPluginConfig(const json& plugin, const std::string& name, const std::string& cni_version,
                       const json& prev_result, const json& capability_args) {
  json conf = plugin;
  conf["name"] = name;
  conf["cniVersion"] = cni_version;
  if (!prev_result.is_null()) conf["prevResult"] = prev_result;
  json rc = json::object();
  if (auto caps = plugin.find("capabilities");
      caps != plugin.end() && caps->is_object() && capability_args.is_object()) {
    for (const auto& [key, declared] : caps->items()) {
      if (!declared.is_boolean() || !declared.get<bool>()) continue;
      if (auto arg = capability_args.find(key); arg != capability_args.end()) rc[key] = *arg;
    }
  }
  if (!rc.empty()) conf["runtimeConfig"] = std::move(rc);
  conf.erase("capabilities");
  return conf;
}

std::map<std::string, std::string> BuildPluginEnv(const std::string& command, const RuntimeConf& rt,
                                                  const std::string& cni_path,
                                                  const std::map<std::string, std::string>& base) {
  std::map<std::string, std::string> env;
  for (const auto& [k, v] : base) {
    if (k.rfind("CNI_", 0) != 0) env[k] = v;
  }
  bool attachment = command != "GC" && command != "STATUS";
  env["CNI_COMMAND"] = command;
  env["CNI_CONTAINERID"] = attachment ? rt.container_id : "";
  env["CNI_NETNS"] = attachment ? rt.netns : "";
  env["CNI_IFNAME"] = attachment ? rt.ifname : "";
  env["CNI_ARGS"] = attachment ? JoinArgPairs(rt.args) : "";
  env["CNI_PATH"] = cni_path;
  return env;
}

json ConvertResult(const json& result, const std::string& version) {
  if (!result.is_object()) throw Error(kDecodeFailure, "plugin result is not a JSON object");
  std::string from = version;
  if (auto it = result.find("cniVersion"); it != result.end() && it->is_string() && !it->get<std::string>().empty()) {
    from = it->get<std::string>();
  }
  if (from == version) {
    json same = result;
    same["cniVersion"] = version;
    return same;
  }
  return ResultToJson(ParseResult(result, from), version);
}

std::vector<CacheEntry> StaleAttachments(const std::vector<CacheEntry>& cached, const std::string& network,
                                         const std::vector<Attachment>& valid) {
  std::set<Attachment> keep(valid.begin(), valid.end());
  std::vector<CacheEntry> out;
  for (const auto& e : cached) {
    if (e.network_name != network) continue;
    if (keep.count(Attachment{e.container_id, e.ifname})) continue;
    out.push_back(e);
  }
  return out;
}

}  // namespace netiface::cni
