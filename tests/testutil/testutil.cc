#include "testutil.h"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <stdexcept>

#include <gtest/gtest.h>

#include "netiface/cni/error.h"
#include "netiface/cni/process.h"

extern char** environ;

namespace netiface::testing {

namespace fs = std::filesystem;

std::string BinDir() {
  const char* d = std::getenv("NETIFACE_BIN_DIR");
  return d ? d : "build/bin";
}
std::string Bin(const std::string& name) { return BinDir() + "/" + name; }
bool HaveReference() { return fs::exists(RefDir() + "/host-local"); }
bool IsRoot() { return geteuid() == 0; }

nlohmann::json RunResult::Json() const {
  if (out.empty()) return nullptr;
  try {
    return nlohmann::json::parse(out);
  } catch (const std::exception& e) {
    ADD_FAILURE() << "invalid JSON on stdout: " << e.what() << "\n" << out;
    return nullptr;
  }
}

RunResult Run(const std::vector<std::string>& argv, const std::map<std::string, std::string>& env,
              const std::string& stdin_data) {
  cni::SpawnSpec spec;
  spec.argv = argv;
  spec.env = env;
  // The plugins' log file: the one ctest names for this tree (never the machine's /var/log), unless the
  // test sets its own.
  if (const char* log_file = std::getenv("NETIFACE_LOG_FILE"); log_file && !env.count("NETIFACE_LOG_FILE")) {
    spec.env["NETIFACE_LOG_FILE"] = log_file;
  }
  spec.stdin_data = stdin_data;
  spec.stderr_mode = cni::Stderr::kCapture;
  spec.placement = cni::Placement::kAsSpawned;
  std::optional<cni::Process> child;
  try {
    child.emplace(cni::Process::Spawn(spec));
  } catch (const cni::Error& e) {
    return RunResult{127, "", e.what()};  // what a shell reports for a command it cannot execute
  }
  cni::ProcessOutput out = child->Wait();
  return RunResult{out.exit_code, std::move(out.stdout_data), std::move(out.stderr_data)};
}

static std::map<std::string, std::string> InheritedEnv() {
  std::map<std::string, std::string> env;
  for (char** e = environ; *e; ++e) {
    std::string kv(*e);
    auto eq = kv.find('=');
    if (eq != std::string::npos) env[kv.substr(0, eq)] = kv.substr(eq + 1);
  }
  return env;
}

RunResult Sh(const std::string& cmdline) { return Run({"/bin/sh", "-c", cmdline}, InheritedEnv()); }

RunResult RunPlugin(const std::string& plugin_path, const PluginCall& call, const nlohmann::json& conf) {
  std::map<std::string, std::string> env;
  env["PATH"] = "/usr/sbin:/usr/bin:/sbin:/bin";
  env["CNI_COMMAND"] = call.command;
  env["CNI_CONTAINERID"] = call.container_id;
  env["CNI_NETNS"] = call.netns;
  env["CNI_IFNAME"] = call.ifname;
  env["CNI_ARGS"] = call.args;
  env["CNI_PATH"] = call.path.empty() ? BinDir() : call.path;
  for (const auto& [k, v] : call.extra_env) env[k] = v;
  std::vector<std::string> argv;
  if (!call.host_ns.empty()) {
    argv = {"/usr/bin/nsenter", "--net=/run/netns/" + call.host_ns, "--", plugin_path};
  } else {
    argv = {plugin_path};
  }
  return Run(argv, env, conf.is_null() ? std::string() : conf.dump());
}

TempNetns::TempNetns(const std::string& prefix) : name_(UniqueName(prefix)) {
  testing::Sh("ip netns del " + name_ + " 2>/dev/null");
  auto r = testing::Sh("ip netns add " + name_);
  if (r.exit_code != 0) throw std::runtime_error("ip netns add " + name_ + ": " + r.err);
  testing::Sh("ip netns exec " + name_ + " ip link set lo up");
}

TempNetns::~TempNetns() {
  // Deleting the namespace deletes every link in it; veth peers outside go with them.
  testing::Sh("ip netns pids " + name_ + " 2>/dev/null | xargs -r kill -9 2>/dev/null; ip netns del " + name_ +
              " 2>/dev/null");
}

RunResult TempNetns::Sh(const std::string& cmdline) const {
  return Run({"/usr/bin/nsenter", "--net=" + path(), "--", "/bin/sh", "-c", cmdline}, InheritedEnv());
}

nlohmann::json TempNetns::IpJson(const std::string& args) const {
  auto r = Sh("ip -j " + args);
  if (r.exit_code != 0) return nlohmann::json::array();
  try {
    return r.out.empty() ? nlohmann::json::array() : nlohmann::json::parse(r.out);
  } catch (...) {
    return nlohmann::json::array();
  }
}

bool TempNetns::Ping(const std::string& addr, int count) const {
  return Sh("ping -n -q -c " + std::to_string(count) + " -W 2 " + addr + " >/dev/null 2>&1").exit_code == 0;
}

TempDir::TempDir() {
  char tmpl[] = "/tmp/netiface-test-XXXXXX";
  if (!mkdtemp(tmpl)) throw std::runtime_error("mkdtemp");
  path_ = tmpl;
}
TempDir::~TempDir() {
  std::error_code ec;
  fs::remove_all(path_, ec);
}

std::string UniqueName(const std::string& prefix) {
  static std::atomic<int> counter{0};
  return prefix + std::to_string(getpid() % 100000) + "x" + std::to_string(counter++);
}

std::vector<std::string> AllVersions() { return {"0.1.0", "0.2.0", "0.3.0", "0.3.1", "0.4.0", "1.0.0", "1.1.0"}; }
std::vector<std::string> VersionsFrom(const std::string& min) {
  std::vector<std::string> all = AllVersions(), out;
  bool on = false;
  for (auto& v : all) {
    if (v == min) on = true;
    if (on) out.push_back(v);
  }
  return out;
}

std::vector<std::string> ListDir(const std::string& path) {
  std::vector<std::string> names;
  std::error_code ec;
  for (auto it = fs::directory_iterator(path, ec); !ec && it != fs::directory_iterator(); it.increment(ec))
    names.push_back(it->path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

std::string ReadFile(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

void WriteFile(const std::string& path, const std::string& data) {
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  f << data;
}

}  // namespace netiface::testing
