// The runtime side of CNI: loading network configuration lists and executing them the way Go libcni
// does (AddNetworkList, CheckNetworkList, DelNetworkList, GCNetworkList, GetStatusNetworkList), with
// the result cache of cache.h. Used by the netiface CLI; nothing here prints.
#pragma once

#include <exception>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "netiface/cni/config.h"
#include "netiface/cni/error.h"
#include "netiface/cni/exec.h"
#include "netiface/cni/runtime/cache.h"

namespace netiface::cni {

inline constexpr std::string_view kDefaultConfDir = "/etc/cni/net.d";

// A conflist and the exact bytes it was loaded from (the cache stores the bytes).
struct NetworkConfigList {
  NetConfList conf;
  std::string bytes;
};

// Parses conflist bytes. A single-plugin config (a "type" and no "plugins") is wrapped into a list
// as libcni's ConfListFromConf does, and `bytes` is then that list as Go would marshal it.
// Throws what ParseNetConfList throws.
NetworkConfigList NetworkConfigListFromBytes(std::string bytes);

// Finds the network named `name` in `dir`: the *.conflist files first, then *.conf and *.json, each
// group in file name order (libcni's LoadConfList). Files that are not JSON objects are skipped with a
// warning; a file whose "name" matches but that is otherwise invalid is an error.
// Throws Error(kInvalidConfig, "no net configuration with name ...") when nothing matches, and
// Error(kIoFailure) when the folder cannot be read.
NetworkConfigList LoadNetworkConfigList(const std::string& dir, const std::string& name);

// What the runtime knows about one attachment.
struct RuntimeConf {
  std::string container_id;
  std::string netns;  // may be empty for DEL
  std::string ifname = "eth0";
  ArgPairs args;  // CNI_ARGS pairs, in order
  nlohmann::json capability_args = nlohmann::json::object();
};

// "K=V;K=V" as cnitool parses CAP_ARGS' sibling CNI_ARGS: every pair needs a non-empty key and value
// and exactly one '='. "" gives no pairs. Throws Error(kInvalidEnv) naming the pair.
ArgPairs ParseArgPairs(std::string_view s);
std::string JoinArgPairs(const ArgPairs& args);

// --- Plan: pure functions, unit-tested as values. ---

// The stdin of one plugin of a list: the plugin object with "name" and "cniVersion" set to the
// list's, "prevResult" when `prev_result` is not null, "runtimeConfig" replaced by the capability
// arguments the plugin declares (capabilities[k] == true) and the runtime supplied (only when at least
// one matches; otherwise the plugin's own runtimeConfig is left as it is), and "capabilities" removed.
nlohmann::json BuildPluginConfig(const nlohmann::json& plugin, const std::string& name, const std::string& cni_version,
                                 const nlohmann::json& prev_result, const nlohmann::json& capability_args);

// The complete environment of one plugin call: `base` without any CNI_* variable, plus CNI_COMMAND,
// CNI_CONTAINERID, CNI_NETNS, CNI_IFNAME, CNI_ARGS and CNI_PATH (empty strings for the attachment
// variables of GC and STATUS, as libcni sends them).
std::map<std::string, std::string> BuildPluginEnv(const std::string& command, const RuntimeConf& rt,
                                                  const std::string& cni_path,
                                                  const std::map<std::string, std::string>& base);

// A plugin's result at `version`: unchanged when it already is at that version, else converted
// (ParseResult at its own "cniVersion" -- `version` when it has none -- then ResultToJson).
// Throws Error(kDecodeFailure / kIncompatibleVersion) when it cannot be converted.
nlohmann::json ConvertResult(const nlohmann::json& result, const std::string& version);

// The attachments the cache knows for `network`, minus `valid`: what GC DELs first.
std::vector<CacheEntry> StaleAttachments(const std::vector<CacheEntry>& cached, const std::string& network,
                                         const std::vector<Attachment>& valid);

// --- Apply. ---

// A plugin of the list failed: code, msg and details are the plugin's own (kDelegateFailed when its
// output was not an error object); what() reads like libcni: plugin type="bridge" failed (add): msg.
class PluginError : public Error {
 public:
  // prefixed: cause.msg() already reads "plugin type=... failed (...): ..." (joined failures).
  PluginError(std::string type, std::string verb, const Error& cause, bool prefixed = false);
  const std::string& type() const { return type_; }
  const std::string& verb() const { return verb_; }

