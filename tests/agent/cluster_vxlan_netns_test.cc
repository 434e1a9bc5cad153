// netiface-agent's vxlan backend end to end, dual stack: three nodes on an IPv4 + IPv6 underlay, a
// three-member etcd with mutual TLS, the built agent, pods through the CLI and our flannel -> bridge ->
// host-local. Every node's neighbours, FDB entries and routes are compared whole with what the leases
// say; the underlay bridge counts the UDP 8472 packets it forwards. Everything in namespaces made here.
#include <sys/wait.h>

#include <set>

#include <gtest/gtest.h>

#include "cluster_fixture.h"
#include "netiface/cni/ip.h"
#include "node_state.h"

namespace netiface::testing {
namespace {

using std::chrono::seconds;

constexpr char kDev4[] = "flannel.1";
constexpr char kDev6[] = "flannel-v6.1";
constexpr int kReconcileS = 2;

std::string VxlanConfig(bool direct_routing) {
  return nlohmann::json{
      {"Network", "10.5.0.0/16"}, {"SubnetLen", 24},
      {"EnableIPv6", true},       {"IPv6Network", "fd00:5::/56"},
      {"IPv6SubnetLen", 64},      {"Backend", {{"Type", "vxlan"}, {"VNI", 1}, {"DirectRouting", direct_routing}}}}
      .dump();
}

// "10.5.34.1/24" -> "10.5.34.0/24"; "" for "".
std::string NetworkOf(const std::string& first_host) {
  auto net = cni::IpNet::Parse(first_host);
  return net ? net->Network().ToString() : "";
}
// "10.5.34.0/24" -> "10.5.34.0"
std::string AddrOf(const std::string& net) { return net.substr(0, net.find('/')); }

// A remote lease as every other node must program it.
struct Peer {
  std::string subnet4, subnet6;  // "10.5.34.0/24", "fd00:5:0:22::/64"
  std::string mac4, mac6;        // BackendData / BackendV6Data VtepMAC
  std::string public4, public6;
  bool direct = false;  // DirectRouting applies: plain routes via the public IPs
};

// Each node's peer record from its subnet.env and its lease in etcd; *why says what is missing.
std::vector<Peer> NodePeers(Cluster& c, bool direct, std::string* why) {
  auto records = c.LeaseRecords();
  std::vector<Peer> out;
  for (int i = 1; i <= c.size(); ++i) {
    nlohmann::json rec;
    for (const auto& [key, value] : records) {
      if (value.is_object() && value.value("PublicIP", "") == NodeIp(i)) rec = value;
    }
    Peer p;
    p.subnet4 = NetworkOf(c.Subnet(i));
    p.subnet6 = NetworkOf(c.Subnet6(i));
    p.public4 = NodeIp(i);
    p.public6 = rec.is_object() && rec["PublicIPv6"].is_string() ? rec["PublicIPv6"].get<std::string>() : "";
    auto mac = [&](const char* key) {
      const nlohmann::json d = rec.is_object() ? rec.value(key, nlohmann::json()) : nlohmann::json();
      return d.is_object() ? d.value("VtepMAC", "") : "";
    };
    p.mac4 = mac("BackendData");
    p.mac6 = mac("BackendV6Data");
    p.direct = direct;
    if (p.subnet4.empty() || p.subnet6.empty() || p.mac4.empty() || p.mac6.empty() || p.public6.empty()) {
      *why =
          "node " + std::to_string(i) + ": subnet.env " + c.Subnet(i) + " / " + c.Subnet6(i) + ", lease " + rec.dump();
      return {};
    }
    out.push_back(p);
  }
  return out;
}

// What a node's kernel holds for the vxlan backend, each list sorted.
struct VxlanState {
  std::vector<std::string> routes4, routes6, neigh4, neigh6, fdb4, fdb6;
  bool operator==(const VxlanState&) const = default;
};

VxlanState Observed(const TempNetns& ns) {
  return {ProtoRoutes(ns, 4),    ProtoRoutes(ns, 6),   PermanentNeighbours(ns, kDev4), PermanentNeighbours(ns, kDev6),
          FdbEntries(ns, kDev4), FdbEntries(ns, kDev6)};
}

// The contract: per encapsulated peer a permanent neighbour, an FDB entry to its public IP and an onlink
// route through the device, in each family; per direct peer only a route via its public IP on eth0.
VxlanState Expected(const std::vector<Peer>& peers) {
  VxlanState s;
  for (const Peer& p : peers) {
    if (p.direct) {
      s.routes4.push_back(p.subnet4 + " via " + p.public4 + " dev eth0");
      s.routes6.push_back(p.subnet6 + " via " + p.public6 + " dev eth0");
      continue;
    }
    s.routes4.push_back(p.subnet4 + " via " + AddrOf(p.subnet4) + " dev " + kDev4 + " onlink");
    s.routes6.push_back(p.subnet6 + " via " + AddrOf(p.subnet6) + " dev " + kDev6 + " onlink");
    s.neigh4.push_back(AddrOf(p.subnet4) + " lladdr " + p.mac4);
    s.neigh6.push_back(AddrOf(p.subnet6) + " lladdr " + p.mac6);
    s.fdb4.push_back(p.mac4 + " dst " + p.public4 + " self permanent");
    s.fdb6.push_back(p.mac6 + " dst " + p.public6 + " self permanent");
  }
  for (auto* v : {&s.routes4, &s.routes6, &s.neigh4, &s.neigh6, &s.fdb4, &s.fdb6}) std::sort(v->begin(), v->end());
  return s;
}

std::string Print(const VxlanState& s) {
  return "routes4 " + ::testing::PrintToString(s.routes4) + "\n  routes6 " + ::testing::PrintToString(s.routes6) +
         "\n  neigh4 " + ::testing::PrintToString(s.neigh4) + "\n  neigh6 " + ::testing::PrintToString(s.neigh6) +
         "\n  fdb4 " + ::testing::PrintToString(s.fdb4) + "\n  fdb6 " + ::testing::PrintToString(s.fdb6);
}

// Every node holds exactly the entries for every peer but itself (`all` may hold leases of no node).
bool Meshed(Cluster& c, const std::vector<Peer>& all, std::string* diff) {
  for (int i = 1; i <= c.size(); ++i) {
    std::vector<Peer> others;
    for (const Peer& p : all) {
      if (p.public4 != NodeIp(i)) others.push_back(p);
    }
    VxlanState want = Expected(others), got = Observed(*c.node(i).ns);
    if (got != want) {
      *diff = "node " + std::to_string(i) + "\n want " + Print(want) + "\n got  " + Print(got);
      return false;
    }
  }
  return true;
}

// Waits until every node holds exactly `all`; the last difference in *diff otherwise.
bool WaitMeshed(Cluster& c, const std::vector<Peer>& all, std::string* diff, seconds timeout = seconds(20)) {
  return WaitFor([&] { return Meshed(c, all, diff); }, timeout);
}

// Every pod pings every pod on the other nodes (only those on node `from` when it is set), over IPv4 or
// IPv6; returns the number of pairs that got through, and a test failure per pair that did not. One
// ping per pair, the first packet towards each pod included: it must not wait on neighbour discovery.
int PingAcross(Cluster& c, bool ipv6, int from = 0) {
  int ok = 0;
  for (int i = 1; i <= c.size(); ++i) {
    if (from != 0 && i != from) continue;
    for (size_t p = 0; p < c.node(i).pods.size(); ++p) {
      for (int j = 1; j <= c.size(); ++j) {
        if (j == i) continue;
        for (size_t q = 0; q < c.node(j).pods.size(); ++q) {
          const std::string dst = ipv6 ? c.PodIp6(j, q) : c.PodIp(j, q);
          const bool reached = ipv6 ? c.PodPing6(i, p, dst) : c.PodPing(i, p, dst);
          EXPECT_TRUE(reached) << "pod " << (ipv6 ? c.PodIp6(i, p) : c.PodIp(i, p)) << " on node " << i
                               << " cannot reach " << dst << " on node " << j;
          ok += reached ? 1 : 0;
        }
      }
    }
  }
  return ok;
}

void DumpLogs(Cluster& c) {
  for (int i = 1; i <= c.size(); ++i) {
    std::string log = c.AgentLog(i);
    if (log.size() > 6000) log = log.substr(log.size() - 6000);
    std::cerr << "---- agent log, node " << i << ":\n" << log << "\n";
  }
}

bool AgentReady() { return IsRoot() && access(Bin("netiface-agent").c_str(), X_OK) == 0; }

// Steps 1-5 share one cluster: it is built once (the agents started together, two pods per node), and
// every step leaves it fully meshed again.
class VxlanClusterTest : public ::testing::Test {
 protected:
  static void TearDownTestSuite() { shared_.reset(); }

