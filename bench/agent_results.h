// What agent-bench measures, as plain samples in ms: filled by the cases (agent_cases.h), read by the
// report (agent_report_md.h).
#pragma once

#include <set>
#include <vector>

namespace netiface::bench::agent {

// How many of each measurement a run takes.
struct Counts {
  int n_start = 10;      // starts per start-up case
  int n_event = 20;      // remote leases per event-latency case
  int others = 1000;     // leases of other nodes in the large cases
  int n_bulk_start = 5;  // agent starts with `others` leases in etcd
  int n_steady = 10;     // steady-state reconciles
  int n_repair = 5;      // repairs per kind
};

// One remote lease at a time, each from t0 = just before its Put.
struct EventSamples {
  std::vector<double> put;         // etcd answered the Put
  std::vector<double> watch;       // the bench's own watcher saw the PUT
  std::vector<double> programmed;  // the last of the lease's entries was in the kernel (host-gw: its route)
  std::vector<double> agent;       // programmed − watch: the agent's part
  std::vector<double> probe_sent;  // vxlan: the first probe the remote pod answered left the local pod
  std::vector<double> reply;       // vxlan: its echo reply arrived
};

// Something deliberately broken right after a reconcile line, and the next reconcile mending it.
struct RepairSamples {
  std::vector<double> reconcile;  // the repairing reconcile, as the agent logged it
  std::vector<double> back;       // from just before the break until every entry was back
  std::vector<double> action;     // the break itself (`ip route flush`, `ip link del`)
  std::set<int> peers;            // peer counts the agent logged
};

struct BackendResults {
  std::vector<double> start_fresh, start_restart, start_restart_others, stop;
  EventSamples events_0, events_n;
  double bulk_write_ms = 0, bulk_programmed_ms = 0;
  std::vector<double> start_all;  // start with the others in etcd until all their entries are in the kernel
  std::vector<double> steady;
  std::set<int> steady_peers;
  RepairSamples repair_flush;   // after `ip route flush proto 78`
  RepairSamples repair_device;  // vxlan: after `ip link del flannel.1`
};

}  // namespace netiface::bench::agent
