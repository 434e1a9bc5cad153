// The Exec seam (exec.h): real children through Process, the default Start() for test doubles, and a
// plugin's output read as the spec reads it.
#include "netiface/cni/exec.h"

#include <optional>
#include <utility>

#include "netiface/cni/error.h"
#include "netiface/cni/in_process.h"
#include "netiface/cni/process.h"

namespace netiface::cni {
namespace {

using nlohmann::json;

SpawnSpec SpecOf(const ExecRequest& req) {
  SpawnSpec spec;
  spec.argv = {req.path};
  spec.env = req.env;
  spec.stdin_data = req.stdin_data;
  spec.stdin_mode = req.stdin_mode;
  spec.stderr_mode = Stderr::kInherit;
  spec.placement = Placement::kSpread;
  return spec;
}

class ProcessRunning : public Exec::Running {
 public:
  explicit ProcessRunning(Process process) : process_(std::move(process)) {}
  ExecOutput Wait() override {
    ProcessOutput out = process_.Wait();
    return {out.exit_code, std::move(out.stdout_data)};
  }
  void Release() override { process_.Release(); }

 private:
  Process process_;  // reaped by its destructor when Wait() was not called
};

// Children through Process, or in this process when the delegate is this very executable (in_process.h):
// then Start() is Exec's own, which runs the call at once or at Release().
class PosixExec : public Exec {
 public:
  ExecOutput Run(const ExecRequest& req) override {
    if (auto target = InProcessTargetOf(req)) return RunInProcess(*target, req);
    return std::make_unique<ProcessRunning>(Process::Spawn(SpecOf(req)))->Wait();
  }
  std::unique_ptr<Running> Start(const ExecRequest& req) override {
    if (InProcessTargetOf(req)) return Exec::Start(req);
    return std::make_unique<ProcessRunning>(Process::Spawn(SpecOf(req)));
  }
};

// What Exec::Start does for an Exec that only knows Run: the child runs at once, or at Release() when
// its stdin is held; one never released never runs (as a real child fed an empty stdin would fail).
class RunOnRelease : public Exec::Running {
 public:
  RunOnRelease(Exec& exec, ExecRequest req) : exec_(exec), req_(std::move(req)) {
    if (req_.stdin_mode == Stdin::kNow) Release();
  }
  void Release() override {
    if (!out_) out_ = exec_.Run(req_);
  }
  ExecOutput Wait() override { return out_ ? *out_ : ExecOutput{1, ""}; }
  bool Finished() const override { return out_.has_value(); }

 private:
  Exec& exec_;
  ExecRequest req_;
  std::optional<ExecOutput> out_;
};

std::string BaseName(const std::string& path) {
  size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

}  // namespace

Exec& DefaultExec() {
  static PosixExec exec;
  return exec;
}

std::unique_ptr<Exec::Running> Exec::Start(const ExecRequest& req) {
  return std::make_unique<RunOnRelease>(*this, req);
}

json InterpretPluginOutput(const ExecOutput& out, const std::string& path) {
  std::string name = BaseName(path);
  json j = json::parse(out.stdout_data, nullptr, /*allow_exceptions=*/false);
  bool blank = out.stdout_data.find_first_not_of(" \t\r\n") == std::string::npos;
  if (out.exit_code != 0) {
    std::string fallback = "plugin " + name + " failed with exit code " + std::to_string(out.exit_code);
    if (blank) throw Error(kDelegateFailed, fallback);
    if (j.is_discarded()) throw Error(kDelegateFailed, fallback, out.stdout_data.substr(0, 1024));
    throw Error::FromJson(j, fallback);
  }
  if (blank) return nullptr;
  if (j.is_discarded()) {
    throw Error(kDelegateFailed, "plugin " + name + " printed invalid JSON", out.stdout_data.substr(0, 1024));
  }
  return j;
}

json ExecPlugin(Exec& exec, const ExecRequest& req) { return InterpretPluginOutput(exec.Run(req), req.path); }

}  // namespace netiface::cni
