#include "netiface/bridge/config.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "netiface/cni/error.h"
#include "netiface/cni/ifname.h"

namespace netiface::bridge {
namespace {

using nlohmann::json;

cni::NetConf Conf(json extra) {
  json j = {{"cniVersion", "1.0.0"}, {"name", "net1"}, {"type", "bridge"}};
  if (extra.is_object()) j.update(extra);
  return cni::ParseNetConf(j.dump());
}

int CodeOf(const std::function<void()>& f) {
  try {
    f();
  } catch (const cni::Error& e) {
    return e.code();
  }
  return 0;
}

TEST(BridgeConfigTest, Defaults) {
  Config c = ParseConfig(Conf({}));
  EXPECT_EQ(c.network, "net1");
  EXPECT_EQ(c.bridge, "cni0");
  EXPECT_FALSE(c.is_gateway);
  EXPECT_FALSE(c.is_default_gateway);
  EXPECT_FALSE(c.force_address);
  EXPECT_EQ(c.mtu, 0);
  EXPECT_FALSE(c.hairpin);
  EXPECT_FALSE(c.promisc);
  EXPECT_FALSE(c.ip_masq);
  EXPECT_FALSE(c.enable_dad);
  EXPECT_EQ(c.ipam_type, "");
  EXPECT_FALSE(c.dns);
}

TEST(BridgeConfigTest, ReadsEveryKey) {
  Config c = ParseConfig(Conf(json::parse(R"({
    "bridge": "kbr0", "isGateway": true, "forceAddress": true, "mtu": 1450, "hairpinMode": true,
    "ipMasq": true, "ipMasqBackend": "nftables", "enabledad": true, "ipam": {"type": "host-local"},
    "dns": {"nameservers": ["10.0.0.10"]}, "someUnknownKey": {"x": 1}})")));
  EXPECT_EQ(c.bridge, "kbr0");
  EXPECT_TRUE(c.is_gateway);
  EXPECT_TRUE(c.force_address);
  EXPECT_EQ(c.mtu, 1450);
  EXPECT_TRUE(c.hairpin);
  EXPECT_TRUE(c.ip_masq);
  EXPECT_EQ(c.ip_masq_backend, "nftables");
  EXPECT_TRUE(c.enable_dad);
  EXPECT_EQ(c.ipam_type, "host-local");
  ASSERT_TRUE(c.dns);
  EXPECT_EQ(c.dns->nameservers, std::vector<std::string>{"10.0.0.10"});
}

TEST(BridgeConfigTest, DefaultGatewayImpliesGateway) {
  Config c = ParseConfig(Conf({{"isDefaultGateway", true}, {"isGateway", false}}));
  EXPECT_TRUE(c.is_default_gateway);
  EXPECT_TRUE(c.is_gateway);
}

TEST(BridgeConfigTest, EmptyDnsDoesNotOverrideIpam) { EXPECT_FALSE(ParseConfig(Conf({{"dns", json::object()}})).dns); }

TEST(BridgeConfigTest, WrongTypesAreInvalidConfig) {
  for (const json& bad : {json{{"isGateway", "yes"}}, json{{"mtu", "1500"}}, json{{"mtu", -1}}, json{{"mtu", 70000}},
                          json{{"bridge", 5}}, json{{"bridge", "a-name-that-is-too-long"}}, json{{"bridge", "a/b"}},
                          json{{"hairpinMode", 1}}, json{{"ipMasqBackend", "ebtables"}}}) {
    EXPECT_EQ(CodeOf([&] { ParseConfig(Conf(bad)); }), cni::kInvalidConfig) << bad.dump();
  }
}

TEST(BridgeConfigTest, SwitchedOnReferenceFeaturesWeLackAreUnsupported) {
  for (const json& bad : {json{{"vlan", 100}}, json{{"vlanTrunk", {{{"id", 5}}}}}, json{{"macspoofchk", true}},
                          json{{"portIsolation", true}}, json{{"disableContainerInterface", true}}}) {
    EXPECT_EQ(CodeOf([&] { ParseConfig(Conf(bad)); }), cni::kUnsupportedField) << bad.dump();
  }
  for (const json& fine : {json{{"vlan", 0}}, json{{"vlanTrunk", json::array()}}, json{{"macspoofchk", false}},
                           json{{"preserveDefaultVlan", true}}}) {
    EXPECT_EQ(CodeOf([&] { ParseConfig(Conf(fine)); }), 0) << fine.dump();
  }
}

TEST(BridgeConfigTest, HairpinAndPromiscAreExclusiveForAdd) {
  Config c = ParseConfig(Conf({{"hairpinMode", true}, {"promiscMode", true}}));  // DEL must still work
  EXPECT_EQ(CodeOf([&] { ValidateForAdd(c); }), cni::kInvalidConfig);
  EXPECT_EQ(CodeOf([&] { ValidateForAdd(ParseConfig(Conf({{"promiscMode", true}}))); }), 0);
}

// Without IPAM the result has no address, which 0.1.0/0.2.0 cannot express: refused before any change.
TEST(BridgeConfigTest, NoIpamNeedsAVersionThatCanAnswerWithoutAnAddress) {
  for (const char* v : {"0.1.0", "0.2.0"}) {
    SCOPED_TRACE(v);
    EXPECT_EQ(CodeOf([&] { ValidateForAdd(ParseConfig(Conf({{"cniVersion", v}}))); }), cni::kIncompatibleVersion);
    EXPECT_EQ(CodeOf([&] { ValidateForAdd(ParseConfig(Conf({{"cniVersion", v}, {"ipam", {{"type", "x"}}}}))); }), 0);
  }
  for (const char* v : {"0.3.0", "0.3.1", "0.4.0", "1.0.0", "1.1.0"}) {
    EXPECT_EQ(CodeOf([&] { ValidateForAdd(ParseConfig(Conf({{"cniVersion", v}}))); }), 0) << v;
  }
}

TEST(BridgeConfigTest, NormalizeMac) {
  EXPECT_EQ(NormalizeMac("02:AB:cd:00:11:22"), "02:ab:cd:00:11:22");
  EXPECT_EQ(NormalizeMac("02-ab-cd-00-11-22"), "02:ab:cd:00:11:22");
  EXPECT_EQ(NormalizeMac("02ab.cd00.1122"), "02:ab:cd:00:11:22");
  for (const char* bad :
       {"", "02:ab:cd:00:11", "02:ab:cd:00:11:2g", "02:ab-cd:00:11:22", "02ab.cd00:1122", "02:ab:cd:00:11:22:33"}) {
    EXPECT_FALSE(NormalizeMac(bad)) << bad;
  }
}

TEST(BridgeConfigTest, RequestedMacPrecedence) {
  const std::string cni_args = "IgnoreUnknown=1;MAC=02:00:00:00:00:03;K8S_POD_NAME=p";
  json args = {{"cni", {{"mac", "02:00:00:00:00:02"}}}};
  json rc = {{"mac", "02:00:00:00:00:01"}};
  EXPECT_EQ(RequestedMac(Conf({{"runtimeConfig", rc}, {"args", args}}), cni_args), "02:00:00:00:00:01");
  EXPECT_EQ(RequestedMac(Conf({{"args", args}}), cni_args), "02:00:00:00:00:02");
  EXPECT_EQ(RequestedMac(Conf({}), cni_args), "02:00:00:00:00:03");
  EXPECT_EQ(RequestedMac(Conf({}), "MAC=02:00:00:00:00:04;K8S_POD_NAMESPACE=default"), "02:00:00:00:00:04");
  EXPECT_EQ(RequestedMac(Conf({}), ""), "");
  EXPECT_EQ(CodeOf([&] { RequestedMac(Conf({{"runtimeConfig", {{"mac", "nope"}}}}), ""); }), cni::kInvalidConfig);
}

TEST(BridgeConfigTest, LinkNames) {
  EXPECT_TRUE(cni::IsValidIfname("cni0"));
  EXPECT_TRUE(cni::IsValidIfname("br.100"));
  EXPECT_TRUE(cni::IsValidIfname("abcdefghijklmno"));
  for (const char* bad : {"", ".", "..", "abcdefghijklmnop", "a b", "a:b", "a/b"})
    EXPECT_FALSE(cni::IsValidIfname(bad)) << bad;
}

}  // namespace
}  // namespace netiface::bridge
