// netiface-agent end to end: a real etcd, the built agent on three nodes, pods through the CLI and our
// flannel -> bridge -> host-local, host-gw routes between the nodes. Everything in namespaces made here.
#include <sys/wait.h>

#include <set>

#include <gtest/gtest.h>

#include "cluster_fixture.h"
#include "netiface/cni/ip.h"

namespace netiface::testing {
namespace {

using std::chrono::seconds;

constexpr char kHostGw[] = R"({"Network": "10.5.0.0/16", "Backend": {"Type": "host-gw"}})";

std::string SubnetOf(const std::string& first_host) {
  // "10.5.34.1/24" -> "10.5.34.0/24"
  auto net = cni::IpNet::Parse(first_host);
  return net ? net->Network().ToString() : "";
}

class AgentClusterTest : public ::testing::Test {
 protected:
  void SetUp() override {
    NETIFACE_REQUIRE_ROOT();
    if (access(Bin("netiface-agent").c_str(), X_OK) != 0) GTEST_SKIP() << "netiface-agent not built";
  }
  void TearDown() override {
    if (HasFailure() && cluster_) {
      for (int i = 1; i <= cluster_->size(); ++i) {
        std::string log = cluster_->AgentLog(i);
        if (log.size() > 6000) log = log.substr(log.size() - 6000);
        std::cerr << "---- agent log, node " << i << ":\n" << log << "\n";
      }
    }
    cluster_.reset();
  }
  Cluster& MakeCluster(int nodes) {
    cluster_ = std::make_unique<Cluster>(nodes);
    return *cluster_;
  }
  // Every node has a route to every other node's subnet via that node's uplink address.
  bool FullMesh(Cluster& c, const std::set<int>& nodes) {
    for (int i : nodes) {
      std::vector<std::string> want;
      for (int j : nodes) {
        if (j == i) continue;
        if (c.Subnet(j).empty()) return false;
        want.push_back(SubnetOf(c.Subnet(j)) + " via 192.0.2." + std::to_string(j));
      }
      std::sort(want.begin(), want.end());
      if (c.AgentRoutes(i) != want) return false;
    }
    return true;
  }
  std::unique_ptr<Cluster> cluster_;
};

TEST_F(AgentClusterTest, PodsOnEveryNodeReachEachOther) {
  Cluster& c = MakeCluster(3);
  c.PutConfig(kHostGw);
  // Node 1 finds its uplink by name, node 2 by address, node 3 through the default route.
  c.StartAgent(1, {"--iface=eth0", "--ip-masq"});
  c.StartAgent(2, {"--iface=192.0.2.2", "--ip-masq"});
  c.StartAgent(3, {"--ip-masq"});
  std::set<std::string> subnets;
  for (int i = 1; i <= 3; ++i) {
    ASSERT_TRUE(c.WaitSubnetEnv(i)) << "no subnet.env on node " << i;
    subnets.insert(c.Subnet(i));
    std::string env = ReadFile(c.node(i).subnet_env());
    EXPECT_NE(env.find("FLANNEL_NETWORK=10.5.0.0/16\n"), std::string::npos) << env;
    EXPECT_NE(env.find("FLANNEL_MTU=1500\n"), std::string::npos) << env;
    EXPECT_NE(env.find("FLANNEL_IPMASQ=true\n"), std::string::npos) << env;
  }
  EXPECT_EQ(subnets.size(), 3u);
  ASSERT_TRUE(WaitFor(
      [&] {
        return FullMesh(c, {1, 2, 3});
      },
      seconds(15)))
      << "routes: " << ::testing::PrintToString(c.AgentRoutes(1)) << ::testing::PrintToString(c.AgentRoutes(2))
      << ::testing::PrintToString(c.AgentRoutes(3));

  for (int i = 1; i <= 3; ++i) {
    c.AddPod(i);
    c.AddPod(i);
  }
  for (int i = 1; i <= 3; ++i) {
    for (int p = 0; p < 2; ++p) {
      for (int j = 1; j <= 3; ++j) {
        if (j == i) continue;
        for (int q = 0; q < 2; ++q) {
          EXPECT_TRUE(c.PodPing(i, p, c.PodIp(j, q)))
              << "pod " << c.PodIp(i, p) << " on node " << i << " cannot reach " << c.PodIp(j, q);
        }
      }
    }
  }
  // Masquerade: the underlay has no route to the pods, so a pod reaches it only masqueraded.
  EXPECT_TRUE(c.PodPing(1, 0, "192.0.2.254"));
  auto rules = c.node(1).ns->Sh("nft list chain inet netiface cluster_postrouting");
  EXPECT_NE(rules.out.find("masquerade fully-random"), std::string::npos) << rules.out << rules.err;

  auto leases = c.Leases();
  ASSERT_EQ(leases.size(), 3u) << leases.dump();
  std::set<std::string> public_ips;
  for (const auto& l : leases) {
    public_ips.insert(l.value("publicIP", ""));
    EXPECT_EQ(l.value("backendType", ""), "host-gw");
    EXPECT_GT(l.value("ttlSeconds", 0), 86000);
    EXPECT_TRUE(subnets.count(l.value("subnet", "").substr(0, l.value("subnet", "").rfind('.')) + ".1/24")) << l.dump();
  }
  EXPECT_EQ(public_ips, (std::set<std::string>{"192.0.2.1", "192.0.2.2", "192.0.2.3"}));
  // flanneld's value format, as another flanneld would read it.
  auto raw = c.etcd().Etcdctl({"get", "--prefix", "/coreos.com/network/subnets/", "--print-value-only"});
  EXPECT_NE(raw.out.find(R"({"PublicIP":"192.0.2.1")"), std::string::npos) << raw.out;

  for (int i = 1; i <= 3; ++i) c.DelPods(i);
  // A stop keeps everything in place (flanneld's behaviour): the lease, the routes and subnet.env.
  for (int i = 1; i <= 3; ++i) {
    int st = c.StopAgent(i);
    EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0) << "agent " << i << " exit status " << st;
  }
  EXPECT_TRUE(FullMesh(c, {1, 2, 3}));
  EXPECT_EQ(c.Leases().size(), 3u);
  // Only the explicit cleanup takes the rules and routes off a node.
  auto cleanup = c.node(1).ns->Sh(Bin("netiface-agent") + " cleanup");
  EXPECT_EQ(cleanup.exit_code, 0) << cleanup.err;
  EXPECT_TRUE(c.AgentRoutes(1).empty());
  EXPECT_NE(c.node(1).ns->Sh("nft list table inet netiface").exit_code, 0);
  EXPECT_EQ(c.node(1).ns->IpJson("route show default").size(), 1u);  // routes not ours stay
}

TEST_F(AgentClusterTest, MutualTlsToEtcd) {
  cluster_ = std::make_unique<Cluster>(2, /*etcd_tls=*/true);
  Cluster& c = *cluster_;
  ASSERT_EQ(c.etcd().endpoint().rfind("https://", 0), 0u);
  c.PutConfig(kHostGw);
  c.StartAgent(1);
  c.StartAgent(2);
  ASSERT_TRUE(c.WaitSubnetEnv(1) && c.WaitSubnetEnv(2));
  EXPECT_TRUE(WaitFor([&] { return FullMesh(c, {1, 2}); }, seconds(15)));
  EXPECT_EQ(c.Leases().size(), 2u);
}

TEST_F(AgentClusterTest, RestartKeepsTheSubnetAndAnExpiredLeaseTakesItsRoutes) {
  Cluster& c = MakeCluster(3);
  c.PutConfig(kHostGw);
  const std::vector<std::string> ttl = {"--subnet-lease-ttl=4"};
  for (int i = 1; i <= 3; ++i) c.StartAgent(i, ttl);
  for (int i = 1; i <= 3; ++i) ASSERT_TRUE(c.WaitSubnetEnv(i));
  ASSERT_TRUE(WaitFor([&] { return FullMesh(c, {1, 2, 3}); }, seconds(15)));
  const std::string subnet3 = c.Subnet(3);

  // Renewal keeps a short lease alive well past its TTL.
  std::this_thread::sleep_for(seconds(6));
  EXPECT_TRUE(FullMesh(c, {1, 2, 3}));
  EXPECT_EQ(c.Leases().size(), 3u);

  // Restart while the lease lives: the same subnet, and the same key (the lease holding our public IP is
  // renewed in place, not created again: its create_revision stays).
  const std::string key3 =
      "/coreos.com/network/subnets/" + SubnetOf(subnet3).replace(SubnetOf(subnet3).find('/'), 1, "-");
  auto create_revision = [&] {
    auto r = c.etcd().Etcdctl({"get", key3, "-w", "json"});
    auto j = nlohmann::json::parse(r.out, nullptr, false);
    return j.is_object() && j.contains("kvs") ? j["kvs"][0].value("create_revision", int64_t{0}) : int64_t{0};
  };
  const int64_t created = create_revision();
  ASSERT_GT(created, 0) << key3;
  c.StopAgent(3);
  c.StartAgent(3, ttl);
  ASSERT_TRUE(WaitFor([&] { return c.AgentLogSinceStart(3).find("leased") != std::string::npos; }, seconds(15)));
  EXPECT_EQ(c.Subnet(3), subnet3);
  EXPECT_EQ(create_revision(), created) << "the restart created the lease anew instead of reusing it";
  // Its routes to the others stayed through the restart (the first reconcile waits for the snapshot).
  EXPECT_TRUE(FullMesh(c, {1, 2, 3}));

  // Stopped past its TTL: the lease expires and the other nodes drop their route to it.
  c.StopAgent(3);
  ASSERT_TRUE(WaitFor([&] { return FullMesh(c, {1, 2}); }, seconds(20))) << ::testing::PrintToString(c.AgentRoutes(1));
  EXPECT_EQ(c.Leases().size(), 2u);
  // Its own node keeps what it had (routes to the others).
  EXPECT_EQ(c.AgentRoutes(3).size(), 2u);

  // Restarted after the expiry: the same subnet again (the previous one from subnet.env, still free).
  c.StartAgent(3, ttl);
  ASSERT_TRUE(WaitFor([&] { return FullMesh(c, {1, 2, 3}); }, seconds(15)));
  EXPECT_EQ(c.Subnet(3), subnet3);
}

TEST_F(AgentClusterTest, ThreeAgentsRaceForTwoSubnets) {
  Cluster& c = MakeCluster(3);
  // A /24 in /26 subnets, restricted to exactly two: .64 and .128.
  c.PutConfig(R"({"Network": "10.6.0.0/24", "SubnetLen": 26, "SubnetMin": "10.6.0.64", "SubnetMax": "10.6.0.128",
                  "Backend": {"Type": "host-gw"}})");
  for (int i = 1; i <= 3; ++i) c.StartAgent(i);
  ASSERT_TRUE(WaitFor(
      [&] {
        int with = 0;
        for (int i = 1; i <= 3; ++i) with += c.Subnet(i).empty() ? 0 : 1;
        return with == 2;
      },
      seconds(20)));
  int loser = 0;
  std::set<std::string> subnets;
  for (int i = 1; i <= 3; ++i) {
    if (c.Subnet(i).empty()) {
      loser = i;
    } else {
      subnets.insert(c.Subnet(i));
    }
  }
  EXPECT_EQ(subnets, (std::set<std::string>{"10.6.0.65/26", "10.6.0.129/26"}));
  ASSERT_NE(loser, 0);
  ASSERT_TRUE(WaitFor([&] { return c.AgentLog(loser).find("out of subnets") != std::string::npos; }, seconds(10)))
      << c.AgentLog(loser);
  // It keeps trying, without a subnet.env.
  std::this_thread::sleep_for(seconds(2));
  EXPECT_TRUE(c.node(loser).agent->Running());
  EXPECT_TRUE(c.Subnet(loser).empty());

