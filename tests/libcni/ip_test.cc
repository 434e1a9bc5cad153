#include "netiface/cni/ip.h"

#include <arpa/inet.h>
#include <sys/socket.h>

#include <gtest/gtest.h>

namespace netiface::cni {
namespace {

IpAddr A(const char* s) {
  auto a = IpAddr::Parse(s);
  EXPECT_TRUE(a) << s;
  return a.value_or(IpAddr());
}
IpNet N(const char* s) {
  auto n = IpNet::Parse(s);
  EXPECT_TRUE(n) << s;
  return n.value_or(IpNet());
}

TEST(IpAddrTest, ParsesAndFormatsCanonically) {
  EXPECT_EQ(A("10.1.2.3").ToString(), "10.1.2.3");
  EXPECT_EQ(A("10.1.2.3").family(), AF_INET);
  EXPECT_EQ(A("10.1.2.3").bits(), 32);
  EXPECT_EQ(A("FD00:0:0::0001").ToString(), "fd00::1");
  EXPECT_EQ(A("fd00::1").family(), AF_INET6);
  EXPECT_EQ(A("fd00::1").bits(), 128);
  EXPECT_EQ(A("::").ToString(), "::");
  EXPECT_EQ(A("::ffff:1.2.3.4").family(), AF_INET6);
  EXPECT_EQ(A("::ffff:1.2.3.4").ToString(), "::ffff:1.2.3.4");
  EXPECT_EQ(IpAddr().ToString(), "0.0.0.0");
  EXPECT_EQ(IpAddr::V4(0x0a000001).ToString(), "10.0.0.1");
}

TEST(IpAddrTest, RejectsGarbage) {
  for (const char* bad : {"", "1.2.3", "1.2.3.4.5", "256.1.1.1", "01.2.3.4", "1.2.3.4/24", " 1.2.3.4", "1.2.3.4 ",
                          "fd00::1%eth0", "fd00:::1", "g::1", "::1::2", "localhost", "1.2.3.-1"}) {
    EXPECT_FALSE(IpAddr::Parse(bad)) << bad;
  }
  EXPECT_FALSE(IpAddr::Parse(std::string_view("1.2.3.4\0", 8)));
}

TEST(IpAddrTest, BytesAreNetworkOrder) {
  IpAddr a = A("10.20.30.40");
  EXPECT_EQ(a.bytes()[0], 10);
  EXPECT_EQ(a.bytes()[3], 40);
  uint8_t raw[16] = {0xfd, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 7};
  EXPECT_EQ(IpAddr::FromBytes(AF_INET6, raw).ToString(), "fd00::7");
  EXPECT_EQ(IpAddr::FromBytes(AF_INET, raw).ToString(), "253.0.0.0");
}

TEST(IpAddrTest, NextAndPrevCarryAndWrap) {
  EXPECT_EQ(A("10.0.0.255").Next().ToString(), "10.0.1.0");
  EXPECT_EQ(A("10.0.1.0").Prev().ToString(), "10.0.0.255");
  EXPECT_EQ(A("255.255.255.255").Next().ToString(), "0.0.0.0");
  EXPECT_EQ(A("0.0.0.0").Prev().ToString(), "255.255.255.255");
  EXPECT_EQ(A("fd00::ffff").Next().ToString(), "fd00::1:0");
  EXPECT_EQ(A("fd00::1:0").Prev().ToString(), "fd00::ffff");
  EXPECT_EQ(A("ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff").Next().ToString(), "::");
  EXPECT_EQ(A("::").Prev().ToString(), "ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff");
  EXPECT_EQ(A("10.0.0.1").Next().Prev(), A("10.0.0.1"));
}

TEST(IpAddrTest, OrderingAndLinkLocal) {
  EXPECT_LT(A("10.0.0.2"), A("10.0.0.10"));
  EXPECT_LT(A("10.255.255.255"), A("11.0.0.0"));
  EXPECT_NE(A("10.0.0.1"), A("::ffff:10.0.0.1"));
  EXPECT_TRUE(A("169.254.1.1").IsLinkLocal());
  EXPECT_FALSE(A("169.253.1.1").IsLinkLocal());
  EXPECT_TRUE(A("fe80::1").IsLinkLocal());
  EXPECT_TRUE(A("febf::1").IsLinkLocal());
  EXPECT_FALSE(A("fec0::1").IsLinkLocal());
  EXPECT_FALSE(A("fd00::1").IsLinkLocal());
}

TEST(IpNetTest, ParseKeepsHostBits) {
  IpNet n = N("10.0.0.2/24");
  EXPECT_EQ(n.addr().ToString(), "10.0.0.2");
  EXPECT_EQ(n.prefix_len(), 24);
  EXPECT_EQ(n.ToString(), "10.0.0.2/24");
  EXPECT_TRUE(n.HasHostBits());
  EXPECT_FALSE(N("10.0.0.0/24").HasHostBits());
  EXPECT_EQ(N("fd00::1/64").ToString(), "fd00::1/64");
  EXPECT_EQ(N("0.0.0.0/0").ToString(), "0.0.0.0/0");
  EXPECT_EQ(N("::/0").ToString(), "::/0");
  EXPECT_EQ(IpNet::Host(A("fd00::5")).ToString(), "fd00::5/128");
  EXPECT_EQ(IpNet::Host(A("10.0.0.5")).ToString(), "10.0.0.5/32");
}

TEST(IpNetTest, RejectsGarbage) {
  for (const char* bad : {"", "10.0.0.0", "10.0.0.0/", "10.0.0.0/33", "fd00::/129", "10.0.0.0/-1", "10.0.0.0/+8",
                          "10.0.0.0/ 8", "10.0.0.0/8/8", "/8", "10.0.0/8", "10.0.0.0/1000", "10.0.0.0/0x8"}) {
    EXPECT_FALSE(IpNet::Parse(bad)) << bad;
  }
}

TEST(IpNetTest, NetworkAndLastAddr) {
  struct Case {
    const char* net;
    const char* network;
    const char* last;
  } cases[] = {
      {"10.1.2.3/24", "10.1.2.0/24", "10.1.2.255"},
      {"10.1.2.3/20", "10.1.0.0/20", "10.1.15.255"},
      {"10.1.2.3/32", "10.1.2.3/32", "10.1.2.3"},
      {"10.1.2.3/0", "0.0.0.0/0", "255.255.255.255"},
      {"10.1.2.3/31", "10.1.2.2/31", "10.1.2.3"},
      {"fd00:1:2:3::5/64", "fd00:1:2:3::/64", "fd00:1:2:3:ffff:ffff:ffff:ffff"},
      {"fd00::5/126", "fd00::4/126", "fd00::7"},
      {"fd00::5/128", "fd00::5/128", "fd00::5"},
      {"fd00::5/0", "::/0", "ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff"},
      {"fd00:abcd::1/17", "fd00:8000::/17", "fd00:ffff:ffff:ffff:ffff:ffff:ffff:ffff"},
  };
  for (const auto& c : cases) {
    EXPECT_EQ(N(c.net).Network().ToString(), c.network) << c.net;
    EXPECT_EQ(N(c.net).LastAddr().ToString(), c.last) << c.net;
  }
}

TEST(IpNetTest, Contains) {
  IpNet n = N("10.1.2.0/24");
  EXPECT_TRUE(n.Contains(A("10.1.2.0")));
  EXPECT_TRUE(n.Contains(A("10.1.2.255")));
  EXPECT_FALSE(n.Contains(A("10.1.3.0")));
  EXPECT_FALSE(n.Contains(A("10.1.1.255")));
  EXPECT_FALSE(n.Contains(A("::ffff:10.1.2.1")));          // another family
  EXPECT_TRUE(N("10.1.2.77/24").Contains(A("10.1.2.1")));  // host bits of the prefix do not matter
  EXPECT_TRUE(N("0.0.0.0/0").Contains(A("1.2.3.4")));
  EXPECT_FALSE(N("0.0.0.0/0").Contains(A("::1")));
  IpNet v6 = N("fd00::/64");
  EXPECT_TRUE(v6.Contains(A("fd00::ffff:ffff:ffff:ffff")));
  EXPECT_FALSE(v6.Contains(A("fd00:0:0:1::")));
  EXPECT_FALSE(v6.Contains(A("10.0.0.1")));
}

TEST(IpNetTest, Overlaps) {
  EXPECT_TRUE(N("10.0.0.0/8").Overlaps(N("10.1.0.0/16")));
  EXPECT_TRUE(N("10.1.0.0/16").Overlaps(N("10.0.0.0/8")));
  EXPECT_TRUE(N("10.1.0.0/16").Overlaps(N("10.1.0.0/16")));
  EXPECT_FALSE(N("10.1.0.0/16").Overlaps(N("10.2.0.0/16")));
  EXPECT_FALSE(N("10.0.0.0/25").Overlaps(N("10.0.0.128/25")));
  EXPECT_TRUE(N("10.0.0.5/25").Overlaps(N("10.0.0.100/32")));
  EXPECT_TRUE(N("fd00::/48").Overlaps(N("fd00:0:0:1::/64")));
  EXPECT_FALSE(N("fd00::/64").Overlaps(N("fd00:0:0:1::/64")));
  EXPECT_FALSE(N("0.0.0.0/0").Overlaps(N("::/0")));
}

}  // namespace
}  // namespace netiface::cni
