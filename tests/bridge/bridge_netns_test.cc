// The bridge plugin executed inside a throw-away "host" namespace against throw-away pods, with our
// host-local from BinDir() as IPAM. Reads the kernel back with `ip -j`.
#include <sys/socket.h>

#include <cstdio>
#include <set>
#include <sstream>

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

class BridgeTest : public ::testing::Test {
 protected:
  void SetUp() override { NETIFACE_REQUIRE_ROOT(); }

  json Conf(const Node& node, const std::string& version, json extra = json::object(),
            json ranges = json::parse(R"([[{"subnet":"10.77.0.0/24"}]])")) const {
    json j = {
        {"cniVersion", version}, {"name", "testnet"},
        {"type", "bridge"},      {"bridge", node.bridge()},
        {"isGateway", true},     {"ipam", {{"type", "host-local"}, {"dataDir", node.ipam_dir()}, {"ranges", ranges}}}};
    j.update(extra);
    return j;
  }
  static std::string Bridge() { return Bin("bridge"); }

  // ADD that must succeed; returns the result in canonical form.
  static cni::Result MustAdd(const Node& node, const TempNetns& pod, const std::string& cid, const json& conf,
                             const std::string& cni_args = "") {
    RunResult r = node.Call(Bridge(), "ADD", &pod, cid, conf, cni_args);
    EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
    if (r.exit_code != 0) return {};
    json j = r.Json();
    EXPECT_EQ(j.value("cniVersion", ""), conf["cniVersion"]);
    return cni::ParseResult(j);
  }
  static void MustDel(const Node& node, const TempNetns* pod, const std::string& cid, const json& conf) {
    RunResult r = node.Call(Bridge(), "DEL", pod, cid, conf);
    EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
    EXPECT_EQ(r.out, "");
  }
};

TEST_F(BridgeTest, TwoPodsPingEachOtherAndTheGatewayInEveryVersion) {
  for (const auto& version : AllVersions()) {
    SCOPED_TRACE(version);
    Node node;
    const TempNetns& pod1 = node.NewPod();
    const TempNetns& pod2 = node.NewPod();
    json conf = Conf(node, version);
    cni::Result r1 = MustAdd(node, pod1, "ctr1", conf);
    cni::Result r2 = MustAdd(node, pod2, "ctr2", conf);
    ASSERT_EQ(r1.ips.size(), 1u);
    ASSERT_EQ(r2.ips.size(), 1u);
    EXPECT_EQ(r1.ips[0].gateway, cni::IpAddr::Parse("10.77.0.1"));
    if (version >= "0.3.0") {
      ASSERT_EQ(r1.interfaces.size(), 3u);
      EXPECT_EQ(r1.interfaces[0].name, node.bridge());
      EXPECT_EQ(r1.interfaces[1].name.rfind("veth", 0), 0u);
      EXPECT_EQ(r1.interfaces[1].name.size(), 12u);
      EXPECT_EQ(r1.interfaces[2].name, "eth0");
      EXPECT_EQ(r1.interfaces[2].sandbox, pod1.path());
      EXPECT_EQ(r1.ips[0].interface, 2);
      // The result's MACs are the kernel's.
      EXPECT_EQ(Node::Link(pod1, "eth0").value("address", ""), r1.interfaces[2].mac);
      EXPECT_EQ(Node::Link(node.host(), r1.interfaces[1].name).value("address", ""), r1.interfaces[1].mac);
      EXPECT_EQ(Node::Link(node.host(), node.bridge()).value("address", ""), r1.interfaces[0].mac);
      // The host end is a port of the bridge.
      EXPECT_EQ(Node::Link(node.host(), r1.interfaces[1].name).value("master", ""), node.bridge());
    }
    EXPECT_THAT(Node::Addrs(node.host(), node.bridge()), ElementsAre("10.77.0.1/24"));
    EXPECT_THAT(Node::Addrs(pod1, "eth0"), ElementsAre(r1.ips[0].address.ToString()));
    EXPECT_EQ(node.host().Sh("cat /proc/sys/net/ipv4/ip_forward").out, "1\n");
    std::string ip1 = FirstIp(r1, AF_INET), ip2 = FirstIp(r2, AF_INET);
    EXPECT_NE(ip1, ip2);
    EXPECT_TRUE(pod1.Ping(ip2));
    EXPECT_TRUE(pod2.Ping(ip1));
    EXPECT_TRUE(pod1.Ping("10.77.0.1"));  // the gateway on the bridge answers
    EXPECT_THAT(node.Reserved("testnet"), UnorderedElementsAre(ip1, ip2));

    MustDel(node, &pod1, "ctr1", conf);
    MustDel(node, &pod2, "ctr2", conf);
    EXPECT_THAT(node.Reserved("testnet"), IsEmpty());
    EXPECT_THAT(node.HostLinks("veth"), IsEmpty());
    EXPECT_THAT(Node::LinksOfKind(pod1, "veth"), IsEmpty());
    EXPECT_THAT(node.HostLinks("bridge"), ElementsAre(node.bridge()));  // the bridge stays
    MustDel(node, &pod1, "ctr1", conf);                                 // DEL is idempotent
  }
}

