// The measurements, one function per backend, over a Rig that is set up; and the event and reconcile
// measurements both share.
#pragma once

#include <chrono>
#include <functional>
#include <string>
#include <vector>

#include "agent_event_watch.h"
#include "agent_pinger.h"
#include "agent_pod_path.h"
#include "agent_results.h"
#include "agent_rig.h"

namespace netiface::bench::agent {

inline constexpr char kHostGwConfig[] = R"({"Network":"10.0.0.0/8","SubnetLen":24,"Backend":{"Type":"host-gw"}})";
inline constexpr char kVxlanConfig[] = R"({"Network":"10.0.0.0/8","SubnetLen":24,"Backend":{"Type":"vxlan","VNI":1}})";

// The subnets the remote node's leases take in the event cases: 10.<second>.<i>.0/24, i < n. host-gw
// uses seconds 200 and 201, vxlan 210 and 211 (0 and `others` other leases).
std::vector<Peer> RemoteNodePeers(int second, int n, bool vxlan);

// Starts, remote lease -> route -> echo reply, `others` leases, reconciles and repairs of host-gw.
// REQUIRES: the rig is set up with kHostGwConfig, no agent runs, `remote` holds RemoteNodePeers(200|201).
BackendResults RunHostGw(Rig& rig, RemoteNode& remote, const Counts& n, std::chrono::microseconds probe_interval);
// The same for vxlan, and the repair of a deleted flannel.1. Drops every lease and switches the config to
// kVxlanConfig first. REQUIRES: no agent runs, `remote` holds RemoteNodePeers(210|211).
BackendResults RunVxlan(Rig& rig, RemoteNode& remote, const Counts& n, std::chrono::microseconds probe_interval);

// n.n_start starts of a new node (no lease, no subnet.env; `fresh` says what else is missing) and as many
// restarts with the lease alive, each timed until subnet.env, into r->start_fresh and r->start_restart;
// progress on stderr under `backend`.
void MeasureStarts(Rig& rig, const Counts& n, const std::string& backend, const std::string& fresh, BackendResults* r);

// An entry a lease must become in the node's kernel: `key` with `value`, as `monitor` sees it.
struct Expected {
  KernelMonitor* monitor;
  std::string key, value;
};
// One lease of `peers` at a time: the pinger probes <subnet>.2 every `interval` from just before t0, the
// Put; then every entry of `expect(peer)` and the first echo reply are awaited. Each lease is deleted
// again, and its entries awaited gone, before the next. Fails when a probe sent before t0 is answered.
void MeasureEvents(Rig& rig, EventWatch& watch, Pinger& pinger, const std::vector<Peer>& peers,
                   const std::function<std::vector<Expected>(const Peer&)>& expect, std::chrono::microseconds interval,
                   EventSamples* out);

// `n` reconcile lines of the running agent whose reconcile began after `after` (the moment every entry
// was in), the peers they logged added to `peers`.
std::vector<double> SteadyReconciles(Rig& rig, ReconcileTail& tail, int n, Clock::time_point after,
                                     std::set<int>* peers);
// `n` times, right after a reconcile line: `break_it()`, then `wait_back(t0)` (when every entry was
// re-added at or after t0), then the next reconcile line. REQUIRES: the agent runs with
// --reconcile-interval=1 and --log-level=debug, its log tailed by `tail`.
RepairSamples Repairs(Rig& rig, ReconcileTail& tail, int n, const std::function<void()>& break_it,
                      const std::function<Clock::time_point(Clock::time_point)>& wait_back);

}  // namespace netiface::bench::agent
