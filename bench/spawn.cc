#include "spawn.h"

#include <time.h>

#include <optional>
#include <utility>

#include "netiface/cni/error.h"
#include "netiface/cni/process.h"

namespace netiface::bench {

static double NowMs() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

Outcome Spawn(const Call& call) {
  cni::SpawnSpec spec;
  spec.argv = {call.path};
  spec.env = call.env;
  spec.stdin_data = call.stdin_data;
  spec.stderr_mode = cni::Stderr::kDiscard;
  // As a runtime starts a plugin: the plugin's own delegates are spread by libcni, the plugin is not.
  spec.placement = cni::Placement::kAsSpawned;
  Outcome o;
  double start = NowMs();
  std::optional<cni::Process> child;
  try {
    child.emplace(cni::Process::Spawn(spec));
  } catch (const cni::Error&) {
    return o;  // not started: exit_code stays -1
  }
  cni::ProcessOutput out = child->Wait();
  o.ms = NowMs() - start;
  o.exit_code = out.exit_code;
  o.max_rss_kb = out.max_rss_kb;
  o.out = std::move(out.stdout_data);
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