  // One winner leaves: its agent stops and its lease is deleted; the third takes that subnet.
  int winner = loser == 1 ? 2 : 1;
  std::string freed = SubnetOf(c.Subnet(winner));
  c.StopAgent(winner);
  std::string key = "/coreos.com/network/subnets/" + freed.substr(0, freed.find('/')) + "-26";
  auto del = c.etcd().Etcdctl({"del", key});
  ASSERT_EQ(del.out, "1\n") << key << del.err;
  ASSERT_TRUE(WaitFor([&] { return !c.Subnet(loser).empty(); }, seconds(15))) << c.AgentLog(loser);
  EXPECT_EQ(SubnetOf(c.Subnet(loser)), freed);
}

TEST_F(AgentClusterTest, RidesOutAnEtcdOutage) {
  Cluster& c = MakeCluster(2);
  c.PutConfig(kHostGw);
  c.StartAgent(1);
  c.StartAgent(2);
  ASSERT_TRUE(c.WaitSubnetEnv(1) && c.WaitSubnetEnv(2));
  ASSERT_TRUE(WaitFor([&] { return FullMesh(c, {1, 2}); }, seconds(15)));
  std::string env1 = ReadFile(c.node(1).subnet_env());

  c.etcd().Stop();
  std::this_thread::sleep_for(seconds(4));
  EXPECT_TRUE(c.node(1).agent->Running());
  EXPECT_TRUE(c.node(2).agent->Running());
  EXPECT_TRUE(FullMesh(c, {1, 2}));
  EXPECT_EQ(ReadFile(c.node(1).subnet_env()), env1);

  // etcd comes back; a lease is added before the agents have reconnected (their backoff is up to 5 s).
  c.etcd().Start();
  auto put =
      c.etcd().Etcdctl({"put", "/coreos.com/network/subnets/10.5.99.0-24",
                        R"({"PublicIP":"192.0.2.9","PublicIPv6":null,"BackendType":"host-gw","BackendData":null})"});
  ASSERT_EQ(put.exit_code, 0) << put.err;
  for (int i = 1; i <= 2; ++i) {
    EXPECT_TRUE(WaitFor(
        [&] {
          auto r = c.AgentRoutes(i);
          return std::find(r.begin(), r.end(), "10.5.99.0/24 via 192.0.2.9") != r.end();
        },
        seconds(20)))
        << "node " << i << ": " << ::testing::PrintToString(c.AgentRoutes(i));
  }
  EXPECT_NE(c.AgentLog(1).find("watch resumed"), std::string::npos);
  // And removed with the lease.
  c.etcd().Etcdctl({"del", "/coreos.com/network/subnets/10.5.99.0-24"});
  EXPECT_TRUE(WaitFor([&] { return FullMesh(c, {1, 2}); }, seconds(10)));
}