TEST_F(BridgeTest, DualStack) {
  for (const auto& version : VersionsFrom("0.3.0")) {
    SCOPED_TRACE(version);
    Node node;
    node.host().Sh("sysctl -qw net.ipv6.conf.all.forwarding=1");
    const TempNetns& pod1 = node.NewPod();
    const TempNetns& pod2 = node.NewPod();
    json conf = Conf(node, version, {{"isDefaultGateway", true}},
                     json::parse(R"([[{"subnet":"10.77.0.0/24"}],[{"subnet":"fd77::/64"}]])"));
    cni::Result r1 = MustAdd(node, pod1, "ctr1", conf);
    // The bridge this ADD created has a link-local address that is usable at once (no DAD): the
    // kernel solicits a pod's neighbour entry for a forwarded packet only from such an address.
    EXPECT_EQ(node.host().Sh("cat /proc/sys/net/ipv6/conf/" + node.bridge() + "/accept_dad").out, "0\n");
    json ll = node.host().IpJson("-6 addr show dev " + node.bridge() + " scope link");
    ASSERT_EQ(ll.size(), 1u);
    int link_locals = 0;
    for (const json& a : ll[0]["addr_info"]) {
      if (!a.contains("local")) continue;  // `ip` prints an empty object for the filtered-out addresses
      ++link_locals;
      EXPECT_FALSE(a.contains("tentative")) << a.dump();
    }
    EXPECT_EQ(link_locals, 1) << ll.dump();
    cni::Result r2 = MustAdd(node, pod2, "ctr2", conf);
    ASSERT_EQ(r1.ips.size(), 2u);
    EXPECT_THAT(Node::Addrs(node.host(), node.bridge()), UnorderedElementsAre("10.77.0.1/24", "fd77::1/64"));
    // A default route per family, via each family's gateway.
    json routes = pod1.IpJson("-6 route show default");
    ASSERT_EQ(routes.size(), 1u);
    EXPECT_EQ(routes[0].value("gateway", ""), "fd77::1");
    EXPECT_EQ(pod1.IpJson("-4 route show default").at(0).value("gateway", ""), "10.77.0.1");
    EXPECT_TRUE(pod1.Ping(FirstIp(r2, AF_INET6)));
    EXPECT_TRUE(pod2.Ping(FirstIp(r1, AF_INET6)));
    EXPECT_TRUE(pod1.Ping("fd77::1"));
    EXPECT_TRUE(pod1.Ping(FirstIp(r2, AF_INET)));
    MustDel(node, &pod1, "ctr1", conf);
    MustDel(node, &pod2, "ctr2", conf);
    EXPECT_THAT(node.Reserved("testnet"), IsEmpty());
  }
}

