// netiface-agent's command line: flanneld's flag names (so that a unit file works by changing the binary's
// name), Go's single-dash spelling too (-etcd-endpoints=...), and flanneld's FLANNELD_* environment
// variables (FLANNELD_ETCD_ENDPOINTS, ...) as defaults under the flags.
#pragma once

#include <iosfwd>
#include <map>
#include <string>
#include <vector>

#include "netiface/agent/daemon.h"
#include "netiface/cni/log.h"

namespace netiface::agent {

struct Command {
  enum Kind { kRun, kCleanup, kExit } kind = kRun;
  int exit_code = 0;  // kExit: what to exit with (0 after --help / --version, 2 on a usage error)
  AgentOptions options;
  log::Level log_level = log::Level::kInfo;
};

// Parses argv (argv[0] is the program name) with `env` as the process environment. Help, version and
// usage errors are written to `out` / `err` and yield kExit.
Command ParseCommandLine(const std::vector<std::string>& argv, const std::map<std::string, std::string>& env,
                         std::ostream& out, std::ostream& err);

// "-etcd-endpoints=x" -> "--etcd-endpoints=x"; single-letter flags ("-h") and "--..." stay as they are.
std::vector<std::string> NormalizeGoFlags(const std::vector<std::string>& argv);

}  // namespace netiface::agent
