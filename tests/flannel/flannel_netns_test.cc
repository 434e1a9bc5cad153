// flannel -> bridge -> host-local, all ours, executed inside a throw-away "host" namespace; and the
// kube-flannel chain with the reference portmap after it.
#include <sys/socket.h>
#include <unistd.h>

#include <filesystem>
#include <set>
#include <thread>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "netiface/cni/result.h"
#include "node.h"
#include "testutil.h"

namespace netiface::testing {
namespace {

using nlohmann::json;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::UnorderedElementsAre;

class FlannelNetnsTest : public ::testing::Test {
 protected:
  void SetUp() override { NETIFACE_REQUIRE_ROOT(); }

  static std::string Flannel() { return Bin("flannel"); }
  static std::string SubnetEnv(const Node& node) { return node.dir() / "subnet.env"; }
  static std::string DataDir(const Node& node) { return node.dir() / "flannel"; }
  static void WriteEnv(const Node& node, const std::string& subnet, const std::string& v6 = "") {
    std::string text =
        "FLANNEL_NETWORK=10.244.0.0/16\nFLANNEL_SUBNET=" + subnet + "\nFLANNEL_MTU=1450\nFLANNEL_IPMASQ=true\n";
    if (!v6.empty()) text += "FLANNEL_IPV6_NETWORK=fd44::/48\nFLANNEL_IPV6_SUBNET=" + v6 + "\n";
    WriteFile(SubnetEnv(node), text);
  }
  // The first plugin of the kube-flannel conflist, pointed at the node's files.
  static json Conf(const Node& node, const std::string& version) {
    return {{"cniVersion", version},
            {"name", "cbr0"},
            {"type", "flannel"},
            {"subnetFile", SubnetEnv(node)},
            {"dataDir", DataDir(node)},
            {"ipam", {{"dataDir", node.ipam_dir()}}},
            {"delegate", {{"bridge", node.bridge()}, {"hairpinMode", true}, {"isDefaultGateway", true}}}};
  }
  static cni::Result MustAdd(const Node& node, const TempNetns& pod, const std::string& cid, const json& conf) {
    RunResult r = node.Call(Flannel(), "ADD", &pod, cid, conf);
    EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
    if (r.exit_code != 0) return {};
    return cni::ParseResult(r.Json());
  }
};

TEST_F(FlannelNetnsTest, TwoPodsPingViaTheBridgeInEveryVersion) {
  for (const auto& version : AllVersions()) {
    SCOPED_TRACE(version);
    Node node;
    WriteEnv(node, "10.244.1.1/24");
    const TempNetns& pod1 = node.NewPod();
    const TempNetns& pod2 = node.NewPod();
    json conf = Conf(node, version);
    cni::Result r1 = MustAdd(node, pod1, "ctr1", conf);
    cni::Result r2 = MustAdd(node, pod2, "ctr2", conf);
    std::string ip1 = FirstIp(r1, AF_INET), ip2 = FirstIp(r2, AF_INET);
    ASSERT_FALSE(ip1.empty());
    EXPECT_TRUE(cni::IpNet::Parse("10.244.1.0/24")->Contains(*cni::IpAddr::Parse(ip1)));
    if (version >= "0.3.0") {
      ASSERT_EQ(r1.interfaces.size(), 3u);
      EXPECT_EQ(r1.interfaces[0].name, node.bridge());
    }
    EXPECT_THAT(ListDir(DataDir(node)), ElementsAre("ctr1-eth0", "ctr2-eth0"));
    EXPECT_EQ(Node::Link(pod1, "eth0").value("mtu", 0), 1450);  // FLANNEL_MTU
    EXPECT_THAT(Node::Addrs(node.host(), node.bridge()), ElementsAre("10.244.1.1/24"));
    EXPECT_TRUE(pod1.Ping(ip2));
    EXPECT_TRUE(pod2.Ping(ip1));
    EXPECT_TRUE(pod1.Ping("10.244.1.1"));
    // Routes: the flannel network and the default, both via the bridge's gateway.
    json routes = pod1.IpJson("-4 route show");
    std::vector<std::string> via;
    for (const auto& r : routes) {
      if (r.contains("gateway")) via.push_back(r["dst"].get<std::string>() + " " + r["gateway"].get<std::string>());
    }
    EXPECT_THAT(via, UnorderedElementsAre("default 10.244.1.1", "10.244.0.0/16 10.244.1.1"));

    for (auto [pod, cid] : {std::pair{&pod1, "ctr1"}, std::pair{&pod2, "ctr2"}}) {
      RunResult del = node.Call(Flannel(), "DEL", pod, cid, conf);
      EXPECT_EQ(del.exit_code, 0) << del.out << del.err;
    }
    EXPECT_THAT(ListDir(DataDir(node)), IsEmpty());
    EXPECT_THAT(node.Reserved("cbr0"), IsEmpty());
    EXPECT_THAT(node.HostLinks("veth"), IsEmpty());
  }
}

TEST_F(FlannelNetnsTest, DualStack) {
  Node node;
  node.host().Sh("sysctl -qw net.ipv6.conf.all.forwarding=1");
  WriteEnv(node, "10.244.1.1/24", "fd44:0:0:1::1/64");
  const TempNetns& pod1 = node.NewPod();
  const TempNetns& pod2 = node.NewPod();
  json conf = Conf(node, "1.1.0");
  cni::Result r1 = MustAdd(node, pod1, "ctr1", conf);
  cni::Result r2 = MustAdd(node, pod2, "ctr2", conf);
  ASSERT_EQ(r1.ips.size(), 2u);
  EXPECT_TRUE(pod1.Ping(FirstIp(r2, AF_INET6)));
  EXPECT_TRUE(pod2.Ping(FirstIp(r1, AF_INET)));
  EXPECT_TRUE(pod1.Ping("fd44:0:0:1::1"));
  json check = conf;
  check["prevResult"] = cni::ResultToJson(r1, "1.1.0");
  RunResult c = node.Call(Flannel(), "CHECK", &pod1, "ctr1", check);
  EXPECT_EQ(c.exit_code, 0) << c.out << c.err;
}

TEST_F(FlannelNetnsTest, CheckPassesOnOurResultAndFailsOnDamage) {
  for (const auto& version : VersionsFrom("0.4.0")) {
    SCOPED_TRACE(version);
    Node node;
    WriteEnv(node, "10.244.1.1/24");
    const TempNetns& pod = node.NewPod();
    json conf = Conf(node, version);
    RunResult add = node.Call(Flannel(), "ADD", &pod, "ctr1", conf);
    ASSERT_EQ(add.exit_code, 0) << add.err;
    json check = conf;
    check["prevResult"] = add.Json();
    // Every route flannel renders has no gw: the reference bridge's CHECK fails on exactly this.
    RunResult ok = node.Call(Flannel(), "CHECK", &pod, "ctr1", check);
    EXPECT_EQ(ok.exit_code, 0) << ok.out << ok.err;
    ASSERT_EQ(pod.Sh("ip route del 10.244.0.0/16").exit_code, 0);
    RunResult bad = node.Call(Flannel(), "CHECK", &pod, "ctr1", check);
    EXPECT_NE(bad.exit_code, 0);
    EXPECT_THAT(bad.out, HasSubstr("10.244.0.0/16"));
  }
}

TEST_F(FlannelNetnsTest, DelAfterSubnetEnvChangedStillReleases) {
  Node node;
  WriteEnv(node, "10.244.1.1/24");
  const TempNetns& pod = node.NewPod();
  json conf = Conf(node, "1.0.0");
  MustAdd(node, pod, "ctr1", conf);
  ASSERT_EQ(node.Reserved("cbr0").size(), 1u);
  WriteEnv(node, "10.244.9.1/24");  // a new lease for the node
  RunResult del = node.Call(Flannel(), "DEL", &pod, "ctr1", conf);
  EXPECT_EQ(del.exit_code, 0) << del.out << del.err;
  EXPECT_THAT(node.Reserved("cbr0"), IsEmpty());
  EXPECT_THAT(ListDir(DataDir(node)), IsEmpty());
}

TEST_F(FlannelNetnsTest, DelAfterSubnetEnvVanishedStillReleases) {
  Node node;
  WriteEnv(node, "10.244.1.1/24");
  const TempNetns& pod = node.NewPod();
  json conf = Conf(node, "1.0.0");
  MustAdd(node, pod, "ctr1", conf);
  std::filesystem::remove(SubnetEnv(node));
  RunResult del = node.Call(Flannel(), "DEL", nullptr, "ctr1", conf);  // and without a netns
  EXPECT_EQ(del.exit_code, 0) << del.out << del.err;
  EXPECT_THAT(node.Reserved("cbr0"), IsEmpty());
}

TEST_F(FlannelNetnsTest, DelWithLostSavedConfigRendersAndReleases) {
  Node node;
  WriteEnv(node, "10.244.1.1/24");
  const TempNetns& pod = node.NewPod();
  json conf = Conf(node, "1.0.0");
  MustAdd(node, pod, "ctr1", conf);
  std::filesystem::remove(DataDir(node) + "/ctr1-eth0");
  RunResult del = node.Call(Flannel(), "DEL", &pod, "ctr1", conf);
  EXPECT_EQ(del.exit_code, 0) << del.out << del.err;
  EXPECT_THAT(node.Reserved("cbr0"), IsEmpty());
}

TEST_F(FlannelNetnsTest, StatusIsCode50WithoutSubnetEnv) {
  Node node;
  json conf = Conf(node, "1.1.0");
  RunResult missing = node.Call(Flannel(), "STATUS", nullptr, "", conf);
  EXPECT_NE(missing.exit_code, 0);
  EXPECT_EQ(missing.Json().value("code", 0), 50);
  EXPECT_THAT(missing.Json().value("msg", ""), HasSubstr(SubnetEnv(node)));
  WriteEnv(node, "10.244.1.1/24");
  RunResult ok = node.Call(Flannel(), "STATUS", nullptr, "", conf);
  EXPECT_EQ(ok.exit_code, 0) << ok.out << ok.err;
}

TEST_F(FlannelNetnsTest, ParallelAddsOnAFreshNodeCreateOneBridge) {
  Node node;
  WriteEnv(node, "10.244.1.1/24");
  json conf = Conf(node, "1.0.0");
  constexpr int kPods = 6;
  std::vector<const TempNetns*> pods;
  for (int i = 0; i < kPods; ++i) pods.push_back(&node.NewPod());
  std::vector<RunResult> results(kPods);
  std::vector<std::thread> threads;
  for (int i = 0; i < kPods; ++i) {
    threads.emplace_back(
        [&, i] { results[i] = node.Call(Flannel(), "ADD", pods[i], "ctr" + std::to_string(i), conf); });
  }
  for (auto& t : threads) t.join();
  std::set<std::string> ips;
  for (int i = 0; i < kPods; ++i) {
    EXPECT_EQ(results[i].exit_code, 0) << i << ": " << results[i].out << results[i].err;
    if (results[i].exit_code == 0) ips.insert(FirstIp(cni::ParseResult(results[i].Json()), AF_INET));
  }
  EXPECT_EQ(ips.size(), static_cast<size_t>(kPods));
  EXPECT_THAT(node.HostLinks("bridge"), ElementsAre(node.bridge()));
  EXPECT_THAT(Node::Addrs(node.host(), node.bridge()), ElementsAre("10.244.1.1/24"));
  EXPECT_EQ(node.HostLinks("veth").size(), static_cast<size_t>(kPods));
  for (const auto& ip : ips) EXPECT_TRUE(pods[0]->Ping(ip)) << ip;
}

TEST_F(FlannelNetnsTest, FailedDelegatedAddLeavesNothing) {
  Node node;
  WriteEnv(node, "10.244.1.1/30");  // room for one pod: the second ADD fails in host-local
  const TempNetns& pod1 = node.NewPod();
  const TempNetns& pod2 = node.NewPod();
  json conf = Conf(node, "1.0.0");
  MustAdd(node, pod1, "ctr1", conf);
  RunResult r = node.Call(Flannel(), "ADD", &pod2, "ctr2", conf);
  EXPECT_NE(r.exit_code, 0);
  EXPECT_THAT(ListDir(DataDir(node)), ElementsAre("ctr1-eth0"));
  EXPECT_EQ(node.HostLinks("veth").size(), 1u);
  EXPECT_THAT(Node::LinksOfKind(pod2, "veth"), IsEmpty());
  EXPECT_EQ(node.Reserved("cbr0").size(), 1u);
}

TEST_F(FlannelNetnsTest, GcReleasesAndForgetsAttachmentsThatAreNotValid) {
  Node node;
  WriteEnv(node, "10.244.1.1/24");
  const TempNetns& pod1 = node.NewPod();
  const TempNetns& pod2 = node.NewPod();
  json conf = Conf(node, "1.1.0");
  cni::Result r1 = MustAdd(node, pod1, "ctr1", conf);
  MustAdd(node, pod2, "ctr2", conf);
  json gc = conf;
  gc["cni.dev/valid-attachments"] = {{{"containerID", "ctr1"}, {"ifname", "eth0"}}};
  RunResult r = node.Call(Flannel(), "GC", nullptr, "", gc);
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_THAT(node.Reserved("cbr0"), ElementsAre(FirstIp(r1, AF_INET)));
  EXPECT_THAT(ListDir(DataDir(node)), ElementsAre("ctr1-eth0"));
}

// kube-flannel's conflist: flannel, then the reference portmap with our result as prevResult.
TEST_F(FlannelNetnsTest, ChainWithTheReferencePortmap) {
  if (access("/usr/sbin/iptables", X_OK) != 0 || access((RefDir() + "/portmap").c_str(), X_OK) != 0) {
    GTEST_SKIP() << "needs /usr/sbin/iptables and the reference portmap";
  }
  Node node;
  WriteEnv(node, "10.244.1.1/24");
  const TempNetns& pod = node.NewPod();
  json conf = Conf(node, "0.3.1");
  RunResult add = node.Call(Flannel(), "ADD", &pod, "ctr1", conf);
  ASSERT_EQ(add.exit_code, 0) << add.out << add.err;
  json portmap = {
      {"cniVersion", "0.3.1"},
      {"name", "cbr0"},
      {"type", "portmap"},
      {"runtimeConfig", {{"portMappings", {{{"hostPort", 18080}, {"containerPort", 80}, {"protocol", "tcp"}}}}}},
      {"prevResult", add.Json()}};
  RunResult pm = node.Call(RefDir() + "/portmap", "ADD", &pod, "ctr1", portmap);
  ASSERT_EQ(pm.exit_code, 0) << pm.out << pm.err;
  EXPECT_EQ(cni::ParseResult(pm.Json()), cni::ParseResult(add.Json()));  // passed through
  std::string ip = FirstIp(cni::ParseResult(add.Json()), AF_INET);
  std::string nat = node.host().Sh("iptables-save -t nat").out;
  EXPECT_THAT(nat, HasSubstr("--dport 18080"));
  EXPECT_THAT(nat, HasSubstr(ip + ":80"));

  // Traffic through the DNAT when there is something to listen with.
  if (access("/usr/bin/python3", X_OK) == 0) {
    pod.Sh(
        "timeout 10 /usr/bin/python3 -c 'import socket;s=socket.socket();s.setsockopt(socket.SOL_SOCKET,"
        "socket.SO_REUSEADDR,1);s.bind((\"0.0.0.0\",80));s.listen(1);c,_=s.accept();c.sendall(b\"hello-pod\");"
        "c.close()' >/dev/null 2>&1 &");
    std::string got;
    for (int i = 0; i < 50 && got.find("hello-pod") == std::string::npos; ++i) {
      got = node.host()
                .Sh("timeout 2 /usr/bin/python3 -c 'import socket;s=socket.create_connection("
                    "(\"10.244.1.1\",18080),1);print(s.recv(64).decode())' 2>/dev/null")
                .out;
      if (got.find("hello-pod") == std::string::npos) usleep(100 * 1000);
    }
    EXPECT_THAT(got, HasSubstr("hello-pod"));
  }

  json portmap_del = portmap;
  RunResult pm_del = node.Call(RefDir() + "/portmap", "DEL", &pod, "ctr1", portmap_del);
  EXPECT_EQ(pm_del.exit_code, 0) << pm_del.out << pm_del.err;
  RunResult del = node.Call(Flannel(), "DEL", &pod, "ctr1", conf);
  EXPECT_EQ(del.exit_code, 0) << del.out << del.err;
  EXPECT_THAT(node.Reserved("cbr0"), IsEmpty());
  EXPECT_THAT(node.host().Sh("iptables-save -t nat").out, ::testing::Not(HasSubstr(ip + ":80")));
}

}  // namespace
}  // namespace netiface::testing
