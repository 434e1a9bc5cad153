#include "cluster_fixture.h"

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <sstream>
#include <thread>

#include <gtest/gtest.h>

namespace netiface::testing {

bool WaitFor(const std::function<bool()>& pred, std::chrono::milliseconds timeout) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  while (true) {
    if (pred()) return true;
    if (std::chrono::steady_clock::now() >= deadline) return pred();
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
}

BackgroundProcess::BackgroundProcess(const std::string& netns, const std::vector<std::string>& argv,
                                     const std::string& log) {
  std::vector<std::string> full = {"ip", "netns", "exec", netns};
  full.insert(full.end(), argv.begin(), argv.end());
  std::vector<char*> args;
  for (auto& s : full) args.push_back(s.data());
  args.push_back(nullptr);
  pid_ = fork();
  if (pid_ < 0) throw std::runtime_error("fork");
  if (pid_ == 0) {
    int fd = open(log.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
    int null = open("/dev/null", O_RDONLY);
    if (fd >= 0) {
      dup2(fd, 1);
      dup2(fd, 2);
    }
    if (null >= 0) dup2(null, 0);
    execvp(args[0], args.data());
    _exit(127);
  }
}

BackgroundProcess::~BackgroundProcess() {
  if (pid_ > 0) Stop(SIGKILL);
}

bool BackgroundProcess::Running() {
  if (pid_ <= 0) return false;
  int st = 0;
  pid_t r = waitpid(pid_, &st, WNOHANG);
  if (r == pid_) {
    status_ = st;
    pid_ = -1;
    return false;
  }
  return true;
}

int BackgroundProcess::Stop(int sig) {
  if (!Running()) return status_;
  kill(pid_, sig);
  for (int i = 0; i < 100; ++i) {
    if (!Running()) return status_;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  kill(pid_, SIGKILL);
  waitpid(pid_, &status_, 0);
  pid_ = -1;
  return -1;
}

Cluster::Cluster(int nodes, bool etcd_tls) {
  ul_ = std::make_unique<TempNetns>("nfa-ul");
  auto must = [](const RunResult& r, const std::string& what) {
    if (r.exit_code != 0) throw std::runtime_error(what + ": " + r.err);
  };
  must(ul_->Sh("ip link add br0 type bridge && ip addr add 192.0.2.254/24 dev br0 && ip link set br0 up"),
       "underlay bridge");
  EtcdServerOptions eo;
  eo.netns = ul_->name();
  eo.ip = "192.0.2.254";
  eo.tls = etcd_tls;
  etcd_ = std::make_unique<EtcdServer>(eo);
  etcd_->Start();
  for (int i = 1; i <= nodes; ++i) {
    Node n;
    n.index = i;
    n.ns = std::make_unique<TempNetns>("nfa-n" + std::to_string(i) + "-");
    n.dir = dir_ / ("node" + std::to_string(i));
    Sh("mkdir -p " + n.dir);
    std::string ul_end = UniqueName("nfu");
    std::string ip = "192.0.2." + std::to_string(i);
    must(Sh("ip -n " + n.ns->name() + " link add eth0 type veth peer name " + ul_end + " netns " + ul_->name()),
         "uplink veth");
    must(ul_->Sh("ip link set " + ul_end + " master br0 up"), "uplink port");
    must(n.ns->Sh("ip addr add " + ip + "/24 dev eth0 && ip link set eth0 up && ip route add default via "
                  "192.0.2.254 && sysctl -qw net.ipv4.ip_forward=1"),
         "node uplink");
    std::string conf = nlohmann::json{
        {"cniVersion", "1.0.0"},
        {"name", "cluster"},
        {"plugins",
         {{{"type", "flannel"},
           {"subnetFile", n.subnet_env()},
           {"dataDir", n.dir + "/flannel"},
           {"delegate", {{"bridge", "cni0"}, {"isDefaultGateway", true}}},
           {"ipam", {{"dataDir", n.dir + "/ipam"}}}}}}}.dump(2);
    Sh("mkdir -p " + n.dir + "/net.d");
    WriteFile(n.dir + "/net.d/10-cluster.conflist", conf);
    nodes_.push_back(std::move(n));
  }
}

Cluster::~Cluster() {
  for (auto& n : nodes_) {
    if (n.agent) n.agent->Stop(SIGTERM);
    n.pods.clear();
    n.ns.reset();
  }
  etcd_.reset();
  ul_.reset();
}

void Cluster::PutConfig(const std::string& json, const std::string& prefix) {
  auto r = etcd_->Etcdctl({"put", prefix + "/config", json});
  ASSERT_EQ(r.exit_code, 0) << r.err;
}

void Cluster::StartAgent(int i, const std::vector<std::string>& extra) {
  Node& n = node(i);
  std::vector<std::string> argv = {Bin("netiface-agent"),
                                   "--etcd-endpoints=" + etcd_->endpoint(),
                                   "--subnet-file=" + n.subnet_env(),
                                   "--reconcile-interval=1",
                                   "--iptables-resync=1",
                                   "--log-level=debug"};
  if (!etcd_->ca_file().empty()) {
    argv.push_back("--etcd-cafile=" + etcd_->ca_file());
    argv.push_back("--etcd-certfile=" + etcd_->cert_file());
    argv.push_back("--etcd-keyfile=" + etcd_->key_file());
  }
  argv.insert(argv.end(), extra.begin(), extra.end());
  Sh("echo '--- start' >> " + n.agent_log());
  n.agent = std::make_unique<BackgroundProcess>(n.ns->name(), argv, n.agent_log());
}

int Cluster::StopAgent(int i, int sig) {
  Node& n = node(i);
  if (!n.agent) return -1;
  int st = n.agent->Stop(sig);
  n.agent.reset();
  return st;
}

std::string Cluster::Subnet(int i) const {
  std::ifstream f(nodes_[i - 1].subnet_env());
  std::string line;
  while (std::getline(f, line)) {
    if (line.rfind("FLANNEL_SUBNET=", 0) == 0) return line.substr(15);
  }
  return "";
}

bool Cluster::WaitSubnetEnv(int i, std::chrono::milliseconds timeout) {
  return WaitFor([&] { return !Subnet(i).empty(); }, timeout);
}

std::vector<std::string> Cluster::AgentRoutes(int i) {
  std::vector<std::string> out;
  for (const auto& r : node(i).ns->IpJson("route show proto 78")) {
    out.push_back(r.value("dst", "") + " via " + r.value("gateway", ""));
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::string Cluster::AgentLog(int i) const { return ReadFile(nodes_[i - 1].agent_log()); }

std::string Cluster::AgentLogSinceStart(int i) const {
  std::string log = AgentLog(i);
  size_t start = log.rfind("--- start");
  return start == std::string::npos ? log : log.substr(start);
}

std::string Cluster::Cli(int i, const std::string& verb, const std::string& pod_path) {
  Node& n = node(i);
  auto r = n.ns->Sh(Bin("netiface") + " " + verb + " cluster " + pod_path + " --conf-dir " + n.dir +
                    "/net.d --cni-path " + BinDir() + " --cache-dir " + n.dir + "/cache");
  EXPECT_EQ(r.exit_code, 0) << verb << " on node " << i << ": " << r.err;
  return r.out;
}

std::string Cluster::AddPod(int i) {
  Node& n = node(i);
  n.pods.push_back(std::make_unique<TempNetns>("nfa-p" + std::to_string(i) + "-"));
  std::string out = Cli(i, "add", n.pods.back()->path());
  std::string ip;
  try {
    auto res = nlohmann::json::parse(out);
    ip = res.at("ips").at(0).at("address").get<std::string>();
    ip = ip.substr(0, ip.find('/'));
  } catch (const std::exception& e) {
    ADD_FAILURE() << "no address in the ADD result on node " << i << ": " << out;
  }
  if (pod_ips_.size() < static_cast<size_t>(i)) pod_ips_.resize(i);
  pod_ips_[i - 1].push_back(ip);
  return ip;
}

void Cluster::DelPods(int i) {
  Node& n = node(i);
  for (auto& p : n.pods) Cli(i, "del", p->path());
  n.pods.clear();
  if (pod_ips_.size() >= static_cast<size_t>(i)) pod_ips_[i - 1].clear();
}

std::string Cluster::PodIp(int i, int pod) const { return pod_ips_.at(i - 1).at(pod); }

bool Cluster::PodPing(int i, int pod, const std::string& addr) const {
  return nodes_[i - 1].pods.at(pod)->Ping(addr, 1);
}

nlohmann::json Cluster::Leases() {
  auto r = ul_->Sh(Bin("netiface") + " leases --json --etcd-endpoints " + etcd_->endpoint() +
                   (etcd_->ca_file().empty() ? std::string()
                                             : " --etcd-cafile " + etcd_->ca_file() + " --etcd-certfile " +
                                                   etcd_->cert_file() + " --etcd-keyfile " + etcd_->key_file()));
  EXPECT_EQ(r.exit_code, 0) << r.err;
  try {
    return nlohmann::json::parse(r.out);
  } catch (...) {
    ADD_FAILURE() << "netiface leases: " << r.out << r.err;
    return nlohmann::json::array();
  }
}

}  // namespace netiface::testing
