#include "netiface/flannel/delegate.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "netiface/cni/error.h"

namespace netiface::flannel {
namespace {

using nlohmann::json;

Config Parse(const json& j) { return ParseConfig(cni::ParseNetConf(j.dump())); }

SubnetEnv V4Env(bool ipmasq = true) {
  return ParseSubnetEnv(std::string("FLANNEL_NETWORK=10.244.0.0/16\nFLANNEL_SUBNET=10.244.1.1/24\nFLANNEL_MTU=1450\n"
                                    "FLANNEL_IPMASQ=") +
                            (ipmasq ? "true" : "false") + "\n",
                        "subnet.env");
}

SubnetEnv DualEnv() {
  return ParseSubnetEnv(
      "FLANNEL_NETWORK=10.42.0.0/16,10.43.0.0/16\nFLANNEL_SUBNET=10.42.3.1/24\nFLANNEL_IPV6_NETWORK=fd42::/56\n"
      "FLANNEL_IPV6_SUBNET=fd42:0:0:3::1/64\nFLANNEL_MTU=1400\nFLANNEL_IPMASQ=false\n",
      "subnet.env");
}

TEST(FlannelConfigTest, Defaults) {
  Config c = Parse({{"cniVersion", "1.0.0"}, {"name", "cbr0"}, {"type", "flannel"}});
  EXPECT_EQ(c.subnet_file, "/run/flannel/subnet.env");
  EXPECT_EQ(c.data_dir, "/var/lib/cni/flannel");
  EXPECT_EQ(c.delegate, json::object());
  EXPECT_TRUE(c.ipam.is_null());
}

TEST(FlannelConfigTest, DelegateMayNotCarryNameOrIpam) {
  for (const json& d :
       {json{{"name", "x"}}, json{{"ipam", {{"type", "host-local"}}}}, json("bridge"), json{{"type", 7}}}) {
    try {
      Parse({{"cniVersion", "1.0.0"}, {"name", "cbr0"}, {"type", "flannel"}, {"delegate", d}});
      ADD_FAILURE() << "accepted delegate " << d.dump();
    } catch (const cni::Error& e) {
      EXPECT_EQ(e.code(), cni::kInvalidConfig) << d.dump();
    }
  }
}

TEST(FlannelConfigTest, BadKeysAreRejected) {
  for (const json& extra : {json{{"subnetFile", 3}}, json{{"dataDir", ""}}, json{{"ipam", "host-local"}},
                            json{{"ipam", {{"routes", "x"}}}}}) {
    json conf = {{"cniVersion", "1.0.0"}, {"name", "cbr0"}, {"type", "flannel"}};
    conf.update(extra);
    EXPECT_THROW(Parse(conf), cni::Error) << extra.dump();
  }
}

// The kube-flannel conflist's first plugin, rendered the way the reference plugin renders it.
TEST(RenderDelegateTest, KubeFlannelConfig) {
  Config c = Parse({{"cniVersion", "0.3.1"},
                    {"name", "cbr0"},
                    {"type", "flannel"},
                    {"delegate", {{"hairpinMode", true}, {"isDefaultGateway", true}}}});
  json want = json::parse(R"({
    "cniVersion": "0.3.1", "name": "cbr0", "type": "bridge", "hairpinMode": true, "isDefaultGateway": true,
    "isGateway": true, "ipMasq": false, "mtu": 1450,
    "ipam": {"type": "host-local", "ranges": [[{"subnet": "10.244.1.0/24"}]], "routes": [{"dst": "10.244.0.0/16"}]}
  })");
  EXPECT_EQ(RenderDelegate(c, V4Env(true)), want);
}

TEST(RenderDelegateTest, IpMasqIsTheOppositeOfFlanneld) {
  Config c = Parse({{"cniVersion", "1.0.0"}, {"name", "n"}, {"type", "flannel"}});
  EXPECT_EQ(RenderDelegate(c, V4Env(true))["ipMasq"], false);
  EXPECT_EQ(RenderDelegate(c, V4Env(false))["ipMasq"], true);
}

TEST(RenderDelegateTest, UserValuesWin) {
  Config c = Parse({{"cniVersion", "1.0.0"},
                    {"name", "n"},
                    {"type", "flannel"},
                    {"delegate", {{"ipMasq", true}, {"mtu", 1300}, {"isGateway", false}, {"bridge", "kbr0"}}}});
  json d = RenderDelegate(c, V4Env(true));
  EXPECT_EQ(d["ipMasq"], true);
  EXPECT_EQ(d["mtu"], 1300);
  EXPECT_EQ(d["isGateway"], false);
  EXPECT_EQ(d["bridge"], "kbr0");
  EXPECT_EQ(d["name"], "n");
}

TEST(RenderDelegateTest, OtherDelegateTypesGetNoIsGateway) {
  Config c = Parse({{"cniVersion", "1.0.0"}, {"name", "n"}, {"type", "flannel"}, {"delegate", {{"type", "ptp"}}}});
  json d = RenderDelegate(c, V4Env());
  EXPECT_EQ(d["type"], "ptp");
  EXPECT_FALSE(d.contains("isGateway"));
  EXPECT_EQ(DelegateType(d), "ptp");
}

TEST(RenderDelegateTest, DualStackGivesTwoRangeSetsAndEveryNetworkRoute) {
  Config c = Parse({{"cniVersion", "1.0.0"}, {"name", "n"}, {"type", "flannel"}});
  json ipam = RenderDelegate(c, DualEnv())["ipam"];
  EXPECT_EQ(ipam["ranges"], json::parse(R"([[{"subnet":"10.42.3.0/24"}],[{"subnet":"fd42:0:0:3::/64"}]])"));
  EXPECT_EQ(ipam["routes"], json::parse(R"([{"dst":"10.42.0.0/16"},{"dst":"10.43.0.0/16"},{"dst":"fd42::/56"}])"));
  EXPECT_EQ(RenderDelegate(c, DualEnv())["mtu"], 1400);
}

TEST(RenderDelegateTest, UserIpamIsTheBase) {
  Config c = Parse(json::parse(R"({"cniVersion": "1.0.0", "name": "n", "type": "flannel",
    "ipam": {"type": "my-ipam", "dataDir": "/srv/ipam", "ranges": [[{"subnet": "1.2.3.0/24"}]],
             "routes": [{"dst": "192.168.0.0/16", "gw": "10.244.1.254"}]}})"));
  json ipam = RenderDelegate(c, V4Env())["ipam"];
  EXPECT_EQ(ipam["type"], "my-ipam");
  EXPECT_EQ(ipam["dataDir"], "/srv/ipam");  // reaches host-local (the reference drops it: plugins#619)
  EXPECT_EQ(ipam["ranges"], json::parse(R"([[{"subnet":"10.244.1.0/24"}]])"));  // replaced
  EXPECT_EQ(ipam["routes"], json::parse(R"([{"dst":"192.168.0.0/16","gw":"10.244.1.254"},{"dst":"10.244.0.0/16"}])"));
}

TEST(RenderDelegateTest, CopiesRuntimeConfigAndVersion) {
  Config c = Parse({{"cniVersion", "1.1.0"},
                    {"name", "n"},
                    {"type", "flannel"},
                    {"delegate", {{"cniVersion", "0.3.1"}}},
                    {"runtimeConfig", {{"mac", "02:00:00:00:00:01"}}}});
  json d = RenderDelegate(c, V4Env());
  EXPECT_EQ(d["cniVersion"], "1.1.0");
  EXPECT_EQ(d["runtimeConfig"], json({{"mac", "02:00:00:00:00:01"}}));
  Config bare = Parse({{"cniVersion", "1.0.0"}, {"name", "n"}, {"type", "flannel"}});
  EXPECT_FALSE(RenderDelegate(bare, V4Env()).contains("runtimeConfig"));
}

TEST(RenderDelegateTest, IsPure) {
  Config c =
      Parse({{"cniVersion", "1.0.0"}, {"name", "n"}, {"type", "flannel"}, {"ipam", {{"routes", json::array()}}}});
  json first = RenderDelegate(c, V4Env());
  EXPECT_EQ(RenderDelegate(c, V4Env()), first);
  EXPECT_EQ(c.ipam["routes"], json::array());
}

TEST(SavedConfigPathTest, KeyedByContainerAndIfname) {
  EXPECT_EQ(SavedConfigPath("/var/lib/cni/flannel", "abc", "eth0"), "/var/lib/cni/flannel/abc-eth0");
  EXPECT_EQ(LegacyConfigPath("/var/lib/cni/flannel", "abc"), "/var/lib/cni/flannel/abc");
}

}  // namespace
}  // namespace netiface::flannel
