// Shared helpers for the tests: running executables, throw-away network namespaces and folders,
// reading kernel state back with `ip -j`. Privileged helpers need root.
#pragma once

#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace netiface::testing {

// Where the built executables are ($NETIFACE_BIN_DIR, set by ctest) and the reference plugins.
std::string BinDir();
std::string Bin(const std::string& name);  // BinDir() + "/" + name
inline std::string RefDir() { return "/usr/lib/cni"; }
bool HaveReference();  // Debian's containernetworking-plugins is installed
bool IsRoot();

struct RunResult {
  int exit_code = -1;
  std::string out;
  std::string err;
  nlohmann::json Json() const;  // out parsed (null when empty); fails the test on invalid JSON
};

// Runs argv[0] (a path) with exactly `env` and `stdin_data`; waits for it.
RunResult Run(const std::vector<std::string>& argv, const std::map<std::string, std::string>& env,
              const std::string& stdin_data = "");
// Runs a shell command line with the inherited environment; returns its result.
RunResult Sh(const std::string& cmdline);

// One CNI call. When host_ns is set the plugin runs inside that namespace (a throw-away "host").
struct PluginCall {
  std::string command;  // ADD, DEL, CHECK, STATUS, GC, VERSION
  std::string container_id = "ctr1";
  std::string netns;  // path, e.g. TempNetns::path()
  std::string ifname = "eth0";
  std::string args;     // CNI_ARGS
  std::string path;     // CNI_PATH (default: BinDir())
  std::string host_ns;  // name of a TempNetns to run in, "" = current namespace
  std::map<std::string, std::string> extra_env;
};
RunResult RunPlugin(const std::string& plugin_path, const PluginCall& call, const nlohmann::json& conf);

// A network namespace `ip netns add`-ed under a unique name, deleted (with everything in it) by the
// destructor. Also deleted if a previous crashed run left one of the same name.
class TempNetns {
 public:
  explicit TempNetns(const std::string& prefix);
  ~TempNetns();
  TempNetns(const TempNetns&) = delete;
  TempNetns& operator=(const TempNetns&) = delete;

  const std::string& name() const { return name_; }
  std::string path() const { return "/run/netns/" + name_; }
  // `ip netns exec <name> sh -c <cmdline>`
  RunResult Sh(const std::string& cmdline) const;
  // `ip -j <args>` inside the namespace, parsed.
  nlohmann::json IpJson(const std::string& args) const;
  bool Ping(const std::string& addr, int count = 1) const;

 private:
  std::string name_;
};

// A fresh folder under /tmp, removed recursively by the destructor.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::string& path() const { return path_; }
  std::string operator/(const std::string& rel) const { return path_ + "/" + rel; }

 private:
  std::string path_;
};

// A short unique token (for names that must fit in 15 characters): <prefix><pid%10000><counter>.
std::string UniqueName(const std::string& prefix);

// Every spec version, and those at or above `min`.
std::vector<std::string> AllVersions();
std::vector<std::string> VersionsFrom(const std::string& min);

// Files in a folder (names only, sorted), [] when it does not exist.
std::vector<std::string> ListDir(const std::string& path);
std::string ReadFile(const std::string& path);
void WriteFile(const std::string& path, const std::string& data);

}  // namespace netiface::testing

// Skips the test unless running as root (privileged tests).
#define NETIFACE_REQUIRE_ROOT()                                       \
  do {                                                                \
    if (!::netiface::testing::IsRoot()) GTEST_SKIP() << "needs root"; \
  } while (0)
