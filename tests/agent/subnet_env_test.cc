#include "netiface/agent/subnet_env.h"

#include <sys/stat.h>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "netiface/cni/error.h"
#include "netiface/flannel/subnet_env.h"
#include "testutil.h"

namespace netiface::agent {
namespace {

cni::IpNet Net(const char* s) { return *cni::IpNet::Parse(s); }

SubnetEnvValues DualStack() {
  SubnetEnvValues v;
  v.network = Net("10.5.0.0/16");
  v.subnet = Net("10.5.34.0/24");
  v.ipv6_network = Net("fd00::/48");
  v.ipv6_subnet = Net("fd00:0:0:22::/64");
  v.mtu = 1450;
  v.ipmasq = true;
  return v;
}

TEST(SubnetEnvTest, RendersFlanneldsLines) {
  SubnetEnvValues v;
  v.network = Net("10.5.0.0/16");
  v.subnet = Net("10.5.34.0/24");
  v.mtu = 1500;
  EXPECT_EQ(RenderSubnetEnv(v),
            "FLANNEL_NETWORK=10.5.0.0/16\nFLANNEL_SUBNET=10.5.34.1/24\nFLANNEL_MTU=1500\n"
            "FLANNEL_IPMASQ=false\n");
  EXPECT_EQ(RenderSubnetEnv(DualStack()),
            "FLANNEL_NETWORK=10.5.0.0/16\nFLANNEL_SUBNET=10.5.34.1/24\nFLANNEL_IPV6_NETWORK=fd00::/48\n"
            "FLANNEL_IPV6_SUBNET=fd00:0:0:22::1/64\nFLANNEL_MTU=1450\nFLANNEL_IPMASQ=true\n");
  v.subnet = Net("10.5.34.1/24");  // already the first host: the same line
  EXPECT_THAT(RenderSubnetEnv(v), ::testing::HasSubstr("FLANNEL_SUBNET=10.5.34.1/24\n"));
}

TEST(SubnetEnvTest, WritesAtomicallyWithMode0644AndCreatesTheFolder) {
  testing::TempDir dir;
  const std::string path = dir / "run/flannel/subnet.env";
  const mode_t old_umask = ::umask(077);  // the mode must not depend on the umask
  WriteSubnetEnv(path, DualStack());
  ::umask(old_umask);
  EXPECT_EQ(testing::ReadFile(path), RenderSubnetEnv(DualStack()));
  struct stat st {};
  ASSERT_EQ(::stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0644u);
  SubnetEnvValues v = DualStack();
  v.mtu = 1400;
  WriteSubnetEnv(path, v);
  EXPECT_EQ(testing::ReadFile(path), RenderSubnetEnv(v));
  EXPECT_EQ(testing::ListDir(dir / "run/flannel"), std::vector<std::string>{"subnet.env"});  // no temporaries left
}

TEST(SubnetEnvTest, WriteFailureNamesThePath) {
  testing::TempDir dir;
  testing::WriteFile(dir / "file", "x");
  try {
    WriteSubnetEnv(dir / "file/subnet.env", DualStack());
    ADD_FAILURE() << "no error";
  } catch (const cni::Error& e) {
    EXPECT_EQ(e.code(), cni::kIoFailure);
    EXPECT_THAT(e.msg(), ::testing::HasSubstr(dir / "file"));
  }
}

TEST(SubnetEnvTest, PluginsFlannelParsesWhatItWrites) {
  testing::TempDir dir;
  const std::string path = dir / "subnet.env";
  WriteSubnetEnv(path, DualStack());
  flannel::SubnetEnv env = flannel::LoadSubnetEnv(path);
  EXPECT_EQ(env.networks, std::vector<cni::IpNet>{Net("10.5.0.0/16")});
  EXPECT_EQ(env.subnet, Net("10.5.34.0/24"));
  EXPECT_EQ(env.ipv6_networks, std::vector<cni::IpNet>{Net("fd00::/48")});
  EXPECT_EQ(env.ipv6_subnet, Net("fd00:0:0:22::/64"));
  EXPECT_EQ(env.mtu, 1450);
  EXPECT_TRUE(env.ipmasq);
}

TEST(SubnetEnvTest, ReadsThePreviousSubnetBack) {
  testing::TempDir dir;
  const std::string path = dir / "subnet.env";
  EXPECT_FALSE(ReadPreviousSubnet(path));  // missing
  WriteSubnetEnv(path, DualStack());
  auto prev = ReadPreviousSubnet(path);
  ASSERT_TRUE(prev);
  EXPECT_EQ(prev->v4, Net("10.5.34.0/24"));
  EXPECT_EQ(prev->v6, Net("fd00:0:0:22::/64"));
  // What flanneld wrote, IPv4 only.
  testing::WriteFile(path,
                     "FLANNEL_NETWORK=10.244.0.0/16\nFLANNEL_SUBNET=10.244.7.1/24\nFLANNEL_MTU=1450\n"
                     "FLANNEL_IPMASQ=true\n");
  prev = ReadPreviousSubnet(path);
  ASSERT_TRUE(prev);
  EXPECT_EQ(prev->v4, Net("10.244.7.0/24"));
  EXPECT_FALSE(prev->v6);
  for (const char* bad : {"", "FLANNEL_SUBNET=\n", "FLANNEL_SUBNET=garbage\n", "FLANNEL_SUBNET=fd00::1/64\n",
                          "FLANNEL_IPV6_SUBNET=fd00::1/64\n"}) {
    testing::WriteFile(path, bad);
    EXPECT_FALSE(ReadPreviousSubnet(path)) << bad;
  }
  EXPECT_FALSE(ReadPreviousSubnet(dir.path()));  // a folder: unreadable
}

}  // namespace
}  // namespace netiface::agent
