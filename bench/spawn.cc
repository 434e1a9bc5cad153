#include "spawn.h"

#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <optional>
#include <stdexcept>
#include <utility>

#include "netiface/cni/error.h"
#include "netiface/cni/process.h"

namespace netiface::bench {

namespace {
std::string probe_path;
std::string report_dir;
std::atomic<long> probe_floor_kb{0};
}  // namespace

void UseProbe(const std::string& probe, const std::string& dir) {
  probe_path = probe;
  report_dir = dir;
  std::filesystem::create_directories(dir);
}

long ProbeFloorKb() { return probe_floor_kb.load(); }

Outcome Spawn(const Call& call) {
  if (probe_path.empty()) throw std::logic_error("bench::Spawn before UseProbe");
  // One report file per thread: the parallel scenario spawns from several at once.
  const std::string report = report_dir + "/probe-" + std::to_string(::syscall(SYS_gettid));
  cni::SpawnSpec spec;
  spec.argv = {probe_path, report, call.path};
  std::error_code ec;
  std::filesystem::remove(report, ec);  // never read an earlier call's report
  spec.env = call.env;
  spec.stdin_data = call.stdin_data;
  spec.stderr_mode = cni::Stderr::kDiscard;
  // As a runtime starts a plugin: the plugin's own delegates are spread by libcni, the plugin is not.
  spec.placement = cni::Placement::kAsSpawned;
  Outcome o;
  std::optional<cni::Process> child;
  try {
    child.emplace(cni::Process::Spawn(spec));
  } catch (const cni::Error&) {
    return o;  // not started: exit_code stays -1
  }
  cni::ProcessOutput out = child->Wait();
  o.out = std::move(out.stdout_data);
  // EXIT MS MAXRSS_KB FLOOR_KB, from the probe; without a report the call counts as not run.
  std::ifstream in(report);
  long floor_kb = 0;
  if (!(in >> o.exit_code >> o.ms >> o.max_rss_kb >> floor_kb) || o.exit_code != out.exit_code) {
    o.exit_code = -1;
    return o;
  }
  long seen = probe_floor_kb.load();
  while (floor_kb > seen && !probe_floor_kb.compare_exchange_weak(seen, floor_kb)) {
  }
  return o;
}

Call CniCall(const std::string& plugin, const std::string& command, const std::string& container_id,
             const std::string& netns, const std::string& cni_path, const std::string& conf) {
  Call c;
  c.path = plugin;
  c.env = {{"PATH", "/usr/sbin:/usr/bin:/sbin:/bin"},
           {"CNI_COMMAND", command},
           {"CNI_CONTAINERID", container_id},
           {"CNI_NETNS", netns},
           {"CNI_IFNAME", "eth0"},
           {"CNI_PATH", cni_path}};
  c.stdin_data = conf;
  return c;
}

}  // namespace netiface::bench
