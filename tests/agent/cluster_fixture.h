// A cluster on one machine, entirely in namespaces the test makes: an "underlay" namespace with a bridge
// and a real etcd on an underlay address, node namespaces with an uplink on that bridge, each running the
// built netiface-agent, and pods attached through the netiface CLI with our flannel -> bridge -> host-local.
#pragma once

#include <signal.h>
#include <sys/types.h>

#include <chrono>
#include <functional>
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
  int index = 0;                      // 1-based: uplink address 192.0.2.<index>
  std::unique_ptr<TempNetns> ns;
  std::string dir;                    // subnet.env, conflist, data dirs, agent log
  std::unique_ptr<BackgroundProcess> agent;
  std::vector<std::unique_ptr<TempNetns>> pods;

  std::string subnet_env() const { return dir + "/subnet.env"; }
  std::string agent_log() const { return dir + "/agent.log"; }
};

class Cluster {
 public:
  // Makes the underlay (bridge 192.0.2.254/24) and starts etcd on it; `nodes` node namespaces, each with
  // eth0 = 192.0.2.<i>/24, a default route via 192.0.2.254 and ip_forward on.
  explicit Cluster(int nodes, bool etcd_tls = false);
  ~Cluster();

  EtcdServer& etcd() { return *etcd_; }
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
  bool WaitSubnetEnv(int i, std::chrono::milliseconds timeout = std::chrono::seconds(20));
  // Routes in node i's main table carrying the agent's protocol: "dst via gw".
  std::vector<std::string> AgentRoutes(int i);
  std::string AgentLog(int i) const;
  // The log since the agent's last start.
  std::string AgentLogSinceStart(int i) const;

  // Attaches a new pod on node i through the netiface CLI (flannel -> bridge -> host-local); returns its IP.
  std::string AddPod(int i);
  void DelPods(int i);
  std::string PodIp(int i, int pod) const;
  bool PodPing(int i, int pod, const std::string& addr) const;

  // `netiface leases --json` run in the underlay (where etcd is).
  nlohmann::json Leases();

 private:
  std::string Cli(int i, const std::string& verb, const std::string& pod_path);

  std::unique_ptr<TempNetns> ul_;
  std::unique_ptr<EtcdServer> etcd_;
  TempDir dir_;
  std::vector<Node> nodes_;
  std::vector<std::vector<std::string>> pod_ips_;
};

}  // namespace netiface::testing
