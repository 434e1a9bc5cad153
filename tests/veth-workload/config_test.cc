#include "netiface/veth_workload/config.h"

#include <unistd.h>

#include <climits>

#include <gtest/gtest.h>

#include "netiface/cni/error.h"
#include "test_helpers.h"
#include "testutil.h"

namespace netiface::veth_workload {
namespace {

using nlohmann::json;
using test::BaseConf;
using test::MakeArgs;

Config Parse(const json& conf) { return ParseConfig(cni::ParseNetConf(conf.dump())); }

// Expects `f` to throw cni::Error with `code` and a what() containing `needle`.
template <typename F>
void ExpectError(F&& f, int code, const std::string& needle) {
  try {
    f();
    ADD_FAILURE() << "no error; expected code " << code << " mentioning " << needle;
  } catch (const cni::Error& e) {
    EXPECT_EQ(e.code(), code) << e.what();
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
  }
}

TEST(ConfigTest, Defaults) {
  json conf = BaseConf();
  conf.erase("nodename");
  Config c = Parse(conf);
  EXPECT_EQ(c.network, "vwnet");
  EXPECT_EQ(c.ipam_type, "host-local");
  EXPECT_EQ(c.ipam["subnet"], "10.0.0.0/24");
  EXPECT_EQ(c.mtu, 1500);
  EXPECT_EQ(c.num_queues, 1);
  EXPECT_EQ(c.veth_prefix, "cali");
  EXPECT_FALSE(c.include_default_routes);
  EXPECT_FALSE(c.allow_ip_forwarding);
  EXPECT_EQ(c.nodename, "");
  EXPECT_EQ(c.nodename_file, "");
  EXPECT_EQ(c.data_dir, "/var/lib/cni/veth-workload");
  EXPECT_FALSE(c.feature_ip_addrs_no_ipam);
  EXPECT_FALSE(c.feature_floating_ips);
  EXPECT_FALSE(c.ip_masq);
  EXPECT_FALSE(c.dns.has_value());
}

TEST(ConfigTest, EveryKey) {
  json conf = BaseConf();
  conf.update({{"mtu", 9000},
               {"numQueues", 4},
               {"vethPrefix", "vw"},
               {"includeDefaultRoutes", true},
               {"allowIpForwarding", true},
               {"nodenameFile", "/etc/nodename"},
               {"dataDir", "/tmp/vw"},
               {"featureControl", {{"ipAddrsNoIpam", true}, {"floatingIps", true}}},
               {"ipMasq", true},
               {"ipMasqBackend", "iptables"},
               {"logFile", "/tmp/vw.log"},
               {"logLevel", "debug"},
               {"dns", {{"nameservers", {"10.0.0.10"}}}},
               {"someUnknownKey", {1, 2, 3}}});
  Config c = Parse(conf);
  EXPECT_EQ(c.mtu, 9000);
  EXPECT_EQ(c.num_queues, 4);
  EXPECT_EQ(c.veth_prefix, "vw");
  EXPECT_TRUE(c.include_default_routes);
  EXPECT_TRUE(c.allow_ip_forwarding);
  EXPECT_EQ(c.nodename, "node1");
  EXPECT_EQ(c.nodename_file, "/etc/nodename");
  EXPECT_EQ(c.data_dir, "/tmp/vw");
  EXPECT_TRUE(c.feature_ip_addrs_no_ipam);
  EXPECT_TRUE(c.feature_floating_ips);
  EXPECT_TRUE(c.ip_masq);
  EXPECT_EQ(c.ip_masq_backend, "iptables");
  ASSERT_TRUE(c.dns.has_value());
  EXPECT_EQ(c.dns->nameservers, std::vector<std::string>{"10.0.0.10"});
}

TEST(ConfigTest, IpMasqBackendTakesAnyValue) {
  for (json v : {json("nftables"), json("iptables"), json("whatever"), json(42)}) {
    json conf = BaseConf();
    conf["ipMasqBackend"] = v;
    EXPECT_EQ(Parse(conf).ip_masq_backend, v);
  }
}

TEST(ConfigTest, IpamIsRequired) {
  json conf = BaseConf();
  conf.erase("ipam");
  ExpectError([&] { Parse(conf); }, cni::kInvalidConfig, "\"ipam\"");
  conf["ipam"] = json::object();
  ExpectError([&] { Parse(conf); }, cni::kInvalidConfig, "ipam.type");
}

TEST(ConfigTest, InvalidValuesNameTheKey) {
  struct Case {
    std::string key;
    json value;
  } cases[] = {
      {"mtu", "1500"},
      {"mtu", 67},
      {"mtu", 70000},
      {"mtu", 1.5},
      {"numQueues", 0},
      {"numQueues", "2"},
      {"vethPrefix", ""},
      {"vethPrefix", "abcdefghijkl"},
      {"vethPrefix", "a/b"},
      {"vethPrefix", "a b"},
      {"vethPrefix", 7},
      {"includeDefaultRoutes", "yes"},
      {"allowIpForwarding", 1},
      {"nodename", 5},
      {"nodenameFile", true},
      {"dataDir", ""},
      {"dataDir", json::array()},
      {"ipMasq", "true"},
      {"featureControl", "on"},
      {"logLevel", 3},
  };
  for (const auto& c : cases) {
    json conf = BaseConf();
    conf[c.key] = c.value;
    SCOPED_TRACE(c.key + " = " + c.value.dump());
    ExpectError([&] { Parse(conf); }, cni::kInvalidConfig, "\"" + c.key + "\"");
  }
  json conf = BaseConf();
  conf["featureControl"] = {{"floatingIps", "yes"}};
  ExpectError([&] { Parse(conf); }, cni::kInvalidConfig, "featureControl.floatingIps");
  conf["featureControl"] = {{"ipAddrsNoIpam", 1}};
  ExpectError([&] { Parse(conf); }, cni::kInvalidConfig, "featureControl.ipAddrsNoIpam");
}

TEST(ConfigTest, LongestPrefixLeavesFourHexDigits) {
  json conf = BaseConf();
  conf["vethPrefix"] = "abcdefghijk";
  EXPECT_EQ(Parse(conf).veth_prefix, "abcdefghijk");
}

TEST(NodenameTest, ExplicitFileAndHostName) {
  json conf = BaseConf();
  EXPECT_EQ(ResolveNodename(Parse(conf)), "node1");

  testing::TempDir dir;
  testing::WriteFile(dir / "nodename", "worker-7\nignored\n");
  conf.erase("nodename");
  conf["nodenameFile"] = dir / "nodename";
  EXPECT_EQ(ResolveNodename(Parse(conf)), "worker-7");

  conf.erase("nodenameFile");
  char host[HOST_NAME_MAX + 1] = {};
  ASSERT_EQ(gethostname(host, HOST_NAME_MAX), 0);
  EXPECT_EQ(ResolveNodename(Parse(conf)), host);
}

TEST(NodenameTest, BadFileOrName) {
  testing::TempDir dir;
  json conf = BaseConf();
  conf.erase("nodename");
  conf["nodenameFile"] = dir / "missing";
  ExpectError([&] { ResolveNodename(Parse(conf)); }, cni::kInvalidConfig, "nodenameFile");
  testing::WriteFile(dir / "empty", "  \n");
  conf["nodenameFile"] = dir / "empty";
  ExpectError([&] { ResolveNodename(Parse(conf)); }, cni::kInvalidConfig, "nodenameFile");
  conf = BaseConf();
  conf["nodename"] = "../etc";
  ExpectError([&] { ResolveNodename(Parse(conf)); }, cni::kInvalidConfig, "nodename");
}

TEST(IdentityTest, KubernetesPod) {
  Identity id = ParseIdentity(MakeArgs(BaseConf(), test::kPodArgs), "node1");
  EXPECT_TRUE(id.IsK8s());
  EXPECT_EQ(id.pod_namespace, "namespace");
  EXPECT_EQ(id.pod, "podname");
  EXPECT_EQ(id.container_id, "ctr1");
  EXPECT_EQ(id.ifname, "eth0");
  EXPECT_EQ(id.node, "node1");
}

TEST(IdentityTest, KnownKeysNeedNoIgnoreUnknown) {
  Identity id = ParseIdentity(
      MakeArgs(
          BaseConf(),
          "K8S_POD_NAMESPACE=ns;K8S_POD_NAME=p;K8S_POD_INFRA_CONTAINER_ID=x;K8S_POD_UID=u;IP=10.0.0.9;MAC=0a:00:00:00:00:01"),
      "n");
  EXPECT_EQ(id.pod, "p");
}

TEST(IdentityTest, ContainerWithoutPodKeys) {
  Identity id = ParseIdentity(MakeArgs(BaseConf(), "K8S_POD_NAME=only-name"), "node1");
  EXPECT_FALSE(id.IsK8s());
  EXPECT_EQ(id.pod, "");
  EXPECT_EQ(id.container_id, "ctr1");
}

TEST(IdentityTest, InvalidArgs) {
  ExpectError([] { ParseIdentity(MakeArgs(BaseConf(), "FOO=bar"), "n"); }, cni::kInvalidEnv, "FOO");
  ParseIdentity(MakeArgs(BaseConf(), "IgnoreUnknown=true;FOO=bar"), "n");
  ExpectError([] { ParseIdentity(MakeArgs(BaseConf(), "K8S_POD_NAMESPACE=a/b;K8S_POD_NAME=p"), "n"); },
              cni::kInvalidEnv, "K8S_POD_NAMESPACE");
  ExpectError([] { ParseIdentity(MakeArgs(BaseConf(), "K8S_POD_NAMESPACE=a;K8S_POD_NAME=.."), "n"); }, cni::kInvalidEnv,
              "K8S_POD_NAME");
}

TEST(AddRequestTest, MacPriority) {
  json conf = BaseConf();
  conf["runtimeConfig"] = {{"mac", "0A:00:00:00:00:01"}};
  conf["args"] = {{"cni", {{"mac", "0a:00:00:00:00:02"}}}};
  Config c = Parse(conf);
  EXPECT_EQ(ParseAddRequest(c, MakeArgs(conf, "MAC=0a:00:00:00:00:03")).mac, "0a:00:00:00:00:01");
  conf.erase("runtimeConfig");
  EXPECT_EQ(ParseAddRequest(c, MakeArgs(conf, "MAC=0a:00:00:00:00:03")).mac, "0a:00:00:00:00:02");
  conf.erase("args");
  EXPECT_EQ(ParseAddRequest(c, MakeArgs(conf, "MAC=0a-00-00-00-00-03")).mac, "0a:00:00:00:00:03");
  EXPECT_EQ(ParseAddRequest(c, MakeArgs(conf)).mac, "");
}

TEST(AddRequestTest, InvalidMac) {
  json conf = BaseConf();
  Config c = Parse(conf);
  ExpectError([&] { ParseAddRequest(c, MakeArgs(conf, "MAC=zz:00:00:00:00:03")); }, cni::kInvalidEnv, "CNI_ARGS MAC");
  conf["runtimeConfig"] = {{"mac", "01:00:5e:00:00:01"}};  // multicast
  ExpectError([&] { ParseAddRequest(c, MakeArgs(conf)); }, cni::kInvalidConfig, "runtimeConfig.mac");
  conf["runtimeConfig"] = json::object();
  conf["args"] = {{"cni", {{"mac", "00:00:00:00:00:00"}}}};
  ExpectError([&] { ParseAddRequest(c, MakeArgs(conf)); }, cni::kInvalidConfig, "args.cni.mac");
}

TEST(AddRequestTest, RequestedIps) {
  json conf = BaseConf();
  Config c = Parse(conf);
  EXPECT_FALSE(ParseAddRequest(c, MakeArgs(conf)).requests_ips);
  EXPECT_TRUE(ParseAddRequest(c, MakeArgs(conf, "IP=10.0.0.5")).requests_ips);
  conf["args"] = {{"cni", {{"ips", {"10.0.0.5"}}}}};
  EXPECT_TRUE(ParseAddRequest(c, MakeArgs(conf)).requests_ips);
  conf.erase("args");
  conf["runtimeConfig"] = {{"ips", {"10.0.0.5/24"}}};
  EXPECT_TRUE(ParseAddRequest(c, MakeArgs(conf)).requests_ips);
}

TEST(AddRequestTest, IpAddrsNoIpamNeedsTheFeature) {
  json conf = BaseConf();
  conf["args"] = {{"cni", {{"ipAddrsNoIpam", {"10.9.0.5", "fd00::5/64"}}}}};
  ExpectError([&] { ParseAddRequest(Parse(conf), MakeArgs(conf)); }, cni::kInvalidConfig,
              "featureControl.ipAddrsNoIpam");

  conf["featureControl"] = {{"ipAddrsNoIpam", true}};
  Config c = Parse(conf);
  AddRequest r = ParseAddRequest(c, MakeArgs(conf));
  ASSERT_TRUE(r.ip_addrs_no_ipam.has_value());
  ASSERT_EQ(r.ip_addrs_no_ipam->size(), 2u);
  EXPECT_EQ((*r.ip_addrs_no_ipam)[0].ToString(), "10.9.0.5/32");
  EXPECT_EQ((*r.ip_addrs_no_ipam)[1].ToString(), "fd00::5/64");
}

TEST(AddRequestTest, IpAddrsNoIpamConflictsAndErrors) {
  json conf = BaseConf();
  conf["featureControl"] = {{"ipAddrsNoIpam", true}};
  conf["args"] = {{"cni", {{"ipAddrsNoIpam", {"10.9.0.5"}}}}};
  Config c = Parse(conf);
  ExpectError([&] { ParseAddRequest(c, MakeArgs(conf, "IP=10.0.0.7")); }, cni::kInvalidConfig, "ipAddrsNoIpam");
  json with_ips = conf;
  with_ips["args"]["cni"]["ips"] = {"10.0.0.7"};
  ExpectError([&] { ParseAddRequest(c, MakeArgs(with_ips)); }, cni::kInvalidConfig, "ipAddrsNoIpam");
  json with_rt = conf;
  with_rt["runtimeConfig"] = {{"ips", {"10.0.0.7"}}};
  ExpectError([&] { ParseAddRequest(c, MakeArgs(with_rt)); }, cni::kInvalidConfig, "ipAddrsNoIpam");
  json bad = conf;
  bad["args"]["cni"]["ipAddrsNoIpam"] = {"10.9.0.300"};
  ExpectError([&] { ParseAddRequest(c, MakeArgs(bad)); }, cni::kInvalidConfig, "ipAddrsNoIpam");
  bad["args"]["cni"]["ipAddrsNoIpam"] = json::array();
  ExpectError([&] { ParseAddRequest(c, MakeArgs(bad)); }, cni::kInvalidConfig, "ipAddrsNoIpam");
  bad["args"]["cni"]["ipAddrsNoIpam"] = "10.9.0.5";
  ExpectError([&] { ParseAddRequest(c, MakeArgs(bad)); }, cni::kInvalidConfig, "ipAddrsNoIpam");
}

TEST(AddRequestTest, FloatingIps) {
  json conf = BaseConf();
  conf["args"] = {{"cni", {{"floatingIps", {"192.0.2.10", "2001:db8::10"}}}}};
  ExpectError([&] { ParseAddRequest(Parse(conf), MakeArgs(conf)); }, cni::kInvalidConfig, "featureControl.floatingIps");
  conf["featureControl"] = {{"floatingIps", true}};
  AddRequest r = ParseAddRequest(Parse(conf), MakeArgs(conf));
  ASSERT_EQ(r.floating_ips.size(), 2u);
  EXPECT_EQ(r.floating_ips[0].ToString(), "192.0.2.10");
  EXPECT_EQ(r.floating_ips[1].ToString(), "2001:db8::10");
  conf["args"]["cni"]["floatingIps"] = {"nope"};
  ExpectError([&] { ParseAddRequest(Parse(conf), MakeArgs(conf)); }, cni::kInvalidConfig, "floatingIps");
}

TEST(ConfigTest, FloatingIpsUnderCalicosSpelling) {
  json conf = BaseConf();
  conf["featureControl"] = {{"floatingIps", true}};
  conf["args"] = {{"cni", {{"floatingIPs", {"192.0.2.10"}}}}};
  AddRequest r = ParseAddRequest(Parse(conf), MakeArgs(conf));
  ASSERT_EQ(r.floating_ips.size(), 1u);
  EXPECT_EQ(r.floating_ips[0].ToString(), "192.0.2.10");
  conf["args"]["cni"]["floatingIPs"] = {"nope"};
  ExpectError([&] { ParseAddRequest(Parse(conf), MakeArgs(conf)); }, cni::kInvalidConfig, "args.cni.floatingIPs");
}

TEST(MacTest, Normalize) {
  EXPECT_EQ(NormalizeMac("AA:bb:CC:dd:EE:ff"), "aa:bb:cc:dd:ee:ff");
  EXPECT_EQ(NormalizeMac("aa-bb-cc-dd-ee-ff"), "aa:bb:cc:dd:ee:ff");
  EXPECT_EQ(NormalizeMac("aabb.ccdd.eeff"), "aa:bb:cc:dd:ee:ff");
  EXPECT_FALSE(NormalizeMac("aa:bb:cc:dd:ee"));
  EXPECT_FALSE(NormalizeMac("aa:bb-cc:dd:ee:ff"));
  EXPECT_FALSE(NormalizeMac("gg:bb:cc:dd:ee:ff"));
}

}  // namespace
}  // namespace netiface::veth_workload
