#include "netiface/netlink/sysctl.h"

#include <gtest/gtest.h>

#include "netns_fixture.h"

namespace netiface::nl {
namespace {

using SysctlTest = NetnsTest;

TEST_F(SysctlTest, WritesOnlyInTheGivenNamespace) {
  const std::string key = "net/ipv4/ip_forward";
  auto own_before = ReadSysctl(nullptr, key);
  ASSERT_TRUE(own_before);
  ASSERT_EQ(ReadSysctl(&*pod_ns_, key), "0");  // a fresh namespace starts with forwarding off

  WriteSysctl(&*pod_ns_, key, "1");
  EXPECT_EQ(ReadSysctl(&*pod_ns_, key), "1");
  EXPECT_EQ(pod_tmp_->Sh("cat /proc/sys/net/ipv4/ip_forward").out, "1\n");
  EXPECT_EQ(ReadSysctl(&*host_ns_, key), "0");
  EXPECT_EQ(ReadSysctl(nullptr, key), own_before) << "the test process's own namespace is untouched";
  EXPECT_TRUE(NetNs::Current().SameAs(*NetNs::Open("/proc/self/ns/net")));
}

TEST_F(SysctlTest, PerLinkKeys) {
  MakePair("vs0", false);
  WriteSysctl(&*pod_ns_, "net/ipv4/conf/eth0/proxy_arp", "1");
  EXPECT_EQ(ReadSysctl(&*pod_ns_, "net/ipv4/conf/eth0/proxy_arp"), "1");
  EXPECT_EQ(ReadSysctl(&*host_ns_, "net/ipv4/conf/vs0/proxy_arp"), "0");
  // No eth0 in the host namespace.
  EXPECT_FALSE(ReadSysctl(&*host_ns_, "net/ipv4/conf/eth0/proxy_arp"));
}

TEST_F(SysctlTest, ErrorsNameTheKey) {
  EXPECT_FALSE(ReadSysctl(&*pod_ns_, "net/ipv4/conf/nolink/proxy_arp"));
  std::string msg =
      ExpectError(cni::kIoFailure, [&] { WriteSysctl(&*pod_ns_, "net/ipv4/conf/nolink/proxy_arp", "1"); });
  EXPECT_EQ(msg, "failed to set sysctl net/ipv4/conf/nolink/proxy_arp to 1: No such file or directory");
  msg = ExpectError(cni::kIoFailure, [&] { WriteSysctl(&*pod_ns_, "net/ipv4/ip_forward", "banana"); });
  EXPECT_NE(msg.find("net/ipv4/ip_forward"), std::string::npos) << msg;
  ExpectError(cni::kInvalidConfig, [&] { WriteSysctl(&*pod_ns_, "net/../../etc/passwd", "x"); });
  ExpectError(cni::kInvalidConfig, [&] { ReadSysctl(nullptr, "/net/ipv4/ip_forward"); });
}

}  // namespace
}  // namespace netiface::nl
