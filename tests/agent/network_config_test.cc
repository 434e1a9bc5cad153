#include "netiface/agent/network_config.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace netiface::agent {
namespace {

using ::testing::HasSubstr;

cni::IpAddr Ip(const char* s) { return *cni::IpAddr::Parse(s); }
cni::IpNet Net(const char* s) { return *cni::IpNet::Parse(s); }

std::string ErrorOf(const std::string& json) {
  try {
    ParseNetworkConfig(json);
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(NetworkConfigTest, FlanneldsDocumentedExample) {
  NetworkConfig c = ParseNetworkConfig(R"({"Network": "10.0.0.0/8", "SubnetLen": 20, "SubnetMin": "10.10.0.0",
      "SubnetMax": "10.99.0.0", "Backend": {"Type": "udp", "Port": 7890}})");
  EXPECT_TRUE(c.enable_ipv4);
  EXPECT_FALSE(c.enable_ipv6);
  EXPECT_EQ(c.network, Net("10.0.0.0/8"));
  EXPECT_EQ(c.subnet_len, 20);
  EXPECT_EQ(c.subnet_min, Ip("10.10.0.0"));
  EXPECT_EQ(c.subnet_max, Ip("10.99.0.0"));
  EXPECT_EQ(c.backend_type, "udp");
  EXPECT_EQ(c.backend, (nlohmann::json{{"Type", "udp"}, {"Port", 7890}}));
}

TEST(NetworkConfigTest, KubeFlannelDefaults) {
  NetworkConfig c = ParseNetworkConfig(R"({"Network": "10.244.0.0/16", "Backend": {"Type": "vxlan"}})");
  EXPECT_EQ(c.subnet_len, 24);
  EXPECT_EQ(c.subnet_min, Ip("10.244.1.0"));    // the second subnet: the first holds the network address
  EXPECT_EQ(c.subnet_max, Ip("10.244.255.0"));  // the last
  EXPECT_EQ(c.backend_type, "vxlan");
  EXPECT_EQ(SubnetCount(c), 255u);
}

TEST(NetworkConfigTest, DefaultSubnetLen) {
  struct Case {
    const char* network;
    int len;
    const char* min;
    const char* max;
  };
  for (const Case& t : std::vector<Case>{{"10.0.0.0/8", 24, "10.0.1.0", "10.255.255.0"},
                                         {"10.5.0.0/22", 24, "10.5.1.0", "10.5.3.0"},
                                         {"10.5.0.0/23", 25, "10.5.0.128", "10.5.1.128"},
                                         {"10.5.0.0/26", 28, "10.5.0.16", "10.5.0.48"},
                                         {"10.5.0.0/28", 30, "10.5.0.4", "10.5.0.12"}}) {
    NetworkConfig c = ParseNetworkConfig(std::string(R"({"Network":")") + t.network + "\"}");
    EXPECT_EQ(c.subnet_len, t.len) << t.network;
    EXPECT_EQ(c.subnet_min, Ip(t.min)) << t.network;
    EXPECT_EQ(c.subnet_max, Ip(t.max)) << t.network;
  }
}

TEST(NetworkConfigTest, MissingBackendIsUdp) {
  NetworkConfig c = ParseNetworkConfig(R"({"Network":"10.5.0.0/16"})");
  EXPECT_EQ(c.backend_type, "udp");
  EXPECT_EQ(c.backend, nlohmann::json::object());
  EXPECT_EQ(ParseNetworkConfig(R"({"Network":"10.5.0.0/16","Backend":{"type":"Host-GW"}})").backend_type, "host-gw");
}

TEST(NetworkConfigTest, KeysAreCaseInsensitiveAsGo) {
  NetworkConfig c = ParseNetworkConfig(
      R"({"network":"10.5.0.0/16","SUBNETLEN":26,"subnetmin":"10.5.0.64","backend":{"TYPE":"host-gw"}})");
  EXPECT_EQ(c.network, Net("10.5.0.0/16"));
  EXPECT_EQ(c.subnet_len, 26);
  EXPECT_EQ(c.subnet_min, Ip("10.5.0.64"));
  EXPECT_EQ(c.backend_type, "host-gw");
  // Go keeps the last of several spellings of one key.
  EXPECT_EQ(ParseNetworkConfig(R"({"Network":"10.5.0.0/16","network":"10.6.0.0/16"})").network, Net("10.6.0.0/16"));
}

TEST(NetworkConfigTest, HostBitsOfTheNetworkAreDroppedAsGoParseCIDR) {
  EXPECT_EQ(ParseNetworkConfig(R"({"Network":"10.5.7.9/16"})").network, Net("10.5.0.0/16"));
}

TEST(NetworkConfigTest, DualStack) {
  NetworkConfig c = ParseNetworkConfig(
      R"({"Network":"10.42.0.0/16","EnableIPv6":true,"IPv6Network":"fd42::/56","Backend":{"Type":"vxlan"}})");
  EXPECT_TRUE(c.enable_ipv6);
  ASSERT_TRUE(c.ipv6_network);
  EXPECT_EQ(*c.ipv6_network, Net("fd42::/56"));
  EXPECT_EQ(c.ipv6_subnet_len, 64);
  EXPECT_EQ(c.ipv6_subnet_min, Ip("fd42:0:0:1::"));
  EXPECT_EQ(c.ipv6_subnet_max, Ip("fd42:0:0:ff::"));
  EXPECT_TRUE(SubnetFits(c, Net("fd42:0:0:3::/64")));
  EXPECT_FALSE(SubnetFits(c, Net("fd42::/64")));
  EXPECT_FALSE(SubnetFits(c, Net("fd42:0:0:3::/65")));
  EXPECT_FALSE(SubnetFits(c, Net("fd43:0:0:3::/64")));
}

TEST(NetworkConfigTest, Ipv6SubnetLenDefaultsToPrefixPlusTwoForSmallNetworks) {
  NetworkConfig c = ParseNetworkConfig(R"({"EnableIPv4":false,"EnableIPv6":true,"IPv6Network":"fd00::/100"})");
  EXPECT_FALSE(c.enable_ipv4);
  EXPECT_EQ(c.ipv6_subnet_len, 102);
  EXPECT_EQ(SubnetCount(c), 3u);
  NetworkConfig d = ParseNetworkConfig(
      R"({"EnableIPv6":true,"Network":"10.5.0.0/16","IPv6Network":"fd00::/48","IPv6SubnetLen":80,
          "IPv6SubnetMin":"fd00::1:0:0:0","IPv6SubnetMax":"fd00::9:0:0:0"})");
  EXPECT_EQ(d.ipv6_subnet_len, 80);
  EXPECT_EQ(d.ipv6_subnet_min, Ip("fd00::1:0:0:0"));
  EXPECT_EQ(d.ipv6_subnet_max, Ip("fd00::9:0:0:0"));
}

TEST(NetworkConfigTest, ErrorsNameTheKeyAndTheValue) {
  struct Case {
    const char* json;
    const char* message;
  };
  const std::vector<Case> cases = {
      {R"({"Backend":{"Type":"vxlan"}})", "Network is missing from the network config"},
      {R"({"Network":"10.5.0.0/29"})", "Network 10.5.0.0/29 is too small: the smallest useful network is a /28"},
      {R"({"Network":"10.5.0.0"})", "Network 10.5.0.0 is not an IPv4 network in CIDR notation"},
      {R"({"Network":"fd00::/16"})", "Network fd00::/16 is not an IPv4 network in CIDR notation"},
      {R"({"Network":16})", "Network 16 is not an IPv4 network in CIDR notation"},
      {R"({"Network":"0.0.0.0/0"})", "Network 0.0.0.0/0 is not a usable network"},
      {R"({"Network":"10.5.0.0/16","SubnetLen":31})", "SubnetLen 31 is too long: at most 30"},
      {R"({"Network":"10.5.0.0/16","SubnetLen":17})",
       "SubnetLen 17 is too short for Network 10.5.0.0/16: it must be at least 18"},
      {R"({"Network":"10.5.0.0/16","SubnetLen":"24"})", "SubnetLen \"24\" is not a prefix length"},
      {R"({"Network":"10.5.0.0/16","SubnetLen":-1})", "SubnetLen -1 is not a prefix length"},
      {R"({"Network":"10.5.0.0/16","SubnetLen":24.5})", "SubnetLen 24.5 is not a prefix length"},
      {R"({"Network":"10.5.0.0/16","SubnetLen":33})", "SubnetLen 33 is not a prefix length"},
      {R"({"Network":"10.5.0.0/16","SubnetMin":"10.5.1.128"})",
       "SubnetMin 10.5.1.128 is not on a SubnetLen (24) boundary"},
      {R"({"Network":"10.5.0.0/16","SubnetMax":"10.5.9.1"})", "SubnetMax 10.5.9.1 is not on a SubnetLen (24) boundary"},
      {R"({"Network":"10.5.0.0/16","SubnetMin":"10.6.1.0"})", "SubnetMin 10.6.1.0 is outside Network 10.5.0.0/16"},
      {R"({"Network":"10.5.0.0/16","SubnetMax":"10.4.1.0"})", "SubnetMax 10.4.1.0 is outside Network 10.5.0.0/16"},
      {R"({"Network":"10.5.0.0/16","SubnetMin":"x"})", "SubnetMin x is not an IPv4 address"},
      {R"({"Network":"10.5.0.0/16","SubnetMin":"10.5.9.0","SubnetMax":"10.5.3.0"})",
       "SubnetMin 10.5.9.0 is above SubnetMax 10.5.3.0"},
      {R"({"Network":"10.5.0.0/16","EnableIPv6":"yes"})", "EnableIPv6 \"yes\" is not a boolean"},
      {R"({"Network":"10.5.0.0/16","EnableIPv4":1})", "EnableIPv4 1 is not a boolean"},
      {R"({"EnableIPv4":false})", "EnableIPv4 false and EnableIPv6 false"},
      {R"({"Network":"10.5.0.0/16","EnableIPv6":true})", "IPv6Network is missing from the network config"},
      {R"({"Network":"10.5.0.0/16","EnableIPv6":true,"IPv6Network":"10.6.0.0/16"})",
       "IPv6Network 10.6.0.0/16 is not an IPv6 network in CIDR notation"},
      {R"({"Network":"10.5.0.0/16","EnableIPv6":true,"IPv6Network":"fd00::/125"})",
       "IPv6Network fd00::/125 is too small: the smallest useful network is a /124"},
      {R"({"Network":"10.5.0.0/16","EnableIPv6":true,"IPv6Network":"fd00::/48","IPv6SubnetLen":127})",
       "IPv6SubnetLen 127 is too long: at most 126"},
      {R"({"Network":"10.5.0.0/16","EnableIPv6":true,"IPv6Network":"fd00::/48","IPv6SubnetLen":49})",
       "IPv6SubnetLen 49 is too short for IPv6Network fd00::/48: it must be at least 50"},
      {R"({"Network":"10.5.0.0/16","EnableIPv6":true,"IPv6Network":"fd00::/48","IPv6SubnetMin":"fd00::1"})",
       "IPv6SubnetMin fd00::1 is not on a IPv6SubnetLen (64) boundary"},
      {R"({"Network":"10.5.0.0/16","EnableIPv6":true,"IPv6Network":"fd00::/48","IPv6SubnetMax":"fd01::"})",
       "IPv6SubnetMax fd01:: is outside IPv6Network fd00::/48"},
      {R"({"Network":"10.5.0.0/16","Backend":"vxlan"})", "Backend \"vxlan\" is not an object"},
      {R"({"Network":"10.5.0.0/16","Backend":{"Port":1}})", "Backend.Type is missing"},
      {R"({"Network":"10.5.0.0/16","Backend":{"Type":7}})", "Backend.Type 7 is not a backend name"},
      {R"(["Network"])", "the network config [\"Network\"] is not a JSON object"},
      {R"({"Network":"10.5.0.0/16",)", "invalid JSON in the network config: "},
      {"", "invalid JSON in the network config: "},
  };
  for (const Case& t : cases) EXPECT_THAT(ErrorOf(t.json), HasSubstr(t.message)) << t.json;
}

TEST(NetworkConfigTest, SubnetFitsAndCount) {
  NetworkConfig c = ParseNetworkConfig(R"({"Network":"10.5.0.0/16","SubnetMin":"10.5.10.0","SubnetMax":"10.5.19.0"})");
  EXPECT_EQ(SubnetCount(c), 10u);
  EXPECT_TRUE(SubnetFits(c, Net("10.5.10.0/24")));
  EXPECT_TRUE(SubnetFits(c, Net("10.5.19.0/24")));
  EXPECT_FALSE(SubnetFits(c, Net("10.5.9.0/24")));   // below SubnetMin
  EXPECT_FALSE(SubnetFits(c, Net("10.5.20.0/24")));  // above SubnetMax
  EXPECT_FALSE(SubnetFits(c, Net("10.5.12.0/25")));  // another length
  EXPECT_FALSE(SubnetFits(c, Net("10.5.12.1/24")));  // host bits
  EXPECT_FALSE(SubnetFits(c, Net("fd00::/64")));     // IPv6 is off
  EXPECT_EQ(SubnetCount(ParseNetworkConfig(R"({"Network":"10.0.0.0/8","SubnetLen":30})")), (1u << 22) - 1);
}

}  // namespace
}  // namespace netiface::agent
