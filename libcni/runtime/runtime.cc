// The applying half of runtime.h: executes a conflist's plugins and keeps the result cache.
#include "netiface/cni/runtime/runtime.h"

#include <algorithm>
#include <exception>

#include "netiface/cni/join.h"
#include "netiface/cni/log.h"
#include "netiface/cni/skel.h"
#include "netiface/cni/version.h"

namespace netiface::cni {
namespace {

using nlohmann::json;

std::string Lower(std::string s) {
  for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// libcni's wording of a verb in errors: add, check, delete, gc, status.
std::string VerbWord(const std::string& command) { return command == "DEL" ? "delete" : Lower(command); }

std::string TypeOf(const json& plugin) { return plugin.value("type", std::string()); }

// Throws the collected failures: one as it is, several as one error with the first's code (a
// PluginError when that one came from a plugin) and every message joined by "; ".
[[noreturn]] void ThrowCollected(const std::vector<std::exception_ptr>& failures) {
  if (failures.size() == 1) std::rethrow_exception(failures.front());
  std::string msg;
  int code = kInternal;
  for (size_t i = 0; i < failures.size(); ++i) {
    try {
      std::rethrow_exception(failures[i]);
    } catch (const Error& e) {
      if (i == 0) code = e.code();
      AppendMessage(msg, e.what());
    }
  }
  try {
    std::rethrow_exception(failures.front());
  } catch (const PluginError& e) {
    // The joined message already carries every plugin's own prefix.
    throw PluginError(e.type(), e.verb(), Error(code, msg), /*prefixed=*/true);
  } catch (const Error&) {
    throw Error(code, msg);
  }
}

}  // namespace

PluginError::PluginError(std::string type, std::string verb, const Error& cause, bool prefixed)
    : Error(cause.code(), prefixed ? cause.msg() : "plugin type=\"" + type + "\" failed (" + verb + "): " + cause.msg(),
            cause.details()),
      type_(std::move(type)),
      verb_(std::move(verb)) {}

Runtime::Runtime(RuntimeOptions opts) : opts_(std::move(opts)), cache_(opts_.cache_dir) {
  if (!opts_.exec) opts_.exec = &DefaultExec();
}

json Runtime::CallWithConfig(const std::string& command, const std::string& type, const json& conf,
                             const RuntimeConf& rt) {
  std::string path = FindPlugin(type, opts_.cni_path);
  ExecRequest req;
  req.path = path;
  req.env = BuildPluginEnv(command, rt, opts_.cni_path, opts_.base_env);
  req.stdin_data = conf.dump();
  log::Debug("{} {} ({}): {}", command, type, path, req.stdin_data);
  try {
    return ExecPlugin(*opts_.exec, req);
  } catch (const Error& e) {
    throw PluginError(type, VerbWord(command), e);
  }
}

json Runtime::Call(const std::string& command, const json& plugin, const NetworkConfigList& list,
                   const json& prev_result, const RuntimeConf& rt) {
  json conf = BuildPluginConfig(plugin, list.conf.name, list.conf.cni_version, prev_result, rt.capability_args);
  return CallWithConfig(command, TypeOf(plugin), conf, rt);
}

void Runtime::Rollback(const NetworkConfigList& list, size_t count, const json& last_result, const RuntimeConf& rt) {
  json prev = VersionAtLeast(list.conf.cni_version, "0.4.0") ? last_result : json();
  for (size_t k = count; k-- > 0;) {
    try {
      Call("DEL", list.conf.plugins[k], list, prev, rt);
    } catch (const Error& e) {
      log::Warn("rollback after failed ADD: {}", e.what());
    }
  }
}

json Runtime::AddNetworkList(const NetworkConfigList& list, const RuntimeConf& rt) {
  ValidateContainerId(rt.container_id);
  ValidateIfname(rt.ifname);
  if (rt.netns.empty()) throw Error(kInvalidEnv, "ADD needs a network namespace (CNI_NETNS)");
  for (const auto& plugin : list.conf.plugins) FindPlugin(TypeOf(plugin), opts_.cni_path);

  const std::string& version = list.conf.cni_version;
  json result;  // null until the first plugin has answered
  for (size_t i = 0; i < list.conf.plugins.size(); ++i) {
    try {
      json out = Call("ADD", list.conf.plugins[i], list, result, rt);
      try {
        if (out.is_null()) throw Error(kDecodeFailure, "the plugin printed no result");
        result = ConvertResult(out, version);
      } catch (const Error& e) {
        throw PluginError(TypeOf(list.conf.plugins[i]), "add", e);
      }
    } catch (const Error&) {
      // Undo: DEL the failing plugin and every one before it, newest first.
      auto failure = std::current_exception();
      Rollback(list, i + 1, result, rt);
      std::rethrow_exception(failure);
    }
  }
  CacheEntry entry;
  entry.container_id = rt.container_id;
  entry.ifname = rt.ifname;
  entry.network_name = list.conf.name;
  entry.netns = rt.netns;
  entry.config = list.bytes;
  entry.cni_args = rt.args;
  entry.capability_args = rt.capability_args;
  entry.result = result;
  try {
    cache_.Write(entry);
  } catch (const Error& e) {
    log::Warn("failed to cache the result of {}: {}; undoing the ADD", list.conf.name, e.what());
    Rollback(list, list.conf.plugins.size(), result, rt);
    throw Error(e.code(), "failed to set network \"" + list.conf.name + "\" cached result: " + e.msg(), e.details());
  }
  return result;
}

std::optional<json> Runtime::CachedResult(const NetworkConfigList& list, const RuntimeConf& rt) const {
  auto entry = cache_.Read(list.conf.name, rt.container_id, rt.ifname);
  if (!entry || entry->result.is_null()) return std::nullopt;
  return ConvertResult(entry->result, list.conf.cni_version);
}

void Runtime::CheckNetworkList(const NetworkConfigList& list, const RuntimeConf& rt) {
  const std::string& version = list.conf.cni_version;
  if (!VersionAtLeast(version, "0.4.0")) {
    throw Error(kIncompatibleVersion, "configuration version \"" + version + "\" does not support the CHECK command");
  }
  if (list.conf.disable_check) {
    log::Info("{}: disableCheck is set, not checking", list.conf.name);
    return;
  }
  ValidateContainerId(rt.container_id);
  ValidateIfname(rt.ifname);
  std::optional<json> cached;
  try {
    cached = CachedResult(list, rt);
  } catch (const Error& e) {
    throw Error(e.code(), "failed to get network \"" + list.conf.name + "\" cached result: " + e.msg(), e.details());
  }
  if (!cached) {
    throw Error(kUnknownContainer, "no cached result for network \"" + list.conf.name + "\", container \"" +
                                       rt.container_id + "\", interface \"" + rt.ifname +
                                       "\": CHECK needs an ADD first");
  }
  for (const auto& plugin : list.conf.plugins) Call("CHECK", plugin, list, *cached, rt);
}

void Runtime::DelNetworkList(const NetworkConfigList& list, const RuntimeConf& rt) {
  ValidateContainerId(rt.container_id);
  ValidateIfname(rt.ifname);
  const std::string& version = list.conf.cni_version;
  json prev;
  if (VersionAtLeast(version, "0.4.0")) {
    try {
      if (auto cached = CachedResult(list, rt)) prev = std::move(*cached);
    } catch (const Error& e) {
      // An unreadable entry must not block the DEL; it is dropped like libcni does.
      log::Warn("ignoring the unusable cached result of {}: {}", list.conf.name, e.what());
      try {
        cache_.Remove(list.conf.name, rt.container_id, rt.ifname);
      } catch (const Error&) {
      }
    }
  }
  std::vector<std::exception_ptr> failures;
  for (size_t k = list.conf.plugins.size(); k-- > 0;) {
    try {
      Call("DEL", list.conf.plugins[k], list, prev, rt);
    } catch (const Error&) {
      failures.push_back(std::current_exception());
    }
  }
  if (!failures.empty()) ThrowCollected(failures);
  cache_.Remove(list.conf.name, rt.container_id, rt.ifname);
}

void Runtime::GcNetworkList(const NetworkConfigList& list, const std::optional<std::vector<Attachment>>& valid) {
  if (list.conf.disable_gc) {
    log::Info("{}: disableGC is set, not collecting", list.conf.name);
    return;
  }
  std::vector<std::exception_ptr> failures;
  DelStale(list, StaleAttachments(cache_.List(), list.conf.name, valid.value_or(std::vector<Attachment>{})), failures);
  GcPlugins(list, valid, failures);
  if (!failures.empty()) ThrowCollected(failures);
}

void Runtime::GcAttachments(const NetworkConfigList& list, const std::vector<CacheEntry>& stale,
                            std::vector<Attachment> valid) {
  if (list.conf.disable_gc) {
    log::Info("{}: disableGC is set, not collecting", list.conf.name);
    return;
  }
  std::vector<std::exception_ptr> failures;
  DelStale(list, stale, failures);
  try {
    for (const auto& e : cache_.List()) {
      Attachment a{e.container_id, e.ifname};
      if (e.network_name == list.conf.name && std::find(valid.begin(), valid.end(), a) == valid.end()) {
        valid.push_back(std::move(a));
      }
    }
  } catch (const Error&) {
    // Without the cache's word nothing may be freed: the plugins get no GC.
    failures.push_back(std::current_exception());
    ThrowCollected(failures);
  }
  GcPlugins(list, valid, failures);
  if (!failures.empty()) ThrowCollected(failures);
}

void Runtime::DelStale(const NetworkConfigList& list, const std::vector<CacheEntry>& stale,
                       std::vector<std::exception_ptr>& failures) {
  for (const auto& e : stale) {
    RuntimeConf rt;
    rt.container_id = e.container_id;
    rt.netns = e.netns;
    rt.ifname = e.ifname;
    rt.args = e.cni_args;
    rt.capability_args = e.capability_args.is_object() ? e.capability_args : json::object();
    try {
      DelNetworkList(list, rt);
    } catch (const Error& err) {
      failures.push_back(std::make_exception_ptr(
          Error(err.code(), "failed to delete stale attachment " + rt.container_id + " " + rt.ifname + ": " + err.msg(),
                err.details())));
    }
  }
}

void Runtime::GcPlugins(const NetworkConfigList& list, const std::optional<std::vector<Attachment>>& valid,
                        std::vector<std::exception_ptr>& failures) {
  if (!VersionAtLeast(list.conf.cni_version, "1.1.0")) return;
  json attachments = json::array();
  for (const auto& a : valid.value_or(std::vector<Attachment>{})) {
    attachments.push_back({{"containerID", a.container_id}, {"ifname", a.ifname}});
  }
  for (const auto& plugin : list.conf.plugins) {
    json conf = BuildPluginConfig(plugin, list.conf.name, list.conf.cni_version, json(), json::object());
    if (valid) {
      conf["cni.dev/valid-attachments"] = attachments;
      conf["cni.dev/attachments"] = attachments;
    }
    try {
      CallWithConfig("GC", TypeOf(plugin), conf, RuntimeConf{});
    } catch (const Error&) {
      failures.push_back(std::current_exception());
    }
  }
}

void Runtime::StatusNetworkList(const NetworkConfigList& list) {
  if (!VersionAtLeast(list.conf.cni_version, "1.1.0")) {
    log::Info("{}: version {} has no STATUS", list.conf.name, list.conf.cni_version);
    return;
  }
  for (const auto& plugin : list.conf.plugins) {
    json conf = BuildPluginConfig(plugin, list.conf.name, list.conf.cni_version, json(), json::object());
    CallWithConfig("STATUS", TypeOf(plugin), conf, RuntimeConf{});
  }
}

}  // namespace netiface::cni
