// A cluster on one machine, entirely in namespaces the test makes: an "underlay" namespace with a bridge
// and a real etcd (one member or several, optionally with mutual TLS) on underlay addresses, node
// namespaces with an uplink on that bridge (IPv4, optionally IPv6 too), each running the built
// netiface-agent, and pods attached through the netiface CLI with our flannel -> bridge -> host-local.
#pragma once

#include <signal.h>
#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "etcd_server.h"
#include "testutil.h"

namespace netiface::testing {

// Polls `pred` every 100 ms until it holds or `timeout` passes; returns its last value.
bool WaitFor(const std::function<bool()>& pred, std::chrono::milliseconds timeout);

// A process started in the background in a namespace (`ip netns exec` execs, so the pid is the
// program's), its stdout and stderr appended to `log`. Stopped by its pid.
class BackgroundProcess {
 public:
  BackgroundProcess(const std::string& netns, const std::vector<std::string>& argv, const std::string& log);
  ~BackgroundProcess();  // Kill(SIGKILL) if still running
  BackgroundProcess(const BackgroundProcess&) = delete;
  BackgroundProcess& operator=(const BackgroundProcess&) = delete;
  // Sends `sig` and waits up to 10 s for the exit; returns the exit status (as waitpid's) or -1.
  int Stop(int sig = SIGTERM);
  bool Running();
  pid_t pid() const { return pid_; }

 private:
  pid_t pid_ = -1;
  int status_ = -1;
};

struct Node {
  int index = 0;  // 1-based: uplink address NodeIp(index) (and NodeIp6(index))
  std::unique_ptr<TempNetns> ns;
  std::string dir;  // subnet.env, conflist, data dirs, agent log
  std::unique_ptr<BackgroundProcess> agent;
  std::vector<std::unique_ptr<TempNetns>> pods;

  std::string subnet_env() const { return dir + "/subnet.env"; }
  std::string agent_log() const { return dir + "/agent.log"; }
};

// Node i's uplink addresses: 192.0.2.<i> and 2001:db8:1::<i> (i in hex).
std::string NodeIp(int i);
std::string NodeIp6(int i);

struct ClusterOptions {
  int nodes = 3;
  // 1: one etcd on the bridge's address 192.0.2.254 (etcd()); more: an EtcdCluster (etcd_cluster()), every
  // member on 192.0.2.254 with ports of its own. The agents get every member's endpoint.
  int etcd_members = 1;
  bool etcd_tls = false;  // https with client certificates; the agents and the CLI get the files
  // An IPv6 underlay too: bridge 2001:db8:1::fe/64, node eth0 NodeIp6(i)/64 (nodad), an IPv6 default route
  // via ::fe and IPv6 forwarding on in every node.
  bool ipv6 = false;
};

// Packets the underlay bridge forwarded to a UDP port (CountUnderlayUdp), per underlay family.
struct UdpCount {
  uint64_t v4 = 0, v6 = 0;
};

class Cluster {
 public:
  // Makes the underlay (bridge 192.0.2.254/24) and starts etcd on it; `nodes` node namespaces, each with
  // eth0 = 192.0.2.<i>/24, a default route via 192.0.2.254 and ip_forward on.
  explicit Cluster(int nodes, bool etcd_tls = false);
  explicit Cluster(const ClusterOptions& o);
  ~Cluster();

  const ClusterOptions& options() const { return o_; }
  // The single etcd (etcd_members == 1) or the cluster (etcd_members > 1); the other one throws
  // std::logic_error.
  EtcdServer& etcd();
  EtcdCluster& etcd_cluster();
  // Every member's client URL, comma-separated (the agents' --etcd-endpoints).
  std::string EtcdEndpoints() const;
  // etcdctl against every member, in the underlay, with the client certificate when TLS is on.
  RunResult Etcdctl(const std::vector<std::string>& args) const;
  const std::string& underlay() const { return ul_->name(); }
  TempNetns& underlay_ns() { return *ul_; }
  Node& node(int i) { return nodes_[i - 1]; }
  int size() const { return static_cast<int>(nodes_.size()); }

  // Writes <prefix>/config with etcdctl (flanneld's JSON).
  void PutConfig(const std::string& json, const std::string& prefix = "/coreos.com/network");
  // Starts node i's agent with the common flags plus `extra`.
  void StartAgent(int i, const std::vector<std::string>& extra = {});
  int StopAgent(int i, int sig = SIGTERM);
  // The node's subnet.env FLANNEL_SUBNET ("10.5.34.1/24"), or "" when the file is not there.
  std::string Subnet(int i) const;
  // Its FLANNEL_IPV6_SUBNET ("fd00:5:0:22::1/64"), or "".
  std::string Subnet6(int i) const;
  bool WaitSubnetEnv(int i, std::chrono::milliseconds timeout = std::chrono::seconds(20));
  // Routes in node i's main table carrying the agent's protocol: "dst via gw".
  std::vector<std::string> AgentRoutes(int i);
  std::string AgentLog(int i) const;
  // The log since the agent's last start.
  std::string AgentLogSinceStart(int i) const;

  // Attaches a new pod on node i through the netiface CLI (flannel -> bridge -> host-local); returns its
  // IPv4 address (its IPv6 one when it has no IPv4) and records both (a test failure when it has neither).
  std::string AddPod(int i);
  void DelPods(int i);
  std::string PodIp(int i, int pod) const;  // "" when the pod has none of that family
  std::string PodIp6(int i, int pod) const;
  // One ping (IPv4, or IPv6 for an IPv6 address) from the pod; PodPing6 forces `ping -6`.
  bool PodPing(int i, int pod, const std::string& addr) const;
  bool PodPing6(int i, int pod, const std::string& addr) const;

  // `netiface leases --json` run in the underlay (where etcd is).
  nlohmann::json Leases();
  // Every lease record under <prefix>/subnets/ as etcd holds it: the key's last element -> the parsed value.
  std::map<std::string, nlohmann::json> LeaseRecords(const std::string& prefix = "/coreos.com/network");
  // The record whose PublicIP is node i's (null when none).
  nlohmann::json LeaseRecordOf(int i, const std::string& prefix = "/coreos.com/network");

  // From now on the underlay bridge counts the packets it forwards to UDP `port` (an nftables table of the
  // bridge family in the underlay namespace, hook forward, one named counter per family).
  void CountUnderlayUdp(int port = 8472);
  UdpCount UnderlayUdpPackets() const;

 private:
  std::string Cli(int i, const std::string& verb, const std::string& pod_path);
  // --etcd-cafile, --etcd-certfile, --etcd-keyfile with the client files; empty without TLS.
  std::vector<std::string> EtcdTlsFlags() const;

  ClusterOptions o_;
  std::unique_ptr<TempNetns> ul_;
  std::unique_ptr<EtcdServer> etcd_;
  std::unique_ptr<EtcdCluster> etcd_cluster_;
  TempDir dir_;
  std::vector<Node> nodes_;
  std::vector<std::vector<std::string>> pod_ips_, pod_ip6s_;
};

}  // namespace netiface::testing
