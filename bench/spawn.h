// Runs one plugin process and measures it: wall time from spawn to reap, and the peak RSS of the process
// and the descendants it reaped (the delegate IPAM plugin), as /usr/bin/time would report it. Every call
// goes through cni-bench-probe (probe.cc), which spawns and measures the plugin from a process of a few
// hundred kB: spawned from the bench itself, a plugin's peak RSS would include the bench's own.
#pragma once

#include <map>
#include <string>
#include <vector>

namespace netiface::bench {

struct Call {
  std::string path;
  std::map<std::string, std::string> env;
  std::string stdin_data;
};

struct Outcome {
  int exit_code = -1;
  double ms = 0;
  long max_rss_kb = 0;
  std::string out;
};

// Where the probe is and the folder for its reports: set once, before the first Spawn.
void UseProbe(const std::string& probe, const std::string& report_dir);

// The probe's own peak RSS in the last call it reported (kB): the floor below which no max_rss_kb can go.
long ProbeFloorKb();

Outcome Spawn(const Call& call);

// A CNI call: CNI_* variables plus PATH.
Call CniCall(const std::string& plugin, const std::string& command, const std::string& container_id,
             const std::string& netns, const std::string& cni_path, const std::string& conf);

}  // namespace netiface::bench