TEST_F(BridgeTest, CheckPassesOnOurResultAndFailsOnDamage) {
  for (const auto& version : VersionsFrom("0.4.0")) {
    SCOPED_TRACE(version);
    Node node;
    const TempNetns& pod = node.NewPod();
    json conf = Conf(node, version, {{"isDefaultGateway", true}, {"hairpinMode", true}});
    // A route without gw: the reference's CHECK fails on its own result with these.
    conf["ipam"]["routes"] = json::parse(R"([{"dst":"10.200.0.0/16"}])");
    RunResult add = node.Call(Bridge(), "ADD", &pod, "ctr1", conf);
    ASSERT_EQ(add.exit_code, 0) << add.out << add.err;
    json check_conf = conf;
    check_conf["prevResult"] = add.Json();
    RunResult ok = node.Call(Bridge(), "CHECK", &pod, "ctr1", check_conf);
    EXPECT_EQ(ok.exit_code, 0) << ok.out << ok.err;
    EXPECT_EQ(ok.out, "");

    ASSERT_EQ(pod.Sh("ip route del 10.200.0.0/16").exit_code, 0);
    RunResult no_route = node.Call(Bridge(), "CHECK", &pod, "ctr1", check_conf);
    EXPECT_NE(no_route.exit_code, 0);
    EXPECT_THAT(no_route.out, HasSubstr("10.200.0.0/16"));
    ASSERT_EQ(pod.Sh("ip route add 10.200.0.0/16 via 10.77.0.1").exit_code, 0);
    EXPECT_EQ(node.Call(Bridge(), "CHECK", &pod, "ctr1", check_conf).exit_code, 0);

    std::string addr = cni::ParseResult(add.Json()).ips.at(0).address.ToString();
    ASSERT_EQ(pod.Sh("ip addr del " + addr + " dev eth0").exit_code, 0);
    RunResult no_addr = node.Call(Bridge(), "CHECK", &pod, "ctr1", check_conf);
    EXPECT_NE(no_addr.exit_code, 0);
    EXPECT_THAT(no_addr.out, HasSubstr(addr));

    // A host veth taken off the bridge is caught too.
    std::string veth = cni::ParseResult(add.Json()).interfaces.at(1).name;
    ASSERT_EQ(pod.Sh("ip addr add " + addr + " dev eth0").exit_code, 0);
    ASSERT_EQ(node.host().Sh("ip link set " + veth + " nomaster").exit_code, 0);
    RunResult unslaved = node.Call(Bridge(), "CHECK", &pod, "ctr1", check_conf);
    EXPECT_NE(unslaved.exit_code, 0);
    EXPECT_THAT(unslaved.out, HasSubstr("enslaved"));
    MustDel(node, &pod, "ctr1", conf);
  }
}

TEST_F(BridgeTest, CheckFailsWhenIpamLostTheReservation) {
  Node node;
  const TempNetns& pod = node.NewPod();
  json conf = Conf(node, "1.0.0");
  RunResult add = node.Call(Bridge(), "ADD", &pod, "ctr1", conf);
  ASSERT_EQ(add.exit_code, 0) << add.err;
  std::string ip = FirstIp(cni::ParseResult(add.Json()), AF_INET);
  std::remove((node.ipam_dir() + "/testnet/" + ip).c_str());
  json check_conf = conf;
  check_conf["prevResult"] = add.Json();
  EXPECT_NE(node.Call(Bridge(), "CHECK", &pod, "ctr1", check_conf).exit_code, 0);
}

TEST_F(BridgeTest, DelWithoutNetnsReleasesTheAddress) {
  Node node;
  const TempNetns& pod = node.NewPod();
  json conf = Conf(node, "1.0.0");
  MustAdd(node, pod, "ctr1", conf);
  ASSERT_EQ(node.Reserved("testnet").size(), 1u);
  MustDel(node, nullptr, "ctr1", conf);
  EXPECT_THAT(node.Reserved("testnet"), IsEmpty());
}

TEST_F(BridgeTest, DelAfterThePodNamespaceVanishedReleasesTheAddress) {
  Node node;
  auto pod = std::make_unique<TempNetns>("bnp");
  json conf = Conf(node, "1.0.0");
  MustAdd(node, *pod, "ctr1", conf);
  std::string path = pod->path();
  pod.reset();
  PluginCall c;
  c.command = "DEL";
  c.container_id = "ctr1";
  c.netns = path;
  c.host_ns = node.host().name();
  RunResult r = RunPlugin(Bridge(), c, conf);
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_THAT(node.Reserved("testnet"), IsEmpty());
}

TEST_F(BridgeTest, FailedIpamLeavesNoVeth) {
  Node node;
  const TempNetns& pod1 = node.NewPod();
  const TempNetns& pod2 = node.NewPod();
  // A /30 has one address for pods: the second ADD fails in IPAM, after its veth was made.
  json conf = Conf(node, "1.0.0", json::object(), json::parse(R"([[{"subnet":"10.77.0.0/30"}]])"));
  MustAdd(node, pod1, "ctr1", conf);
  RunResult r = node.Call(Bridge(), "ADD", &pod2, "ctr2", conf);
  EXPECT_NE(r.exit_code, 0);
  EXPECT_EQ(node.HostLinks("veth").size(), 1u);
  EXPECT_THAT(Node::LinksOfKind(pod2, "veth"), IsEmpty());
  EXPECT_EQ(node.Reserved("testnet").size(), 1u);
}