  void SetUp() override {
    NETIFACE_REQUIRE_ROOT();
    if (!AgentReady()) GTEST_SKIP() << "netiface-agent not built";
    if (!shared_ && !setup_failed_) {
      setup_failed_ = true;
      MakeShared();
      if (HasFatalFailure()) return;
      setup_failed_ = false;
    }
    ASSERT_FALSE(setup_failed_) << "the shared cluster could not be set up (see the first test)";
    std::string why;
    peers_ = NodePeers(*shared_, false, &why);
    ASSERT_EQ(peers_.size(), 3u) << why;
  }

  void TearDown() override {
    if (HasFailure() && shared_) DumpLogs(*shared_);
  }

  static std::vector<std::string> AgentFlags(int i) {
    std::vector<std::string> f = {"--reconcile-interval=" + std::to_string(kReconcileS)};
    if (i == 2) f.push_back("--public-ipv6=" + NodeIp6(2));  // the others take eth0's first global IPv6 address
    return f;
  }

  static void MakeShared() {
    ClusterOptions o;
    o.nodes = 3;
    o.etcd_members = 3;
    o.etcd_tls = true;
    o.ipv6 = true;
    shared_ = std::make_unique<Cluster>(o);
    Cluster& c = *shared_;
    ASSERT_NO_FATAL_FAILURE(c.CountUnderlayUdp());
    ASSERT_NO_FATAL_FAILURE(c.PutConfig(VxlanConfig(false)));
    // At the same moment: no wait between the three starts (step 5 checks the outcome).
    for (int i = 1; i <= 3; ++i) c.StartAgent(i, AgentFlags(i));
    for (int i = 1; i <= 3; ++i) ASSERT_TRUE(c.WaitSubnetEnv(i, seconds(30))) << "no subnet.env on node " << i;
    for (int i = 1; i <= 3; ++i) {
      c.AddPod(i);
      c.AddPod(i);
    }
  }

