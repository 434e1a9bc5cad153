#include "netiface/flannel/subnet_env.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "cni_helpers.h"
#include "netiface/cni/error.h"
#include "testutil.h"

namespace netiface::flannel {
namespace {

using ::testing::HasSubstr;

const char* kPath = "/run/flannel/subnet.env";

cni::IpNet Net(const char* s) { return *cni::IpNet::Parse(s); }

using testing::ThrownError;

TEST(SubnetEnvTest, ParsesWhatFlanneldWrites) {
  SubnetEnv e = ParseSubnetEnv(
      "FLANNEL_NETWORK=10.244.0.0/16\nFLANNEL_SUBNET=10.244.1.1/24\nFLANNEL_MTU=1450\nFLANNEL_IPMASQ=true\n", kPath);
  EXPECT_EQ(e.networks, std::vector<cni::IpNet>{Net("10.244.0.0/16")});
  ASSERT_TRUE(e.subnet);
  EXPECT_EQ(*e.subnet, Net("10.244.1.0/24"));  // the lease's network, not the gateway address
  EXPECT_FALSE(e.ipv6_subnet);
  EXPECT_TRUE(e.ipv6_networks.empty());
  EXPECT_EQ(e.mtu, 1450);
  EXPECT_TRUE(e.ipmasq);
}

TEST(SubnetEnvTest, OnlyLowercaseTrueIsTrue) {
  for (const char* v : {"false", "True", "TRUE", "1", "yes", ""}) {
    SubnetEnv e = ParseSubnetEnv(std::string("FLANNEL_NETWORK=10.1.0.0/16\nFLANNEL_SUBNET=10.1.17.1/24\n"
                                             "FLANNEL_MTU=1500\nFLANNEL_IPMASQ=") +
                                     v + "\n",
                                 kPath);
    EXPECT_FALSE(e.ipmasq) << v;
  }
}

TEST(SubnetEnvTest, NetworksAreCommaSeparatedAndDeduplicated) {
  SubnetEnv e = ParseSubnetEnv(
      "FLANNEL_NETWORK=10.1.0.0/16,10.2.0.0/16,10.1.0.0/16,10.1.3.4/16\nFLANNEL_SUBNET=10.1.17.1/24\n"
      "FLANNEL_MTU=1500\nFLANNEL_IPMASQ=false",
      kPath);
  EXPECT_EQ(e.networks, (std::vector<cni::IpNet>{Net("10.1.0.0/16"), Net("10.2.0.0/16")}));
}

TEST(SubnetEnvTest, DualStack) {
  SubnetEnv e = ParseSubnetEnv(
      "FLANNEL_NETWORK=10.42.0.0/16\nFLANNEL_SUBNET=10.42.3.1/24\nFLANNEL_IPV6_NETWORK=fd42::/56,fd43::/56\n"
      "FLANNEL_IPV6_SUBNET=fd42:0:0:3::1/64\nFLANNEL_MTU=1450\nFLANNEL_IPMASQ=true\n",
      kPath);
  ASSERT_TRUE(e.ipv6_subnet);
  EXPECT_EQ(*e.ipv6_subnet, Net("fd42:0:0:3::/64"));
  EXPECT_EQ(e.ipv6_networks, (std::vector<cni::IpNet>{Net("fd42::/56"), Net("fd43::/56")}));
  EXPECT_EQ(*e.subnet, Net("10.42.3.0/24"));
}

TEST(SubnetEnvTest, Ipv6OnlyIsComplete) {
  SubnetEnv e = ParseSubnetEnv(
      "FLANNEL_IPV6_NETWORK=fd42::/56\nFLANNEL_IPV6_SUBNET=fd42:0:0:3::1/64\nFLANNEL_MTU=1450\nFLANNEL_IPMASQ=false\n",
      kPath);
  EXPECT_FALSE(e.subnet);
  EXPECT_TRUE(e.networks.empty());
  EXPECT_EQ(e.ipv6_networks.size(), 1u);
}

TEST(SubnetEnvTest, IgnoresCommentsBlankLinesUnknownKeysAndCrlf) {
  SubnetEnv e = ParseSubnetEnv(
      "# written by flanneld\r\n\r\nFLANNEL_NETWORK=10.1.0.0/16\r\nOTHER=x\r\nFLANNEL_SUBNET=10.1.17.1/24\r\n"
      "FLANNEL_MTU=1400\r\nFLANNEL_IPMASQ=true\r\n",
      kPath);
  EXPECT_EQ(e.mtu, 1400);
  EXPECT_TRUE(e.ipmasq);
}

TEST(SubnetEnvTest, MissingKeysAreNamedWithTheFile) {
  cni::Error e =
      ThrownError([] { ParseSubnetEnv("FLANNEL_NETWORK=10.1.0.0/16\nFLANNEL_SUBNET=10.1.17.1/24\n", kPath); });
  EXPECT_EQ(e.code(), cni::kInvalidConfig);
  EXPECT_THAT(e.msg(), HasSubstr(kPath));
  EXPECT_THAT(e.msg(), HasSubstr("FLANNEL_MTU"));
  EXPECT_THAT(e.msg(), HasSubstr("FLANNEL_IPMASQ"));
  EXPECT_THAT(e.msg(), ::testing::Not(HasSubstr("FLANNEL_SUBNET")));

  e = ThrownError([] { ParseSubnetEnv("FLANNEL_MTU=1400\nFLANNEL_IPMASQ=true\n", kPath); });
  EXPECT_THAT(e.msg(), HasSubstr("FLANNEL_NETWORK or FLANNEL_IPV6_NETWORK"));
  EXPECT_THAT(e.msg(), HasSubstr("FLANNEL_SUBNET or FLANNEL_IPV6_SUBNET"));
}

TEST(SubnetEnvTest, MalformedValuesAreNamed) {
  const std::string rest = "FLANNEL_MTU=1450\nFLANNEL_IPMASQ=true\n";
  struct Case {
    std::string text, key;
  } cases[] = {
      {"FLANNEL_NETWORK=10.1.0.0\nFLANNEL_SUBNET=10.1.17.1/24\n" + rest, "FLANNEL_NETWORK"},
      {"FLANNEL_NETWORK=10.1.0.0/16,bogus\nFLANNEL_SUBNET=10.1.17.1/24\n" + rest, "FLANNEL_NETWORK"},
      {"FLANNEL_NETWORK=10.1.0.0/16\nFLANNEL_SUBNET=10.1.17.1/33\n" + rest, "FLANNEL_SUBNET"},
      {"FLANNEL_NETWORK=10.1.0.0/16\nFLANNEL_SUBNET=fd00::1/64\n" + rest, "FLANNEL_SUBNET"},
      {"FLANNEL_IPV6_NETWORK=10.1.0.0/16\nFLANNEL_IPV6_SUBNET=fd00::1/64\n" + rest, "FLANNEL_IPV6_NETWORK"},
      {"FLANNEL_NETWORK=10.1.0.0/16\nFLANNEL_SUBNET=10.1.17.1/24\nFLANNEL_MTU=-1\nFLANNEL_IPMASQ=true\n",
       "FLANNEL_MTU"},
      {"FLANNEL_NETWORK=10.1.0.0/16\nFLANNEL_SUBNET=10.1.17.1/24\nFLANNEL_MTU=abc\nFLANNEL_IPMASQ=true\n",
       "FLANNEL_MTU"},
      {"FLANNEL_NETWORK=10.1.0.0/16\nFLANNEL_SUBNET=10.1.17.1/24\nFLANNEL_MTU=70000\nFLANNEL_IPMASQ=true\n",
       "FLANNEL_MTU"},
  };
  for (const auto& c : cases) {
    cni::Error e = ThrownError([&] { ParseSubnetEnv(c.text, kPath); });
    EXPECT_EQ(e.code(), cni::kInvalidConfig) << c.text;
    EXPECT_THAT(e.msg(), HasSubstr(c.key)) << c.text;
    EXPECT_THAT(e.msg(), HasSubstr(kPath)) << c.text;
  }
}

TEST(SubnetEnvTest, LoadNamesAMissingFile) {
  testing::TempDir dir;
  cni::Error e = ThrownError([&] { LoadSubnetEnv(dir / "subnet.env"); });
  EXPECT_EQ(e.code(), cni::kTryAgainLater);
  EXPECT_THAT(e.msg(), HasSubstr(dir / "subnet.env"));
}

TEST(SubnetEnvTest, LoadReadsTheFile) {
  testing::TempDir dir;
  testing::WriteFile(
      dir / "subnet.env",
      "FLANNEL_NETWORK=10.5.0.0/16\nFLANNEL_SUBNET=10.5.9.1/24\nFLANNEL_MTU=1450\nFLANNEL_IPMASQ=true\n");
  EXPECT_EQ(*LoadSubnetEnv(dir / "subnet.env").subnet, Net("10.5.9.0/24"));
}

}  // namespace
}  // namespace netiface::flannel