// Issue 17, case 1: without IPAM a 0.1.0/0.2.0 result cannot be written (it has no shape without an
// address). Such an ADD is refused before it changes anything; from 0.3.0 on it is a plain L2 attachment.
TEST_F(BridgeTest, WithoutIpamOldVersionsAreRefusedBeforeAnyChange) {
  for (const auto& version : AllVersions()) {
    SCOPED_TRACE(version);
    Node node;
    const TempNetns& pod = node.NewPod();
    json conf = {{"cniVersion", version}, {"name", "l2"}, {"type", "bridge"}, {"bridge", node.bridge()}};
    RunResult r = node.Call(Bridge(), "ADD", &pod, "ctr1", conf);
    if (version < "0.3.0") {
      EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
      EXPECT_EQ(r.Json().value("code", 0), 1);  // incompatible version
      EXPECT_THAT(node.HostLinks("veth"), IsEmpty());
      EXPECT_THAT(Node::LinksOfKind(pod, "veth"), IsEmpty());
      EXPECT_THAT(node.HostLinks("bridge"), IsEmpty());  // judged before the first change
      continue;
    }
    ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
    cni::Result res = cni::ParseResult(r.Json());
    EXPECT_EQ(res.interfaces.size(), 3u);
    EXPECT_THAT(res.ips, IsEmpty());
    EXPECT_EQ(Node::LinksOfKind(pod, "veth"), std::vector<std::string>{"eth0"});
    MustDel(node, &pod, "ctr1", conf);
    EXPECT_THAT(node.HostLinks("veth"), IsEmpty());
  }
}

TEST_F(BridgeTest, ExistingContainerInterfaceIsRefusedWithoutChanges) {
  Node node;
  const TempNetns& pod = node.NewPod();
  ASSERT_EQ(pod.Sh("ip link add eth0 type veth peer name eth0p").exit_code, 0);
  RunResult r = node.Call(Bridge(), "ADD", &pod, "ctr1", Conf(node, "1.0.0"));
  EXPECT_NE(r.exit_code, 0);
  EXPECT_EQ(r.Json().value("code", 0), 4);
  EXPECT_THAT(node.HostLinks("veth"), IsEmpty());
  EXPECT_THAT(node.HostLinks("bridge"), IsEmpty());  // judged before the first change
  EXPECT_THAT(node.Reserved("testnet"), IsEmpty());
}

TEST_F(BridgeTest, ANonBridgeLinkWithTheBridgesNameIsAnError) {
  Node node;
  const TempNetns& pod = node.NewPod();
  ASSERT_EQ(node.host().Sh("ip link add " + node.bridge() + " type veth peer name " + node.bridge() + "p").exit_code,
            0);
  RunResult r = node.Call(Bridge(), "ADD", &pod, "ctr1", Conf(node, "1.0.0"));
  EXPECT_NE(r.exit_code, 0);
  EXPECT_EQ(r.Json().value("code", 0), 7);
  EXPECT_THAT(r.Json().value("msg", ""), HasSubstr("not a bridge"));
  EXPECT_EQ(node.HostLinks("veth").size(), 2u);  // just the pair made above
  EXPECT_THAT(node.Reserved("testnet"), IsEmpty());
}

TEST_F(BridgeTest, ForeignBridgeAddressNeedsForceAddress) {
  Node node;
  const TempNetns& pod = node.NewPod();
  ASSERT_EQ(node.host()
                .Sh("ip link add " + node.bridge() + " type bridge && ip addr add 10.9.9.1/24 dev " + node.bridge())
                .exit_code,
            0);
  RunResult refused = node.Call(Bridge(), "ADD", &pod, "ctr1", Conf(node, "1.0.0"));
  EXPECT_NE(refused.exit_code, 0);
  EXPECT_THAT(refused.Json().value("msg", ""), HasSubstr("already has an IP address"));
  EXPECT_THAT(node.HostLinks("veth"), IsEmpty());  // rolled back
  EXPECT_THAT(node.Reserved("testnet"), IsEmpty());
  MustAdd(node, pod, "ctr1", Conf(node, "1.0.0", {{"forceAddress", true}}));
  EXPECT_THAT(Node::Addrs(node.host(), node.bridge()), ElementsAre("10.77.0.1/24"));
}

