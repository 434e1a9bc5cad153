// docs/agent-benchmarks.md as text, from the samples and the facts about the run. Pure.
#pragma once

#include <string>

#include "agent_results.h"

namespace netiface::bench::agent {

struct ReportFacts {
  std::string date;  // "2026-12-01 22:04 UTC"
  unsigned cpus = 0;
  std::string kernel;          // uname -r
  std::string etcd_version;    // "etcd 3.4.23"
  std::string flannel_search;  // what `apt-cache search flannel` printed ("" = nothing)
  Counts counts;
  double probe_interval_ms = 0;
  double run_s = 0;  // the whole run, set-up to teardown
};

std::string RenderReport(const BackendResults& hostgw, const BackendResults& vxlan, const ReportFacts& f);

// 1000 -> "1,000".
std::string Thousands(int v);

}  // namespace netiface::bench::agent
