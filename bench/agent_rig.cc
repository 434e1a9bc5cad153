#include "agent_rig.h"

#include <sched.h>
#include <sys/wait.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <stdexcept>
#include <thread>

#include <fmt/format.h>

#include "netiface/agent/lease.h"
#include "netiface/netlink/netns.h"

namespace netiface::bench::agent {

namespace na = netiface::agent;
using std::chrono::milliseconds;
using std::chrono::seconds;

double Ms(Clock::duration d) { return std::chrono::duration<double, std::milli>(d).count(); }

std::string ReadFile(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(f), {});
}

std::string Tail(const std::string& text, size_t bytes) {
  return text.size() > bytes ? "..." + text.substr(text.size() - bytes) : text;
}

etcd::ClientOptions Rig::ClientOptions() {
  etcd::ClientOptions c;
  c.endpoints = {kEndpoint};
  return c;
}

void Rig::Fail(const std::string& what) const {
  throw std::runtime_error(what + (agent_log_.empty() ? "" : "; agent log:\n" + Tail(ReadFile(agent_log_))));
}

void Rig::Setup(const std::string& config) {
  if (::unshare(CLONE_NEWNET) != 0)
    throw std::runtime_error(std::string("unshare(CLONE_NEWNET): ") + std::strerror(errno));
  dir_ = std::make_unique<TempDir>();
  underlay_ = std::make_unique<Netns>("nab-ul-" + tag_);
  node_ = std::make_unique<Netns>("nab-n-" + tag_);
  const std::string ul = "ip -n " + underlay_->name(), n = "ip -n " + node_->name();
  ShOrThrow(ul + " link add br0 type bridge && " + ul + " addr add " + kEtcdIp + "/24 dev br0 && " + ul +
            " link set br0 up && " + ul + " link add v1 type veth peer name eth0 netns " + node_->name() + " && " + ul +
            " link set v1 master br0 up && " + n + " addr add " + kNodeIp + "/24 dev eth0 && " + n +
            " link set eth0 up && " + n + " route add default via " + kEtcdIp);
  auto ns = nl::NetNs::Open(node_->path());
  if (!ns || ::setns(ns->fd(), CLONE_NEWNET) != 0) throw std::runtime_error("cannot enter " + node_->path());
  routes_ = KernelMonitor::Routes(kProtocol);
  neighbours_ = KernelMonitor::Neighbours();

  std::cerr << "agent-bench: starting etcd in " << underlay_->name() << "\n";
  const std::string peer = std::string("http://") + kEtcdIp + ":2380";
  etcd_ = std::make_unique<Process>(std::vector<std::string>{"/bin/ip",
                                                             "netns",
                                                             "exec",
                                                             underlay_->name(),
                                                             "/usr/bin/etcd",
                                                             "--name",
                                                             "bench",
                                                             "--data-dir",
                                                             *dir_ / "etcd",
                                                             "--listen-client-urls",
                                                             kEndpoint,
                                                             "--advertise-client-urls",
                                                             kEndpoint,
                                                             "--listen-peer-urls",
                                                             peer,
                                                             "--initial-advertise-peer-urls",
                                                             peer,
                                                             "--initial-cluster",
                                                             "bench=" + peer,
                                                             "--initial-cluster-state",
                                                             "new",
                                                             "--log-level",
                                                             "warn",
                                                             "--logger",
                                                             "zap"},
                                    *dir_ / "etcd.log");
  etcd::ClientOptions opts = ClientOptions();
  opts.connect_timeout_ms = 500;
  opts.request_timeout_ms = 1000;
  etcd::Client probe(opts);
  for (Clock::time_point deadline = Clock::now() + seconds(30);;) {
    try {
      probe.Put(na::ConfigKey(na::kDefaultPrefix), config);
      break;
    } catch (const etcd::Error& e) {
      if (!etcd_->Running())
        throw std::runtime_error("etcd exited during start-up: " + Tail(ReadFile(*dir_ / "etcd.log")));
      if (Clock::now() >= deadline) throw std::runtime_error(std::string("etcd did not answer in 30 s: ") + e.what());
      std::this_thread::sleep_for(milliseconds(50));
    }
  }
  client_ = std::make_unique<etcd::Client>(ClientOptions());
  lease_id_ = client_->Grant(3600).id;  // every bench lease hangs on it: one Revoke removes them all
}

void Rig::PutConfig(const std::string& config) { client_->Put(na::ConfigKey(na::kDefaultPrefix), config); }

void Rig::Finish() {
  StopAgent();
  if (client_) client_->Revoke(lease_id_);
  if (etcd_) etcd_->Stop();
}