  Cluster& c() { return *shared_; }

  static std::unique_ptr<Cluster> shared_;
  static bool setup_failed_;
  std::vector<Peer> peers_;
};

std::unique_ptr<Cluster> VxlanClusterTest::shared_;
bool VxlanClusterTest::setup_failed_ = false;

// Step 5: three agents started together each lease distinct subnets in both families, publish their
// VTEPs, and every node gets the entries for both others.
TEST_F(VxlanClusterTest, AgentsStartedTogetherEachRouteToBothOthers) {
  std::string diff;
  ASSERT_TRUE(WaitMeshed(c(), peers_, &diff)) << diff;
  std::set<std::string> subnets4, subnets6;
  for (int i = 1; i <= 3; ++i) {
    const Peer& p = peers_[i - 1];
    subnets4.insert(p.subnet4);
    subnets6.insert(p.subnet6);
    const std::string env = ReadFile(c().node(i).subnet_env());
    EXPECT_NE(env.find("FLANNEL_IPV6_NETWORK=fd00:5::/56\n"), std::string::npos) << env;
    EXPECT_EQ(p.public6, NodeIp6(i));

    nlohmann::json rec = c().LeaseRecordOf(i);
    EXPECT_EQ(rec.value("BackendType", ""), "vxlan") << rec.dump();
    EXPECT_EQ(rec["BackendData"].value("VNI", -1), 1) << rec.dump();
    EXPECT_EQ(rec["BackendV6Data"].value("VNI", -1), 1) << rec.dump();
    auto records = c().LeaseRecords();
    const std::string key = AddrOf(p.subnet4) + "-24&" + AddrOf(p.subnet6) + "-64";
    EXPECT_TRUE(records.count(key)) << key << " not among " << ::testing::PrintToString(records);

    auto v4 = ReadVxlanLink(*c().node(i).ns, kDev4);
    auto v6 = ReadVxlanLink(*c().node(i).ns, kDev6);
    ASSERT_TRUE(v4 && v6) << "node " << i << " lacks a vxlan device";
    EXPECT_EQ(v4->vni, 1);
    EXPECT_EQ(v6->vni, 1);
    EXPECT_EQ(v4->local, NodeIp(i));
    EXPECT_EQ(v6->local, NodeIp6(i));
    EXPECT_EQ(v4->port, 8472);
    EXPECT_FALSE(v4->learning);
    EXPECT_EQ(v4->addresses, std::vector<std::string>{AddrOf(p.subnet4) + "/32"});
    EXPECT_EQ(v6->addresses, std::vector<std::string>{AddrOf(p.subnet6) + "/128"});
    EXPECT_EQ(v4->mac, p.mac4) << "the device's MAC is not the lease's VtepMAC";
    EXPECT_EQ(v6->mac, p.mac6) << "the device's MAC is not the lease's BackendV6Data VtepMAC";
  }
  EXPECT_EQ(subnets4.size(), 3u);
  EXPECT_EQ(subnets6.size(), 3u);
}

// Step 1: every pod reaches every pod on the other nodes in both families, through the underlay's UDP 8472.
TEST_F(VxlanClusterTest, EveryPodReachesEveryOtherNodesPodsOverBothFamilies) {
  std::string diff;
  ASSERT_TRUE(WaitMeshed(c(), peers_, &diff)) << diff;
  const UdpCount before = c().UnderlayUdpPackets();
  const int ok4 = PingAcross(c(), false);
  const UdpCount mid = c().UnderlayUdpPackets();
  const int ok6 = PingAcross(c(), true);
  const UdpCount after = c().UnderlayUdpPackets();
  EXPECT_EQ(ok4, 24);
  EXPECT_EQ(ok6, 24);
  // An echo and its reply each cross the bridge once, encapsulated over the family of the device.
  EXPECT_GE(mid.v4 - before.v4, 2u * ok4);
  EXPECT_GE(after.v6 - mid.v6, 2u * ok6);
  EXPECT_GT(ok4 + ok6, 0);
}

// Step 2: one etcd member dies; the agents keep their leases and a lease put through a surviving member
// reaches every node, as does its deletion.
TEST_F(VxlanClusterTest, LosingAnEtcdMemberKeepsLeasesAndPeersFlowing) {
  std::string diff;
  ASSERT_TRUE(WaitMeshed(c(), peers_, &diff)) << diff;
  std::vector<std::string> envs;
  for (int i = 1; i <= 3; ++i) envs.push_back(ReadFile(c().node(i).subnet_env()));
  const auto records = c().LeaseRecords();
  ASSERT_EQ(records.size(), 3u);

  // Member 0 is the first endpoint every agent was given.
  c().etcd_cluster().KillMember(0);
  Peer fourth{"10.5.250.0/24",     "fd00:5:0:fa::/64", "0e:00:00:00:fa:04",
              "0e:00:00:00:fa:06", "192.0.2.40",       "2001:db8:1::40"};
  const std::string key = "/coreos.com/network/subnets/10.5.250.0-24&fd00:5:0:fa::-64";
  const std::string value = R"({"PublicIP":"192.0.2.40","PublicIPv6":"2001:db8:1::40","BackendType":"vxlan",)"
                            R"("BackendData":{"VNI":1,"VtepMAC":"0e:00:00:00:fa:04"},)"
                            R"("BackendV6Data":{"VNI":1,"VtepMAC":"0e:00:00:00:fa:06"}})";
  // When member 0 led, the others elect a new leader first: a put meanwhile times out, so retry it.
  RunResult put;
  EXPECT_TRUE(WaitFor(
      [&] {
        put = c().etcd_cluster().EtcdctlMember(1, {"put", key, value});
        return put.exit_code == 0;
      },
      seconds(30)));
  ASSERT_EQ(put.exit_code, 0) << put.err;
  std::vector<Peer> with_fourth = peers_;
  with_fourth.push_back(fourth);
  EXPECT_TRUE(WaitMeshed(c(), with_fourth, &diff, seconds(30))) << diff;

  for (int i = 1; i <= 3; ++i) {
    EXPECT_TRUE(c().node(i).agent->Running()) << "agent " << i;
    EXPECT_EQ(ReadFile(c().node(i).subnet_env()), envs[i - 1]) << "node " << i;
  }
  auto now = c().LeaseRecords();
  now.erase(key.substr(key.rfind('/') + 1));
  EXPECT_EQ(now, records) << "the agents' leases changed while a member was down";

  auto del = c().etcd_cluster().EtcdctlMember(2, {"del", key});
  EXPECT_EQ(del.out, "1\n") << del.err;
  EXPECT_TRUE(WaitMeshed(c(), peers_, &diff)) << diff;
  c().etcd_cluster().StartMember(0);
}

// Step 3: flannel.1 deleted by hand comes back at the next reconcile, with the same MAC and every
// peer's entries, and the node's pods reach the others again.
TEST_F(VxlanClusterTest, ADeletedDeviceIsRecreatedByTheReconcile) {
  std::string diff;
  ASSERT_TRUE(WaitMeshed(c(), peers_, &diff)) << diff;
  auto before = ReadVxlanLink(*c().node(2).ns, kDev4);
  ASSERT_TRUE(before);
  auto del = c().node(2).ns->Sh(std::string("ip link del ") + kDev4);
  ASSERT_EQ(del.exit_code, 0) << del.err;
  EXPECT_TRUE(WaitMeshed(c(), peers_, &diff, seconds(3 * kReconcileS + 4))) << diff;
  auto after = ReadVxlanLink(*c().node(2).ns, kDev4);
  ASSERT_TRUE(after) << "flannel.1 was not re-created";
  EXPECT_NE(after->ifindex, before->ifindex);
  EXPECT_EQ(after->mac, before->mac);
  EXPECT_EQ(after->addresses, before->addresses);
  EXPECT_EQ(PingAcross(c(), false, 2), 8);
  EXPECT_EQ(PingAcross(c(), true, 2), 8);
}

// Step 4: an agent stopped, its devices deleted meanwhile, started again: the same subnets and VTEP MACs
// (lease and devices), and the peers' FDB entries byte for byte as before.
TEST_F(VxlanClusterTest, RestartWithTheDevicesGoneKeepsSubnetAndVtepMac) {
  std::string diff;
  ASSERT_TRUE(WaitMeshed(c(), peers_, &diff)) << diff;
  const std::string subnet4 = c().Subnet(3), subnet6 = c().Subnet6(3);
  const nlohmann::json record = c().LeaseRecordOf(3);
  const auto v4 = ReadVxlanLink(*c().node(3).ns, kDev4), v6 = ReadVxlanLink(*c().node(3).ns, kDev6);
  ASSERT_TRUE(v4 && v6);
  std::vector<std::string> fdb_before;
  for (int i : {1, 2}) {
    for (const char* dev : {kDev4, kDev6}) fdb_before.push_back(FdbText(*c().node(i).ns, dev));
  }

  int st = c().StopAgent(3);
  EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0) << st;
  auto del = c().node(3).ns->Sh(std::string("ip link del ") + kDev4 + " && ip link del " + kDev6);
  ASSERT_EQ(del.exit_code, 0) << del.err;
  c().StartAgent(3, AgentFlags(3));
  ASSERT_TRUE(WaitFor([&] { return c().AgentLogSinceStart(3).find("leased") != std::string::npos; }, seconds(20)))
      << c().AgentLogSinceStart(3);
  EXPECT_TRUE(WaitMeshed(c(), peers_, &diff)) << diff;

