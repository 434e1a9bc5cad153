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

std::string NodeIp(int i) { return "192.0.2." + std::to_string(i); }

std::string NodeIp6(int i) {
  std::ostringstream s;
  s << "2001:db8:1::" << std::hex << i;
  return s.str();
}

Cluster::Cluster(int nodes, bool etcd_tls) : Cluster(ClusterOptions{nodes, 1, etcd_tls, false}) {}

Cluster::Cluster(const ClusterOptions& o) : o_(o) {
  ul_ = std::make_unique<TempNetns>("nfa-ul");
  auto must = [](const RunResult& r, const std::string& what) {
    if (r.exit_code != 0) throw std::runtime_error(what + ": " + r.err);
  };
  must(ul_->Sh("ip link add br0 type bridge && ip addr add 192.0.2.254/24 dev br0 && ip link set br0 up"),
       "underlay bridge");
  if (o_.ipv6) {
    must(ul_->Sh("sysctl -qw net.ipv6.conf.br0.disable_ipv6=0 && ip addr add 2001:db8:1::fe/64 dev br0 nodad"),
         "underlay IPv6");
  }
  if (o_.etcd_members <= 1) {
    EtcdServerOptions eo;
    eo.netns = ul_->name();
    eo.ip = "192.0.2.254";
    eo.tls = o_.etcd_tls;
    etcd_ = std::make_unique<EtcdServer>(eo);
    etcd_->Start();
  } else {
    EtcdClusterOptions eo;
    eo.netns = ul_->name();
    eo.tls = o_.etcd_tls;
    // Every member on the bridge's address (EtcdCluster gives each its own ports): members in one namespace
    // on several addresses would dial each other from the bridge's primary address, which their peer
    // certificates do not name.
    eo.ips.assign(o_.etcd_members, "192.0.2.254");
    etcd_cluster_ = std::make_unique<EtcdCluster>(eo);
    etcd_cluster_->Start();
  }
  for (int i = 1; i <= o_.nodes; ++i) {
    Node n;
    n.index = i;
    n.ns = std::make_unique<TempNetns>("nfa-n" + std::to_string(i) + "-");
    n.dir = dir_ / ("node" + std::to_string(i));
    Sh("mkdir -p " + n.dir);
    std::string ul_end = UniqueName("nfu");
    must(Sh("ip -n " + n.ns->name() + " link add eth0 type veth peer name " + ul_end + " netns " + ul_->name()),
         "uplink veth");
    must(ul_->Sh("ip link set " + ul_end + " master br0 up"), "uplink port");
    must(n.ns->Sh("ip addr add " + NodeIp(i) +
                  "/24 dev eth0 && ip link set eth0 up && ip route add default via "
                  "192.0.2.254 && sysctl -qw net.ipv4.ip_forward=1"),
         "node uplink");
    if (o_.ipv6) {
      must(n.ns->Sh("sysctl -qw net.ipv6.conf.all.forwarding=1 && ip addr add " + NodeIp6(i) +
                    "/64 dev eth0 nodad && ip -6 route add default via 2001:db8:1::fe"),
           "node IPv6 uplink");
    }
    std::string conf = nlohmann::json{{"cniVersion", "1.0.0"},
                                      {"name", "cluster"},
                                      {"plugins",
                                       {{{"type", "flannel"},
                                         {"subnetFile", n.subnet_env()},
                                         {"dataDir", n.dir + "/flannel"},
                                         {"delegate", {{"bridge", "cni0"}, {"isDefaultGateway", true}}},
                                         {"ipam", {{"dataDir", n.dir + "/ipam"}}}}}}}
                           .dump(2);
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
  etcd_cluster_.reset();
  ul_.reset();
}

EtcdServer& Cluster::etcd() {
  if (!etcd_) throw std::logic_error("this cluster runs several etcd members: use etcd_cluster()");
  return *etcd_;
}

EtcdCluster& Cluster::etcd_cluster() {
  if (!etcd_cluster_) throw std::logic_error("this cluster runs one etcd: use etcd()");
  return *etcd_cluster_;
}

std::string Cluster::EtcdEndpoints() const { return etcd_ ? etcd_->endpoint() : etcd_cluster_->endpoints(); }

RunResult Cluster::Etcdctl(const std::vector<std::string>& args) const {
  return etcd_ ? etcd_->Etcdctl(args) : etcd_cluster_->Etcdctl(args);
}

std::vector<std::string> Cluster::EtcdTlsFlags() const {
  std::string ca = etcd_ ? etcd_->ca_file() : etcd_cluster_->ca_file();
  if (ca.empty()) return {};
  return {"--etcd-cafile=" + ca, "--etcd-certfile=" + (etcd_ ? etcd_->cert_file() : etcd_cluster_->cert_file()),
          "--etcd-keyfile=" + (etcd_ ? etcd_->key_file() : etcd_cluster_->key_file())};
}

void Cluster::PutConfig(const std::string& json, const std::string& prefix) {
  auto r = Etcdctl({"put", prefix + "/config", json});
  ASSERT_EQ(r.exit_code, 0) << r.err;
}

void Cluster::StartAgent(int i, const std::vector<std::string>& extra) {
  Node& n = node(i);
  std::vector<std::string> argv = {Bin("netiface-agent"),
                                   "--etcd-endpoints=" + EtcdEndpoints(),
                                   "--subnet-file=" + n.subnet_env(),
                                   "--reconcile-interval=1",
                                   "--iptables-resync=1",
                                   "--log-level=debug"};
  for (const std::string& f : EtcdTlsFlags()) argv.push_back(f);
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

namespace {

// The value of `key` in a subnet.env, "" when the file or the key is not there.
std::string EnvValue(const std::string& path, const std::string& key) {
  std::ifstream f(path);
  std::string line;
  while (std::getline(f, line)) {
    if (line.rfind(key + "=", 0) == 0) return line.substr(key.size() + 1);
  }
  return "";
}

}  // namespace

std::string Cluster::Subnet(int i) const { return EnvValue(nodes_[i - 1].subnet_env(), "FLANNEL_SUBNET"); }

std::string Cluster::Subnet6(int i) const { return EnvValue(nodes_[i - 1].subnet_env(), "FLANNEL_IPV6_SUBNET"); }

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
  std::string ip, ip6;
  try {
    const nlohmann::json result = nlohmann::json::parse(out);
    for (const auto& entry : result.at("ips")) {
      std::string a = entry.at("address").get<std::string>();
      a = a.substr(0, a.find('/'));
      std::string& slot = a.find(':') == std::string::npos ? ip : ip6;
      if (slot.empty()) slot = a;
    }
  } catch (const std::exception& e) {
    ADD_FAILURE() << "cannot read the ADD result on node " << i << ": " << e.what() << "\n" << out;
  }
  if (ip.empty() && ip6.empty()) ADD_FAILURE() << "no address in the ADD result on node " << i << ": " << out;
  if (pod_ips_.size() < static_cast<size_t>(i)) pod_ips_.resize(i);
  if (pod_ip6s_.size() < static_cast<size_t>(i)) pod_ip6s_.resize(i);
  pod_ips_[i - 1].push_back(ip);
  pod_ip6s_[i - 1].push_back(ip6);
  return ip.empty() ? ip6 : ip;
}

void Cluster::DelPods(int i) {
  Node& n = node(i);
  for (auto& p : n.pods) Cli(i, "del", p->path());
  n.pods.clear();
  if (pod_ips_.size() >= static_cast<size_t>(i)) pod_ips_[i - 1].clear();
  if (pod_ip6s_.size() >= static_cast<size_t>(i)) pod_ip6s_[i - 1].clear();
}

std::string Cluster::PodIp(int i, int pod) const { return pod_ips_.at(i - 1).at(pod); }
std::string Cluster::PodIp6(int i, int pod) const { return pod_ip6s_.at(i - 1).at(pod); }

bool Cluster::PodPing(int i, int pod, const std::string& addr) const {
  return nodes_[i - 1].pods.at(pod)->Ping(addr, 1);
}

bool Cluster::PodPing6(int i, int pod, const std::string& addr) const {
  return nodes_[i - 1].pods.at(pod)->Sh("ping -6 -n -q -c 1 -W 2 " + addr + " >/dev/null 2>&1").exit_code == 0;
}

nlohmann::json Cluster::Leases() {
  std::string cmd = Bin("netiface") + " leases --json --etcd-endpoints " + EtcdEndpoints();
  for (const std::string& f : EtcdTlsFlags()) cmd += " " + f;
  auto r = ul_->Sh(cmd);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  try {
    return nlohmann::json::parse(r.out);
  } catch (...) {
    ADD_FAILURE() << "netiface leases: " << r.out << r.err;
    return nlohmann::json::array();
  }
}

std::map<std::string, nlohmann::json> Cluster::LeaseRecords(const std::string& prefix) {
  const std::string subnets = prefix + "/subnets/";
  auto r = Etcdctl({"get", "--prefix", subnets});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  // etcdctl prints key and value on a line each; flanneld's values are one-line JSON.
  std::map<std::string, nlohmann::json> out;
  std::istringstream in(r.out);
  std::string key, value;
  while (std::getline(in, key) && std::getline(in, value)) {
    if (key.rfind(subnets, 0) == 0) out[key.substr(subnets.size())] = nlohmann::json::parse(value, nullptr, false);
  }
  return out;
}

nlohmann::json Cluster::LeaseRecordOf(int i, const std::string& prefix) {
  for (const auto& [key, value] : LeaseRecords(prefix)) {
    if (value.is_object() && value.value("PublicIP", "") == NodeIp(i)) return value;
  }
  return nullptr;
}

void Cluster::CountUnderlayUdp(int port) {
  const std::string p = std::to_string(port);
  RunResult r = ul_->Sh(
      "nft -f - <<'EOF'\n"
      "table bridge nfa_underlay {\n"
      "  counter udp4 { }\n"
      "  counter udp6 { }\n"
      "  chain forward {\n"
      "    type filter hook forward priority 0; policy accept;\n"
      "    ether type ip udp dport " +
      p +
      " counter name \"udp4\"\n"
      "    ether type ip6 udp dport " +
      p +
      " counter name \"udp6\"\n"
      "  }\n"
      "}\n"
      "EOF");
  ASSERT_EQ(r.exit_code, 0) << "cannot install the underlay's UDP counter: " << r.err;
}

UdpCount Cluster::UnderlayUdpPackets() const {
  UdpCount c;
  RunResult r = ul_->Sh("nft -j list counters table bridge nfa_underlay");
  nlohmann::json j = nlohmann::json::parse(r.out, nullptr, false);
  EXPECT_TRUE(r.exit_code == 0 && j.is_object()) << "no underlay counter: " << r.err << r.out;
  if (!j.is_object()) return c;
  for (const auto& item : j.value("nftables", nlohmann::json::array())) {
    if (!item.contains("counter")) continue;
    const nlohmann::json& k = item["counter"];
    (k.value("name", "") == "udp6" ? c.v6 : c.v4) = k.value("packets", uint64_t{0});
  }
  return c;
}

}  // namespace netiface::testing