TEST_F(AgentClusterTest, BadInputIsNamedAndNothingIsHalfWritten) {
  Cluster& c = MakeCluster(1);
  auto untouched = [&] {
    return c.Subnet(1).empty() && c.AgentRoutes(1).empty() &&
           c.node(1).ns->Sh("nft list table inet netiface").exit_code != 0;
  };
  struct Case {
    std::string config;
    std::string message;
  };
  for (const Case& k : {Case{R"({"Network": "10.5.0.0/16", )", "invalid JSON"},
                        Case{R"({"Network": "10.5.0.0/30", "Backend": {"Type": "host-gw"}})", "10.5.0.0/30"},
                        Case{R"({"Network": "10.5.0.0/16", "SubnetMin": "10.5.1.128", "Backend": {"Type": "host-gw"}})",
                             "SubnetMin 10.5.1.128"}}) {
    c.PutConfig(k.config);
    c.StartAgent(1);
    EXPECT_TRUE(WaitFor([&] { return c.AgentLog(1).find(k.message) != std::string::npos; }, seconds(10)))
        << "expected \"" << k.message << "\" in:\n"
        << c.AgentLog(1);
    EXPECT_TRUE(c.node(1).agent->Running()) << "the agent must keep waiting for a usable config";
    EXPECT_TRUE(untouched());
    c.StopAgent(1);
  }
  // Once the config is fixed, a waiting agent carries on by itself.
  c.PutConfig(R"({"Network": "10.5.0.0/16", )");
  c.StartAgent(1);
  std::this_thread::sleep_for(seconds(1));
  c.PutConfig(kHostGw);
  EXPECT_TRUE(c.WaitSubnetEnv(1, seconds(40))) << c.AgentLog(1);
  c.StopAgent(1);

  // An endpoint nobody listens on: the agent says so and keeps trying, writing nothing.
  Sh("rm -f " + c.node(1).subnet_env());
  c.node(1).ns->Sh("nft delete table inet netiface");
  c.StartAgent(1, {"--etcd-endpoints=http://192.0.2.254:1"});
  EXPECT_TRUE(WaitFor([&] { return c.AgentLogSinceStart(1).find("192.0.2.254:1") != std::string::npos; }, seconds(10)))
      << c.AgentLog(1);
  EXPECT_TRUE(c.node(1).agent->Running());
  EXPECT_TRUE(c.Subnet(1).empty());
  c.StopAgent(1);

  // TLS files that do not exist: a clear message and exit code 1 at once.
  c.StartAgent(1, {"--etcd-cafile=/nonexistent/ca.pem"});
  EXPECT_TRUE(WaitFor([&] { return !c.node(1).agent->Running(); }, seconds(10)));
  int st = c.StopAgent(1);
  EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 1) << st;
  EXPECT_NE(c.AgentLog(1).find("/nonexistent/ca.pem"), std::string::npos) << c.AgentLog(1);
  EXPECT_TRUE(c.Subnet(1).empty());
}

}  // namespace
}  // namespace netiface::testing
