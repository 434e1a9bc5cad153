// The delegation entry points of exec.h: a plugin running IPAM or a delegate as a child, with this
// process's CNI environment, at once or in the background.
#include <map>
#include <utility>

#include "netiface/cni/error.h"
#include "netiface/cni/exec.h"
#include "netiface/cni/log.h"

extern char** environ;

namespace netiface::cni {
namespace {

using nlohmann::json;

std::map<std::string, std::string> ChildEnv(const std::string& command, const CmdArgs& args) {
  std::map<std::string, std::string> env;
  for (char** e = environ; e && *e; ++e) {
    std::string kv(*e);
    size_t eq = kv.find('=');
    if (eq == std::string::npos) continue;
    env[kv.substr(0, eq)] = kv.substr(eq + 1);
  }
  auto set = [&env](const char* key, const std::string& value) {
    if (value.empty()) {
      env.erase(key);
    } else {
      env[key] = value;
    }
  };
  env["CNI_COMMAND"] = command;
  set("CNI_CONTAINERID", args.container_id);
  set("CNI_NETNS", args.netns);
  set("CNI_IFNAME", args.ifname);
  set("CNI_ARGS", args.args);
  set("CNI_PATH", args.path);
  return env;
}

ExecRequest DelegateRequest(const std::string& command, const std::string& type, const DelegateConf& conf,
                            const CmdArgs& args) {
  ExecRequest req;
  req.path = FindPlugin(type, args.path);
  req.env = ChildEnv(command, args);
  req.stdin_data = conf.bytes;
  return req;
}

void CheckDelegable(const std::string& command) {
  if (command != "DEL" && command != "CHECK" && command != "STATUS" && command != "GC") {
    throw Error(kInternal, "cannot delegate command \"" + command + "\"");
  }
}

}  // namespace

DelegateConf::DelegateConf(const json& conf) : bytes(conf.dump()), version("0.1.0") {
  if (auto it = conf.find("cniVersion"); it != conf.end() && it->is_string() && !it->get<std::string>().empty()) {
    version = it->get<std::string>();
  }
}

DelegateConf DelegateConf::Own(const CmdArgs& args) {
  DelegateConf c;
  c.bytes = args.stdin_data;
  c.version = args.conf.cni_version;
  return c;
}

Result DelegateAdd(const std::string& type, const DelegateConf& conf, const CmdArgs& args, Exec& exec) {
  return StartDelegateAdd(type, conf, args, exec).Wait();
}

void Delegate(const std::string& command, const std::string& type, const DelegateConf& conf, const CmdArgs& args,
              Exec& exec) {
  CheckDelegable(command);
  ExecRequest req = DelegateRequest(command, type, conf, args);
  log::Debug("delegating {} to {}", command, req.path);
  ExecPlugin(exec, req);
}

PendingDelegate::PendingDelegate(std::unique_ptr<Exec::Running> running, std::string path)
    : running_(std::move(running)), path_(std::move(path)) {}

PendingDelegate::~PendingDelegate() {
  if (!running_) return;
  try {
    Wait();
  } catch (const std::exception& e) {
    log::Error("{}: {}", path_, e.what());
  }
}

void PendingDelegate::Release() {
  if (running_) running_->Release();
}

json PendingDelegate::Wait() {
  if (!running_) return nullptr;
  auto running = std::move(running_);
  return InterpretPluginOutput(running->Wait(), path_);
}

PendingDelegate StartDelegate(const std::string& command, const std::string& type, const DelegateConf& conf,
                              const CmdArgs& args, Exec& exec) {
  CheckDelegable(command);
  ExecRequest req = DelegateRequest(command, type, conf, args);
  log::Debug("starting {} of {}", command, req.path);
  return PendingDelegate(exec.Start(req), req.path);
}

PendingAdd::PendingAdd(PendingDelegate pending, std::string type, std::string version)
    : pending_(std::move(pending)), type_(std::move(type)), version_(std::move(version)) {}

Result PendingAdd::Wait() {
  if (waited_) throw Error(kInternal, "the result of " + type_ + " was already taken");
  waited_ = true;
  json out = pending_.Wait();
  if (out.is_null()) throw Error(kDelegateFailed, "plugin " + type_ + " printed no result");
  return ParseResult(out, version_);
}

void PendingAdd::Finish() noexcept {
  if (waited_) return;
  waited_ = true;
  try {
    pending_.Wait();
  } catch (const std::exception& e) {
    log::Debug("{} ADD failed before its rollback: {}", type_, e.what());
  }
}

PendingAdd StartDelegateAdd(const std::string& type, const DelegateConf& conf, const CmdArgs& args, Exec& exec,
                            Stdin stdin_mode) {
  ExecRequest req = DelegateRequest("ADD", type, conf, args);
  req.stdin_mode = stdin_mode;
  log::Debug("starting ADD of {}", req.path);
  return PendingAdd(PendingDelegate(exec.Start(req), req.path), type, conf.version);
}

}  // namespace netiface::cni