 private:
  std::string type_;
  std::string verb_;
};

struct RuntimeOptions {
  std::string cni_path;  // ':'-separated folders with the plugins
  std::string cache_dir = std::string(kDefaultCacheDir);
  std::map<std::string, std::string> base_env;  // environment every plugin inherits (PATH, ...)
  Exec* exec = nullptr;                         // nullptr: DefaultExec()
};

class Runtime {
 public:
  explicit Runtime(RuntimeOptions opts);

  // Finds every plugin first, then ADDs them in order, each getting the previous result converted
  // to the list version as prevResult; caches and returns the final result (at the list version).
  // When a plugin fails, DELs the plugins already called and the failing one (reverse order, with the
  // last good result as prevResult from 0.4.0 on), then rethrows the PluginError. Throws
  // Error(kInvalidConfig) before any call when a plugin is missing, Error(kInvalidEnv) for an invalid
  // container ID or interface name.
  nlohmann::json AddNetworkList(const NetworkConfigList& list, const RuntimeConf& rt);
  // Nothing when disableCheck is set. Error(kIncompatibleVersion) below 0.4.0; Error(kUnknownContainer)
  // when there is no cached result for the attachment (never CHECK before ADD); else each plugin in
  // order with the cached result as prevResult; the first failure is thrown.
  void CheckNetworkList(const NetworkConfigList& list, const RuntimeConf& rt);
  // Every plugin in reverse order, with the cached result as prevResult from 0.4.0 on; a failure does
  // not stop the others. The cache entry is removed only when all succeeded. Throws one PluginError
  // (the first failure's code, every failure in the message) or the first other Error.
  void DelNetworkList(const NetworkConfigList& list, const RuntimeConf& rt);
  // Nothing when disableGC is set. Else DELs every cached attachment of this network that is not in
  // `valid` (nullopt: none is valid), then from 1.1.0 on sends GC to every plugin with the valid list
  // as both cni.dev/valid-attachments and cni.dev/attachments (omitted when `valid` is nullopt, as
  // libcni does). Every failure is collected and thrown together at the end.
  void GcNetworkList(const NetworkConfigList& list, const std::optional<std::vector<Attachment>>& valid);
  // GC with the caller's choice of what is stale, for a tool run on a live node: DELs exactly `stale`
  // (cache entries of this network, each with its cached netns, CNI_ARGS and capability arguments), then
  // from 1.1.0 on sends GC to every plugin with `valid` followed by every attachment the cache still holds
  // for the network (one whose DEL failed, one added meanwhile), so that no plugin frees what a cached
  // attachment uses. Nothing when disableGC is set. Every failure is collected and thrown together.
  void GcAttachments(const NetworkConfigList& list, const std::vector<CacheEntry>& stale,
                     std::vector<Attachment> valid);
  // From 1.1.0 on: STATUS to each plugin in order; the first failure is thrown. Below 1.1.0: nothing.
  void StatusNetworkList(const NetworkConfigList& list);

  // The cached ADD result of the attachment converted to the list version, or nullopt.
  std::optional<nlohmann::json> CachedResult(const NetworkConfigList& list, const RuntimeConf& rt) const;
  const ResultCache& cache() const { return cache_; }

 private:
  // Runs one plugin; returns its stdout as JSON. Plugin failures become PluginError.
  nlohmann::json Call(const std::string& command, const nlohmann::json& plugin, const NetworkConfigList& list,
                      const nlohmann::json& prev_result, const RuntimeConf& rt);
  nlohmann::json CallWithConfig(const std::string& command, const std::string& type, const nlohmann::json& conf,
                                const RuntimeConf& rt);
  // The two halves of GC: DEL of each stale cached attachment, and GC to every plugin (from 1.1.0 on)
  // with `valid` as cni.dev/valid-attachments (omitted when nullopt). Failures are appended.
  void DelStale(const NetworkConfigList& list, const std::vector<CacheEntry>& stale,
                std::vector<std::exception_ptr>& failures);
  void GcPlugins(const NetworkConfigList& list, const std::optional<std::vector<Attachment>>& valid,
                 std::vector<std::exception_ptr>& failures);
  // DELs the first `count` plugins, newest first, after a failed ADD; failures are only logged.
  void Rollback(const NetworkConfigList& list, size_t count, const nlohmann::json& last_result, const RuntimeConf& rt);

  RuntimeOptions opts_;
  ResultCache cache_;
};

}  // namespace netiface::cni
