// The world agent-bench measures in, and the moves every case makes in it. The process first moves
// into a private network namespace of its own (it never acts in the machine's), makes an underlay
// namespace (bridge 192.0.2.254/24, etcd on 192.0.2.254:2379) and a node namespace (eth0 =
// 192.0.2.1/24 on that bridge), then moves its main thread into the node: its etcd clients and kernel
// monitors act there, next to the agent. Everything it starts is stopped by pid and everything it makes
// is removed, also on SIGINT/SIGTERM and on failure (agent_procs.h).
#pragma once

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "agent_kernel_monitor.h"
#include "agent_log_tail.h"
#include "agent_peers.h"
#include "agent_procs.h"
#include "netiface/etcd/client.h"

namespace netiface::bench::agent {

inline constexpr char kEtcdIp[] = "192.0.2.254";
inline constexpr char kNodeIp[] = "192.0.2.1";
inline constexpr char kEndpoint[] = "http://192.0.2.254:2379";
inline constexpr int kProtocol = 78;
inline constexpr int kWriters = 4;  // etcd clients writing bulk leases in parallel

double Ms(Clock::duration d);
std::string ReadFile(const std::string& path);
std::string Tail(const std::string& text, size_t bytes = 3000);

class Rig {
 public:
  explicit Rig(std::string bin) : bin_(std::move(bin)) {}

  // Makes the namespaces, starts etcd and writes the network config `config`; the calling thread ends
  // up in the node namespace. Throws std::runtime_error on any failure.
  void Setup(const std::string& config);
  void PutConfig(const std::string& config);
  // Stops the agent, revokes the bench's leases, stops etcd.
  void Finish();

  // --- the agent: `ip netns exec <node> netiface-agent --etcd-endpoints=... --subnet-file=... --iface=eth0 <extra>`
  void StartAgent(const std::vector<std::string>& extra);
  // SIGTERM, reaped; the time it took is added to stops(). Throws when it did not exit 0.
  void StopAgent();
  // Throws, with the log's tail, when the agent exited.
  void CheckAgent();
  // Runs `poll(slice_end)` in 100 ms slices until it yields a value or `deadline`; fails when the agent
  // dies or time runs out.
  template <typename F>
  auto WhileAgentRuns(Clock::time_point deadline, const std::string& what, F poll) {
    for (;;) {
      Clock::time_point slice = std::min(deadline, Clock::now() + std::chrono::milliseconds(100));
      if (auto v = poll(slice)) return *v;
      CheckAgent();
      if (Clock::now() >= deadline) Fail(what + ": timed out");
    }
  }
  // One start, from just before the fork until subnet.env is renamed into place, in ms.
  double TimeStart(const std::vector<std::string>& extra);
  // When `w` (made before the agent started) saw subnet.env written.
  Clock::time_point WaitSubnetEnv(Clock::time_point deadline, FileWatch& w);
  // The next reconcile line of `tail`, within `timeout`.
  ReconcileTail::Line NextReconcile(ReconcileTail& tail, std::chrono::milliseconds timeout);
  // Deletes this node's lease (a node that never had one), its subnet.env, and runs `netiface-agent
  // cleanup` (rules, routes of proto 78, vxlan devices).
  void ForgetNode();
  // The node's FLANNEL_SUBNET ("10.0.7.1/24") and MTU from subnet.env.
  std::string SubnetEnvValue(const std::string& name) const;

  // --- the kernel of the node, as the monitors saw it
  // When the last of `keys` was added at or after `since` (`monitor` is routes() or neighbours()).
  Clock::time_point WaitAll(KernelMonitor& monitor, const std::vector<std::string>& keys, Clock::time_point since,
                            Clock::time_point deadline, const std::string& what);
  KernelMonitor& routes() { return *routes_; }
  KernelMonitor& neighbours() { return *neighbours_; }

  // --- etcd
  // Writes `peers` with kWriters clients in parallel on the bench's lease; returns the time it took.
  double WriteLeases(const std::vector<Peer>& peers);
  // Revokes the bench's lease (every lease it wrote goes with it) and grants a fresh one.
  void DropBenchLeases();
  etcd::Client& client() { return *client_; }
  int64_t bench_lease() const { return lease_id_; }
  static etcd::ClientOptions ClientOptions();

  const Netns& node() const { return *node_; }
  const Netns& underlay() const { return *underlay_; }
  const TempDir& dir() const { return *dir_; }
  const std::string& tag() const { return tag_; }
  const std::string& agent_log() const { return agent_log_; }
  // Agent stops since the last TakeStops(), in ms.
  std::vector<double> TakeStops() { return std::exchange(stops_, {}); }
  // Throws std::runtime_error with `what` and the agent log's tail.
  [[noreturn]] void Fail(const std::string& what) const;

 private:
  std::string bin_;
  std::string tag_ = std::to_string(::getpid() % 100000);
  std::unique_ptr<TempDir> dir_;
  std::unique_ptr<Netns> underlay_, node_;
  std::unique_ptr<Process> etcd_, agent_;
  std::unique_ptr<KernelMonitor> routes_, neighbours_;
  std::unique_ptr<etcd::Client> client_;
  int64_t lease_id_ = 0;
  int agent_runs_ = 0;
  std::string agent_log_;
  std::vector<double> stops_;
};

}  // namespace netiface::bench::agent