TEST_F(BridgeTest, MtuHairpinAndPromisc) {
  Node node;
  const TempNetns& pod = node.NewPod();
  cni::Result r = MustAdd(node, pod, "ctr1", Conf(node, "1.0.0", {{"mtu", 1400}, {"hairpinMode", true}}));
  ASSERT_EQ(r.interfaces.size(), 3u);
  EXPECT_EQ(Node::Link(node.host(), node.bridge()).value("mtu", 0), 1400);
  json veth = Node::Link(node.host(), r.interfaces[1].name);
  EXPECT_EQ(veth.value("mtu", 0), 1400);
  EXPECT_EQ(Node::Link(pod, "eth0").value("mtu", 0), 1400);
  EXPECT_EQ(veth["linkinfo"]["info_slave_data"].value("hairpin", false), true);

  Node node2;
  const TempNetns& pod2 = node2.NewPod();
  MustAdd(node2, pod2, "ctr1", Conf(node2, "1.0.0", {{"promiscMode", true}}));
  EXPECT_EQ(Node::Link(node2.host(), node2.bridge()).value("promiscuity", 0), 1);
  RunResult both = node2.Call(Bridge(), "ADD", &node2.NewPod(), "ctr2",
                              Conf(node2, "1.0.0", {{"promiscMode", true}, {"hairpinMode", true}}));
  EXPECT_EQ(both.Json().value("code", 0), 7);
}

TEST_F(BridgeTest, RequestedMacPrecedence) {
  Node node;
  const TempNetns& pod1 = node.NewPod();
  const TempNetns& pod2 = node.NewPod();
  cni::Result r1 = MustAdd(node, pod1, "ctr1", Conf(node, "1.0.0"), "IgnoreUnknown=1;MAC=02:11:22:33:44:55");
  EXPECT_EQ(Node::Link(pod1, "eth0").value("address", ""), "02:11:22:33:44:55");
  EXPECT_EQ(r1.interfaces.at(2).mac, "02:11:22:33:44:55");
  json conf =
      Conf(node, "1.0.0",
           {{"runtimeConfig", {{"mac", "02:AA:BB:CC:DD:EE"}}}, {"args", {{"cni", {{"mac", "02:00:00:00:00:09"}}}}}});
  MustAdd(node, pod2, "ctr2", conf, "MAC=02:11:22:33:44:66");
  EXPECT_EQ(Node::Link(pod2, "eth0").value("address", ""), "02:aa:bb:cc:dd:ee");
}

TEST_F(BridgeTest, IpMasqRulesFollowTheAttachment) {
  Node node;
  const TempNetns& pod = node.NewPod();
  json conf = Conf(node, "1.0.0", {{"ipMasq", true}, {"ipMasqBackend", "iptables"}});
  cni::Result r = MustAdd(node, pod, "ctr1", conf);
  std::string rules = node.host().Sh("nft list ruleset").out;
  EXPECT_THAT(rules, HasSubstr("netiface:testnet:ctr1:eth0"));
  EXPECT_THAT(rules, HasSubstr(FirstIp(r, AF_INET)));
  json check_conf = conf;
  check_conf["prevResult"] = ResultToJson(r, "1.0.0");
  EXPECT_EQ(node.Call(Bridge(), "CHECK", &pod, "ctr1", check_conf).exit_code, 0);
  MustDel(node, &pod, "ctr1", conf);
  EXPECT_THAT(node.host().Sh("nft list ruleset").out, ::testing::Not(HasSubstr("netiface:testnet:ctr1")));
}

TEST_F(BridgeTest, StatusAndGcForwardToIpam) {
  Node node;
  const TempNetns& pod1 = node.NewPod();
  const TempNetns& pod2 = node.NewPod();
  json conf = Conf(node, "1.1.0", {{"ipMasq", true}});
  cni::Result r1 = MustAdd(node, pod1, "ctr1", conf);
  MustAdd(node, pod2, "ctr2", conf);
  RunResult status = node.Call(Bridge(), "STATUS", nullptr, "", conf);
  EXPECT_EQ(status.exit_code, 0) << status.out << status.err;

  json gc = conf;
  gc["cni.dev/valid-attachments"] = {{{"containerID", "ctr1"}, {"ifname", "eth0"}}};
  RunResult r = node.Call(Bridge(), "GC", nullptr, "", gc);
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_THAT(node.Reserved("testnet"), ElementsAre(FirstIp(r1, AF_INET)));
  std::string rules = node.host().Sh("nft list ruleset").out;
  EXPECT_THAT(rules, HasSubstr("netiface:testnet:ctr1:eth0"));
  EXPECT_THAT(rules, ::testing::Not(HasSubstr("netiface:testnet:ctr2:eth0")));
}

