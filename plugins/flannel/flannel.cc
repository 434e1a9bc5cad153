// The verbs: thin code around the pure rendering in delegate.cc and the files in saved_config.cc.
#include "netiface/flannel/flannel.h"

#include "netiface/cni/error.h"
#include "netiface/cni/log.h"
#include "netiface/cni/undo.h"
#include "netiface/cni/verbs.h"
#include "netiface/flannel/delegate.h"
#include "netiface/flannel/saved_config.h"
#include "netiface/flannel/subnet_env.h"

namespace netiface::flannel {
namespace {

using nlohmann::json;

// The saved config with our prevResult, converted to the saved config's version (CHECK needs it; DEL
// gets it as the spec says, when it converts).
json WithPrevResult(json delegate, const cni::CmdArgs& args) {
  if (!args.conf.prev_result) return delegate;
  std::string version = delegate.value("cniVersion", args.conf.cni_version);
  try {
    delegate["prevResult"] = cni::ResultToJson(*args.conf.prev_result, version);
  } catch (const cni::Error& e) {
    log::Warn("flannel: prevResult not passed to the delegate: {}", e.msg());
  }
  return delegate;
}

}  // namespace

cni::Result Add(const cni::CmdArgs& args, cni::Exec& exec) {
  const Config c = ParseConfig(args.conf);
  const json rendered = RenderDelegate(c, LoadSubnetEnv(c.subnet_file));
  const std::string type = DelegateType(rendered);
  const cni::DelegateConf delegate(rendered);  // serialised once: the same bytes are saved and sent
  const std::string path = SavedConfigPath(c.data_dir, args.container_id, args.ifname);
  // The saved config is durable before the delegate can change anything, and the delegate's process
  // starts meanwhile: it gets its config only at Release(). When the save fails it gets none and exits.
  cni::PendingAdd pending = cni::StartDelegateAdd(type, delegate, args, exec, cni::Stdin::kOnRelease);
  SaveConfig(path, c.data_dir, delegate.bytes);
  pending.Release();
  // From here the delegate may have changed something: a failed ADD is DELeted with the saved config,
  // which goes only when that DEL succeeded, so that the runtime's DEL can still release what is left.
  cni::UndoStack undo;
  undo.Push("delegated DEL and removal of " + path, [&exec, &args, type, delegate, path] {
    cni::Delegate("DEL", type, delegate, args, exec);
    RemoveSavedConfig(path);
  });
  cni::Result result = pending.Wait();
  undo.Dismiss();
  return result;
}

void Del(const cni::CmdArgs& args, cni::Exec& exec) {
  const Config c = ParseConfig(args.conf);
  std::optional<SavedConfig> saved = LoadSavedConfig(c.data_dir, args.container_id, args.ifname);
  json delegate;
  if (saved && !saved->conf.is_null()) {
    delegate = saved->conf;
  } else {
    // Lost or damaged: today's subnet.env still names the network, so IPAM can release by container ID.
    try {
      delegate = RenderDelegate(c, LoadSubnetEnv(c.subnet_file));
    } catch (const cni::Error& e) {
      log::Warn("flannel: no saved delegate config for {}/{} and none can be rendered ({}); nothing to delete",
                args.container_id, args.ifname, e.msg());
      return;
    }
  }
  cni::Delegate("DEL", DelegateType(delegate), WithPrevResult(delegate, args), args, exec);
  if (saved) RemoveSavedConfig(saved->path);
}

void Check(const cni::CmdArgs& args, cni::Exec& exec) {
  const Config c = ParseConfig(args.conf);
  std::optional<SavedConfig> saved = LoadSavedConfig(c.data_dir, args.container_id, args.ifname);
  if (!saved || saved->conf.is_null()) {
    throw cni::Error(cni::kIoFailure, "flannel: no saved delegate config for " + args.container_id + "/" + args.ifname,
                     SavedConfigPath(c.data_dir, args.container_id, args.ifname));
  }
  cni::Delegate("CHECK", DelegateType(saved->conf), WithPrevResult(saved->conf, args), args, exec);
}

void Status(const cni::CmdArgs& args, cni::Exec& exec) {
  const Config c = ParseConfig(args.conf);
  json delegate;
  try {
    delegate = RenderDelegate(c, LoadSubnetEnv(c.subnet_file));
  } catch (const cni::Error& e) {
    throw cni::Error(cni::kNotAvailable, e.msg(), e.details());
  }
  cni::Delegate("STATUS", DelegateType(delegate), delegate, args, exec);
}

void Gc(const cni::CmdArgs& args, cni::Exec& exec) {
  const Config c = ParseConfig(args.conf);
  json delegate = RenderDelegate(c, LoadSubnetEnv(c.subnet_file));
  for (const char* key : {"cni.dev/valid-attachments", "cni.dev/attachments"}) {
    if (auto it = c.raw.find(key); it != c.raw.end()) delegate[key] = *it;
  }
  // A failing delegated GC throws here and keeps every saved config: a later DEL may still need one.
  cni::Delegate("GC", DelegateType(delegate), delegate, args, exec);
  if (!args.conf.valid_attachments) return;
  for (const auto& path : StaleSavedConfigs(c.data_dir, c.name, *args.conf.valid_attachments)) {
    log::Info("flannel: GC removes {}", path);
    RemoveSavedConfig(path);
  }
}

cni::PluginFuncs Funcs() {
  return cni::BindVerbs<cni::Exec>(cni::DefaultExec(),
                                   {.add = Add, .del = Del, .check = Check, .status = Status, .gc = Gc});
}

}  // namespace netiface::flannel
