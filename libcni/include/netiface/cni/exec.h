// Finding and executing plugins: used by main plugins for IPAM, by meta plugins for delegates and by
// the runtime (libcni/runtime, the netiface CLI) for whole conflists. Three units implement it:
// plugin_path.cc (FindPlugin), exec.cc (the Exec seam over process.h, a plugin's output read as the
// spec reads it) and delegate.cc (the delegation entry points).
#pragma once

#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "netiface/cni/process.h"
#include "netiface/cni/result.h"
#include "netiface/cni/skel.h"

namespace netiface::cni {

struct ExecRequest {
  std::string path;                        // absolute path of the executable
  std::map<std::string, std::string> env;  // the complete environment of the child
  std::string stdin_data;
  // Start() only: with Stdin::kOnRelease the child starts at once but gets its stdin only at
  // Running::Release() (process.h). Waiting without Release() closes stdin unfed: the child reads no
  // config and fails without acting.
  Stdin stdin_mode = Stdin::kNow;
};

struct ExecOutput {
  int exit_code = 0;
  std::string stdout_data;
};

// Seam for tests and fault injection. The child's stderr is passed through to ours.
class Exec {
 public:
  virtual ~Exec() = default;
  // Throws Error(kIoFailure) when the child cannot be started.
  virtual ExecOutput Run(const ExecRequest& req) = 0;

  // A child started by Start(). Wait() returns its output once it has exited.
  class Running {
   public:
    virtual ~Running() = default;
    virtual ExecOutput Wait() = 0;
    // Hands a held stdin over (ExecRequest::stdin_mode); nothing otherwise.
    virtual void Release() {}
    // True when the child is known to have exited, so that Wait() returns at once (a call run in
    // this process); false when that cannot be told without waiting.
    virtual bool Finished() const { return false; }
  };
  // Starts the child, hands it its stdin and returns while it runs. The default runs it to completion
  // here, at Release() when the stdin is held (test doubles need not override it).
  virtual std::unique_ptr<Running> Start(const ExecRequest& req);
};
// Children through Process (process.h): stderr passed through, moved off the caller's CPU once.
Exec& DefaultExec();

// The first executable named `type` in a ':'-separated CNI_PATH. Throws Error(kInvalidConfig)
// ("failed to find plugin \"type\" in path [...]") when there is none or the type is not a plain name.
std::string FindPlugin(std::string_view type, std::string_view cni_path);

// Runs a plugin and returns its stdout parsed as JSON (null when empty). A non-zero exit becomes the
// plugin's own Error (code, msg, details) when its stdout is an error object, else kDelegateFailed.
nlohmann::json ExecPlugin(Exec& exec, const ExecRequest& req);
// What ExecPlugin makes of a finished child's output; `path` names the plugin in the errors.
nlohmann::json InterpretPluginOutput(const ExecOutput& out, const std::string& path);

// What a delegate reads on its stdin, and the version its ADD result is read at.
struct DelegateConf {
  DelegateConf(const nlohmann::json& conf);  // serialised; the version is its "cniVersion" (0.1.0 when absent)
  // This plugin's own stdin, byte for byte, as the reference hands a main plugin's config to its IPAM
  // plugin; nothing is serialised again.
  static DelegateConf Own(const CmdArgs& args);

  std::string bytes;
  std::string version;

 private:
  DelegateConf() = default;
};

// Delegation from inside a plugin: run `type` (found in args.path) with this process's CNI
// environment, CNI_COMMAND replaced by `command`, and `conf` as stdin.
// DelegateAdd parses the result at conf.version.
Result DelegateAdd(const std::string& type, const DelegateConf& conf, const CmdArgs& args, Exec& exec = DefaultExec());
void Delegate(const std::string& command, const std::string& type, const DelegateConf& conf, const CmdArgs& args,
              Exec& exec = DefaultExec());

// A delegated call running in the background, so that a verb can overlap it with other work (ADD
// creates links while IPAM allocates; DEL releases the reservation while the kernel waits ~20 ms to
// unregister a deleted veth).
class PendingDelegate {
 public:
  PendingDelegate(std::unique_ptr<Exec::Running> running, std::string path);
  PendingDelegate(PendingDelegate&&) noexcept = default;
  PendingDelegate& operator=(PendingDelegate&&) = delete;
  ~PendingDelegate();  // waits for the child if Wait() was not called (its errors are logged)
  // Hands over a held stdin (StartDelegateAdd with Stdin::kOnRelease).
  void Release();
  // Exec::Running::Finished(): Wait() would return at once.
  bool Finished() const { return !running_ || running_->Finished(); }
  // Waits for the child; returns its stdout as JSON (null when empty) or throws its error as
  // Delegate() would. Once: later calls return null.
  nlohmann::json Wait();

 private:
  std::unique_ptr<Exec::Running> running_;
  std::string path_;
};
// Starts `command` (DEL, CHECK, STATUS, GC) like Delegate() and returns at once.
PendingDelegate StartDelegate(const std::string& command, const std::string& type, const DelegateConf& conf,
                              const CmdArgs& args, Exec& exec = DefaultExec());

// A delegated ADD running in the background.
class PendingAdd {
 public:
  PendingAdd(PendingDelegate pending, std::string type, std::string version);
  // Hands the delegate its config when it was started with Stdin::kOnRelease.
  void Release() { pending_.Release(); }
  // Its result is in: Wait() returns at once (the delegate ran in this process).
  bool Finished() const { return pending_.Finished(); }
  // Waits for the child; returns its result parsed at the version of the delegated config, or throws
  // its error as DelegateAdd() would. Once.
  Result Wait();
  // Waits for the child if Wait() was not called, ignoring its outcome: what a rollback does before it
  // delegates DEL, so that the DEL never races the ADD it undoes.
  void Finish() noexcept;

 private:
  PendingDelegate pending_;
  std::string type_, version_;
  bool waited_ = false;
};
// Stdin::kOnRelease: the delegate's process starts now, its config goes over at PendingAdd::Release().
PendingAdd StartDelegateAdd(const std::string& type, const DelegateConf& conf, const CmdArgs& args,
                            Exec& exec = DefaultExec(), Stdin stdin_mode = Stdin::kNow);

}  // namespace netiface::cni
