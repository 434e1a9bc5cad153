// In-process delegation. When a plugin delegates (IPAM, a meta plugin's delegate) and the executable
// CNI_PATH resolves the delegate to is this very executable (same device and inode: the multi-call image
// netiface-cni, whose every plugin name is a link to it), the delegated call runs here, on the calling
// thread, instead of in a new process: one process start less per delegation. It sees exactly what the
// exec'd child would: the request's environment (an Env over its map; the call is made only when that
// map is this process's environment with the CNI_* variables changed, so whatever the delegate reads
// with getenv is the same too), the config as its stdin, its stdout captured as the output, its exit
// code, its stderr on ours. The logging state (level, file, context) and the fault hook's program are the
// delegate's for the call and the caller's again after it. NETIFACE_IN_PROCESS=0 in the environment
// turns it off (every delegate is exec'd).
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "netiface/cni/exec.h"
#include "netiface/cni/skel.h"

namespace netiface::cni {

struct PluginEntry {
  PluginFuncs funcs;
  PluginInfo info;
};
// What the image holds, by plugin name (nullopt: not here).
using PluginLookup = std::optional<PluginEntry> (*)(std::string_view name);

// Called by the multi-call image's main before it dispatches; without it nothing runs in process.
void SetInProcessPlugins(PluginLookup lookup);

// What DefaultExec() (exec.h) asks before it spawns: the plugin `req` would run here, or nullopt.
struct InProcessTarget {
  std::string name;
  PluginEntry entry;
};
std::optional<InProcessTarget> InProcessTargetOf(const ExecRequest& req);
// Runs the target on the request: what an exec of it would return.
ExecOutput RunInProcess(const InProcessTarget& target, const ExecRequest& req);

// Runs `entry` as the plugin `program` on `env`, with the process-wide state of a plugin call (the name in
// log lines, the log settings, the fault hook's program) set aside and put back around it. The exit code.
int RunPluginInProcess(std::string_view program, const PluginEntry& entry, Env& env);

}  // namespace netiface::cni