void Rig::DropBenchLeases() {
  client_->Revoke(lease_id_);
  lease_id_ = client_->Grant(3600).id;
}

void Rig::StartAgent(const std::vector<std::string>& extra) {
  agent_log_ = *dir_ / fmt::format("agent-{}.log", ++agent_runs_);
  std::vector<std::string> argv = {"/bin/ip",
                                   "netns",
                                   "exec",
                                   node_->name(),
                                   bin_ + "/netiface-agent",
                                   std::string("--etcd-endpoints=") + kEndpoint,
                                   "--subnet-file=" + (*dir_ / "subnet.env"),
                                   "--iface=eth0"};
  argv.insert(argv.end(), extra.begin(), extra.end());
  agent_ = std::make_unique<Process>(argv, agent_log_);
}

void Rig::StopAgent() {
  if (!agent_) return;
  int status = agent_->Stop();
  stops_.push_back(Ms(agent_->last_stop()));
  agent_.reset();
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
    Fail(fmt::format("the agent exited with status {:#x} on SIGTERM", status));
}

void Rig::CheckAgent() {
  if (agent_ && !agent_->Running()) Fail("the agent exited");
}

Clock::time_point Rig::WaitSubnetEnv(Clock::time_point deadline, FileWatch& w) {
  return WhileAgentRuns(deadline, "waiting for subnet.env", [&](Clock::time_point until) {
    return w.Poll(std::chrono::duration_cast<milliseconds>(until - Clock::now()) + milliseconds(1));
  });
}

double Rig::TimeStart(const std::vector<std::string>& extra) {
  FileWatch w(dir_->path(), "subnet.env");
  Clock::time_point t0 = Clock::now();
  StartAgent(extra);
  return Ms(WaitSubnetEnv(t0 + seconds(30), w) - t0);
}

ReconcileTail::Line Rig::NextReconcile(ReconcileTail& tail, milliseconds timeout) {
  return WhileAgentRuns(Clock::now() + timeout, "a reconcile line", [&](Clock::time_point until) {
    return tail.Next(std::chrono::duration_cast<milliseconds>(until - Clock::now()));
  });
}

void Rig::ForgetNode() {
  for (const etcd::KeyValue& kv : client_->GetPrefix(na::SubnetsPrefix(na::kDefaultPrefix)).kvs) {
    na::LeaseAttrs attrs;
    try {
      attrs = na::DecodeLeaseAttrs(kv.value);
    } catch (const std::invalid_argument&) {
      continue;
    }
    if (attrs.public_ip != cni::IpAddr::Parse(kNodeIp)) continue;
    if (kv.lease != 0) client_->Revoke(kv.lease);
    client_->Delete(kv.key);
  }
  std::filesystem::remove(*dir_ / "subnet.env");
  ShResult c = Sh("ip netns exec " + node_->name() + " " + bin_ + "/netiface-agent cleanup");
  if (c.exit_code != 0) throw std::runtime_error("netiface-agent cleanup failed: " + c.out);
}

std::string Rig::SubnetEnvValue(const std::string& name) const {
  std::ifstream f(*dir_ / "subnet.env");
  for (std::string line; std::getline(f, line);) {
    if (line.starts_with(name + "=")) return line.substr(name.size() + 1);
  }
  throw std::runtime_error("no " + name + " in " + (*dir_ / "subnet.env"));
}

Clock::time_point Rig::WaitAll(KernelMonitor& monitor, const std::vector<std::string>& keys, Clock::time_point since,
                               Clock::time_point deadline, const std::string& what) {
  int overflows = monitor.overflows();
  Clock::time_point t =
      WhileAgentRuns(deadline, what, [&](Clock::time_point until) { return monitor.WaitAllAdded(keys, since, until); });
  if (monitor.overflows() != overflows) throw std::runtime_error(what + ": the kernel monitor lost notifications");
  return t;
}

double Rig::WriteLeases(const std::vector<Peer>& peers) {
  Clock::time_point t0 = Clock::now();
  std::vector<std::thread> writers;
  std::vector<std::string> errors(kWriters);
  for (int w = 0; w < kWriters; ++w) {
    writers.emplace_back([&, w] {
      try {
        etcd::Client c(ClientOptions());
        for (size_t i = w; i < peers.size(); i += kWriters) c.Put(peers[i].key, peers[i].value, lease_id_);
      } catch (const std::exception& e) {
        errors[w] = e.what();
      }
    });
  }
  for (auto& t : writers) t.join();
  for (const std::string& e : errors) {
    if (!e.empty()) throw std::runtime_error("writing the leases: " + e);
  }
  return Ms(Clock::now() - t0);
}

}  // namespace netiface::bench::agent
