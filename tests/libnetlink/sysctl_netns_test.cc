#include "netiface/netlink/sysctl.h"

#include <cerrno>

#include <gtest/gtest.h>

#include "netiface/netlink/netconf.h"
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

TEST_F(SysctlTest, AnAbsentKeyIsAResultADeniedOneAnError) {
  EXPECT_FALSE(ReadSysctl(&*pod_ns_, "net/ipv4/conf/nolink/proxy_arp"));
  EXPECT_FALSE(WriteSysctl(&*pod_ns_, "net/ipv4/conf/nolink/proxy_arp", "1"));
  EXPECT_TRUE(WriteSysctl(&*pod_ns_, "net/ipv4/ip_forward", "1"));
  try {
    RequireSysctl(&*pod_ns_, "net/ipv4/conf/nolink/proxy_arp", "1");
    ADD_FAILURE() << "no error";
  } catch (const cni::Error& e) {
    EXPECT_EQ(e.code(), cni::kIoFailure);
    EXPECT_EQ(e.sys_errno(), ENOENT);
    EXPECT_EQ(e.msg(), "failed to set sysctl net/ipv4/conf/nolink/proxy_arp to 1: No such file or directory");
  }
  // Read-only even for root (mode 0444): denied, not absent, and the errno says so.
  try {
    WriteSysctl(&*pod_ns_, "net/ipv4/conf/all/mc_forwarding", "1");
    ADD_FAILURE() << "no error";
  } catch (const cni::Error& e) {
    EXPECT_EQ(e.code(), cni::kIoFailure);
    EXPECT_EQ(e.sys_errno(), EACCES) << e.what();
  }
  try {
    WriteSysctl(&*pod_ns_, "net/ipv4/ip_forward", "banana");
    ADD_FAILURE() << "no error";
  } catch (const cni::Error& e) {
    EXPECT_EQ(e.sys_errno(), EINVAL) << e.what();
    EXPECT_NE(e.msg().find("net/ipv4/ip_forward"), std::string::npos) << e.msg();
  }
  ExpectError(cni::kInvalidConfig, [&] { WriteSysctl(&*pod_ns_, "net/../../etc/passwd", "x"); });
  ExpectError(cni::kInvalidConfig, [&] { ReadSysctl(nullptr, "/net/ipv4/ip_forward"); });
}

// One object per namespace: its folders are looked up in that namespace once and stay its own.
TEST_F(SysctlTest, ManyKeysOfOneNamespaceThroughOneObject) {
  MakePair("vs0", false);
  Sysctls pod(&*pod_ns_), host(&*host_ns_);
  EXPECT_TRUE(pod.Write("net/ipv4/conf/eth0/proxy_arp", "1"));
  EXPECT_TRUE(pod.Write("net/ipv4/ip_forward", "1"));
  EXPECT_EQ(host.Read("net/ipv4/ip_forward"), "0");
  EXPECT_EQ(host.Read("net/ipv4/conf/vs0/proxy_arp"), "0");
  EXPECT_EQ(pod.Read("net/ipv4/conf/eth0/proxy_arp"), "1");
  EXPECT_EQ(pod.Read("net/ipv4/ip_forward"), "1");
  EXPECT_EQ(pod_tmp_->Sh("cat /proc/sys/net/ipv4/conf/eth0/proxy_arp /proc/sys/net/ipv4/ip_forward").out, "1\n1\n");
  EXPECT_FALSE(pod.Read("net/ipv4/conf/nolink/proxy_arp"));
  EXPECT_FALSE(host.Write("net/ipv4/conf/eth0/proxy_arp", "1"));  // eth0 is the pod's
  EXPECT_FALSE(pod.Read("net/nosuchfamily/x"));                   // an absent folder is an absent key
  EXPECT_TRUE(pod.Read("kernel/ostype"));                         // two components: no folder
  ExpectError(cni::kInvalidConfig, [&] { pod.Write("net/ipv4/../ipv6/conf/all/forwarding", "1"); });
  EXPECT_TRUE(NetNs::Current().SameAs(*NetNs::Open("/proc/self/ns/net")));
}

TEST_F(SysctlTest, ForwardingIsReadOverNetlinkAndWrittenOnlyWhenItDiffers) {
  const NetconfQuery all = *NetconfQueryFor("net/ipv4/ip_forward");
  ASSERT_EQ(NetconfForwarding(*pod_, all), 0);
  Sysctls pod(&*pod_ns_, &*pod_);
  EXPECT_TRUE(pod.Write("net/ipv4/ip_forward", "0"));  // already so
  EXPECT_TRUE(pod.Write("net/ipv4/ip_forward", "1"));
  EXPECT_EQ(NetconfForwarding(*pod_, all), 1);
  EXPECT_EQ(pod_tmp_->Sh("cat /proc/sys/net/ipv4/ip_forward").out, "1\n");
  EXPECT_TRUE(pod.Write("net/ipv4/conf/default/forwarding", "1"));
  EXPECT_EQ(NetconfForwarding(*pod_, *NetconfQueryFor("net/ipv4/conf/default/forwarding")), 1);
  EXPECT_EQ(NetconfForwarding(*host_, all), 0) << "the host namespace is untouched";
  // A value the kernel would refuse is still written (and refused), not compared away.
  try {
    pod.Write("net/ipv4/ip_forward", "banana");
    ADD_FAILURE() << "no error";
  } catch (const cni::Error& e) {
    EXPECT_EQ(e.sys_errno(), EINVAL) << e.what();
  }
}

}  // namespace
}  // namespace netiface::nl