// libcni/in_process.h: bridge's host-local runs in bridge's own process when CNI_PATH resolves it to the
// same image, and in a child with NETIFACE_IN_PROCESS=0 or when CNI_PATH finds another host-local (the
// reference's); the results and the errors are the same either way.
TEST_F(BridgeTest, DelegateRunsInProcessWithTheSemanticsOfAnExec) {
  Node node;
  TempDir logs;
  auto call = [&](const std::string& command, const TempNetns& pod, const std::string& cid, const json& conf,
                  const std::string& in_process, const std::string& path = "") {
    PluginCall c;
    c.command = command;
    c.container_id = cid;
    c.netns = pod.path();
    c.host_ns = node.host().name();
    c.path = path;
    c.extra_env = {{"NETIFACE_IN_PROCESS", in_process},
                   {"NETIFACE_LOG_FILE", logs / (cid + ".log")},
                   {"NETIFACE_LOG_LEVEL", "debug"}};
    return RunPlugin(Bridge(), c, conf);
  };
  // The process IDs on the log lines of `program`'s ADD for `cid`.
  auto pids = [&](const std::string& cid, const std::string& program) {
    std::set<std::string> out;
    std::istringstream lines(ReadFile(logs / (cid + ".log")));
    for (std::string line; std::getline(lines, line);) {
      size_t open = line.find(" ["), close = line.find("] ");
      if (open == std::string::npos || close == std::string::npos) continue;
      if (line.find(": " + program + " ADD container=" + cid + " ") == std::string::npos) continue;
      out.insert(line.substr(open + 2, close - open - 2));
    }
    return out;
  };
  const json conf = Conf(node, "1.0.0");
  const TempNetns& a = node.NewPod();
  const TempNetns& b = node.NewPod();
  RunResult here = call("ADD", a, "ipa", conf, "1");
  RunResult child = call("ADD", b, "ipb", conf, "0");
  ASSERT_EQ(here.exit_code, 0) << here.out << here.err;
  ASSERT_EQ(child.exit_code, 0) << child.out << child.err;
  EXPECT_EQ(pids("ipa", "bridge").size(), 1u);
  EXPECT_EQ(pids("ipa", "host-local"), pids("ipa", "bridge")) << ReadFile(logs / "ipa.log");
  EXPECT_EQ(pids("ipb", "host-local").size(), 1u);
  EXPECT_NE(pids("ipb", "host-local"), pids("ipb", "bridge")) << ReadFile(logs / "ipb.log");
  json r_here = here.Json(), r_child = child.Json();
  EXPECT_EQ(r_here["ips"][0]["address"], "10.77.0.2/24");
  EXPECT_EQ(r_child["ips"][0]["address"], "10.77.0.3/24");
  for (const char* key : {"gateway", "interface"}) EXPECT_EQ(r_here["ips"][0][key], r_child["ips"][0][key]) << key;
  EXPECT_EQ(r_here["dns"], r_child["dns"]);

  // A failing delegate: the same error object either way, and nothing left behind.
  json bad = conf;
  bad["ipam"]["ranges"][0][0]["rangeStart"] = "10.9.9.9";
  const TempNetns& c = node.NewPod();
  RunResult bad_here = call("ADD", c, "ipc", bad, "1");
  RunResult bad_child = call("ADD", c, "ipd", bad, "0");
  EXPECT_EQ(bad_here.exit_code, 1);
  EXPECT_EQ(bad_child.exit_code, 1);
  EXPECT_EQ(bad_here.Json(), bad_child.Json());
  EXPECT_THAT(bad_here.Json().value("msg", ""), HasSubstr("rangeStart"));
  EXPECT_TRUE(Node::Link(c, "eth0").is_null());

  // Another host-local first on CNI_PATH (the reference's): a child, whatever NETIFACE_IN_PROCESS says.
  if (HaveReference()) {
    const TempNetns& d = node.NewPod();
    RunResult ref = call("ADD", d, "ipe", conf, "1", RefDir() + ":" + BinDir());
    ASSERT_EQ(ref.exit_code, 0) << ref.out << ref.err;
    EXPECT_TRUE(pids("ipe", "host-local").empty()) << "our host-local ran instead of the reference's";
    EXPECT_EQ(call("DEL", d, "ipe", conf, "1", RefDir() + ":" + BinDir()).exit_code, 0);
  }
  EXPECT_EQ(call("DEL", a, "ipa", conf, "1").exit_code, 0);
  EXPECT_EQ(call("DEL", b, "ipb", conf, "0").exit_code, 0);
  EXPECT_THAT(node.Reserved("testnet"), IsEmpty());
}

}  // namespace
}  // namespace netiface::testing
