// In-process delegation (in_process.h): whether a delegated call may run here, and the Env it runs on.
#include "netiface/cni/in_process.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <map>
#include <string>

#include "netiface/cni/file.h"

extern char** environ;

namespace netiface::cni {
namespace {

PluginLookup g_lookup = nullptr;

// The request's environment, stdin and stdout, as the child would have them; stderr is ours, as a
// child's is passed through.
class RequestEnv : public Env {
 public:
  explicit RequestEnv(const ExecRequest& req) : req_(req) {}
  std::optional<std::string> Get(const std::string& name) const override {
    auto it = req_.env.find(name);
    if (it == req_.env.end()) return std::nullopt;
    return it->second;
  }
  std::string ReadStdin() override {
    if (read_) return "";
    read_ = true;
    return req_.stdin_data;
  }
  void WriteOut(std::string_view s) override { out_.append(s); }
  void WriteErr(std::string_view s) override {
    try {
      WriteAll(STDERR_FILENO, s, "stderr");
    } catch (const std::exception&) {
      // A closed stderr has no reader to tell.
    }
  }
  std::string TakeOut() { return std::move(out_); }

 private:
  const ExecRequest& req_;
  bool read_ = false;
  std::string out_;
};

bool IsCniVariable(std::string_view key) { return key.substr(0, 4) == "CNI_"; }

// The request's environment is this process's with only CNI_* variables changed: what the delegate
// reads with getenv (its log and fault settings) is then what the child would read.
bool SameEnvironmentButCni(const std::map<std::string, std::string>& env) {
  size_t ours = 0;
  for (char** e = environ; e && *e; ++e) {
    const char* eq = std::strchr(*e, '=');
    if (eq == nullptr) continue;
    std::string_view key(*e, static_cast<size_t>(eq - *e));
    if (IsCniVariable(key)) continue;
    ++ours;
    auto it = env.find(std::string(key));
    if (it == env.end() || it->second != eq + 1) return false;
  }
  size_t theirs = 0;
  for (const auto& [key, value] : env) {
    if (!IsCniVariable(key)) ++theirs;
  }
  return ours == theirs;
}

bool IsThisExecutable(const std::string& path) {
  static struct stat self {};
  static const bool have_self = ::stat("/proc/self/exe", &self) == 0;
  struct stat st {};
  return have_self && ::stat(path.c_str(), &st) == 0 && st.st_dev == self.st_dev && st.st_ino == self.st_ino;
}

}  // namespace

void SetInProcessPlugins(PluginLookup lookup) { g_lookup = lookup; }

std::optional<InProcessTarget> InProcessTargetOf(const ExecRequest& req) {
  if (g_lookup == nullptr) return std::nullopt;
  if (const char* v = std::getenv("NETIFACE_IN_PROCESS"); v && std::string_view(v) == "0") return std::nullopt;
  std::string name = req.path.substr(req.path.rfind('/') + 1);
  std::optional<PluginEntry> entry = g_lookup(name);
  if (!entry || !IsThisExecutable(req.path) || !SameEnvironmentButCni(req.env)) return std::nullopt;
  return InProcessTarget{std::move(name), std::move(*entry)};
}

ExecOutput RunInProcess(const InProcessTarget& target, const ExecRequest& req) {
  RequestEnv env(req);
  int code = RunPluginInProcess(target.name, target.entry, env);
  return {code, env.TakeOut()};
}

}  // namespace netiface::cni