  EXPECT_EQ(c().Subnet(3), subnet4);
  EXPECT_EQ(c().Subnet6(3), subnet6);
  const nlohmann::json again = c().LeaseRecordOf(3);
  EXPECT_EQ(again["BackendData"], record["BackendData"]);
  EXPECT_EQ(again["BackendV6Data"], record["BackendV6Data"]);
  const auto w4 = ReadVxlanLink(*c().node(3).ns, kDev4), w6 = ReadVxlanLink(*c().node(3).ns, kDev6);
  ASSERT_TRUE(w4 && w6) << "the devices were not re-created";
  EXPECT_EQ(w4->mac, v4->mac);
  EXPECT_EQ(w6->mac, v6->mac);
  std::vector<std::string> fdb_after;
  for (int i : {1, 2}) {
    for (const char* dev : {kDev4, kDev6}) fdb_after.push_back(FdbText(*c().node(i).ns, dev));
  }
  EXPECT_EQ(fdb_after, fdb_before);
  EXPECT_EQ(PingAcross(c(), false, 3), 8);
  EXPECT_EQ(PingAcross(c(), true, 3), 8);
}

// Step 6: DirectRouting on a shared segment routes via the public IPs, unencapsulated; a peer off the
// segment is still reached through the vxlan device.
TEST(VxlanDirectRoutingTest, PeersOnTheSegmentAreRoutedWithoutEncapsulation) {
  NETIFACE_REQUIRE_ROOT();
  if (!AgentReady()) GTEST_SKIP() << "netiface-agent not built";
  ClusterOptions o;
  o.nodes = 2;
  o.ipv6 = true;
  Cluster c(o);
  struct Dump {
    Cluster& c;
    ~Dump() {
      if (::testing::Test::HasFailure()) DumpLogs(c);
    }
  } dump{c};
  ASSERT_NO_FATAL_FAILURE(c.CountUnderlayUdp());
  c.PutConfig(VxlanConfig(true));
  for (int i = 1; i <= 2; ++i) c.StartAgent(i, {"--reconcile-interval=" + std::to_string(kReconcileS)});
  for (int i = 1; i <= 2; ++i) ASSERT_TRUE(c.WaitSubnetEnv(i, seconds(30))) << "no subnet.env on node " << i;
  std::string why;
  std::vector<Peer> peers = NodePeers(c, true, &why);
  ASSERT_EQ(peers.size(), 2u) << why;
  Peer away{"10.5.251.0/24",     "fd00:5:0:fb::/64", "0e:00:00:00:fb:04",
            "0e:00:00:00:fb:06", "198.51.100.7",     "2001:db8:99::7"};
  auto put = c.Etcdctl({"put", "/coreos.com/network/subnets/10.5.251.0-24&fd00:5:0:fb::-64",
                        R"({"PublicIP":"198.51.100.7","PublicIPv6":"2001:db8:99::7","BackendType":"vxlan",)"
                        R"("BackendData":{"VNI":1,"VtepMAC":"0e:00:00:00:fb:04"},)"
                        R"("BackendV6Data":{"VNI":1,"VtepMAC":"0e:00:00:00:fb:06"}})"});
  ASSERT_EQ(put.exit_code, 0) << put.err;
  peers.push_back(away);
  std::string diff;
  ASSERT_TRUE(WaitMeshed(c, peers, &diff)) << diff;

  for (int i = 1; i <= 2; ++i) c.AddPod(i);
  const UdpCount before = c.UnderlayUdpPackets();
  EXPECT_EQ(PingAcross(c, false), 2);
  EXPECT_EQ(PingAcross(c, true), 2);
  const UdpCount after = c.UnderlayUdpPackets();
  EXPECT_EQ(after.v4, before.v4) << "IPv4 pod traffic was encapsulated";
  EXPECT_EQ(after.v6, before.v6) << "IPv6 pod traffic was encapsulated";
}

}  // namespace
}  // namespace netiface::testing
