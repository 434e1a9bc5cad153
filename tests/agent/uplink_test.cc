// SelectUplink as a value: --iface by name and by address, --public-ip, the default route's link.
#include "netiface/agent/uplink.h"

#include <linux/rtnetlink.h>

#include <gtest/gtest.h>

namespace netiface::agent {
namespace {

cni::IpNet Net(const char* s) { return *cni::IpNet::Parse(s); }
cni::IpAddr Ip(const char* s) { return *cni::IpAddr::Parse(s); }

class SelectUplinkTest : public ::testing::Test {
 protected:
  void SetUp() override {
    links_ = {Link(1, "lo", 65536), Link(2, "eth0", 1500), Link(3, "eth1", 9000), Link(4, "cni0", 1450)};
    addrs_ = {Addr(1, "127.0.0.1/8", RT_SCOPE_HOST),
              Addr(2, "fe80::1/64", RT_SCOPE_LINK),
              Addr(2, "192.0.2.10/24"),
              Addr(2, "192.0.2.11/24"),
              Addr(3, "2001:db8::3/64"),
              Addr(3, "169.254.3.3/16", RT_SCOPE_LINK),
              Addr(3, "198.51.100.3/24"),
              Addr(4, "fd00::4/64")};
    routes_ = {Route("0.0.0.0/0", 3, 200), Route("0.0.0.0/0", 2, 100), Route("192.0.2.0/24", 2, 0)};
  }

  static nl::LinkInfo Link(int index, const char* name, int mtu) {
    nl::LinkInfo l;
    l.index = index;
    l.name = name;
    l.mtu = mtu;
    return l;
  }
  static nl::AddrInfo Addr(int ifindex, const char* local, int scope = RT_SCOPE_UNIVERSE) {
    return nl::AddrInfo{ifindex, Net(local), scope, 0};
  }
  static nl::RouteInfo Route(const char* dst, int ifindex, int metric) {
    nl::RouteInfo r;
    r.dst = Net(dst);
    r.ifindex = ifindex;
    r.priority = metric;
    return r;
  }

  Uplink Select(const UplinkQuery& q) { return SelectUplink(q, links_, addrs_, routes_); }
  std::string Error(const UplinkQuery& q) {
    try {
      Select(q);
    } catch (const UplinkError& e) {
      return e.what();
    }
    ADD_FAILURE() << "no UplinkError";
    return {};
  }

  std::vector<nl::LinkInfo> links_;
  std::vector<nl::AddrInfo> addrs_;
  std::vector<nl::RouteInfo> routes_;
};

TEST_F(SelectUplinkTest, DefaultRouteWithLowestMetric) {
  Uplink u = Select({});
  EXPECT_EQ(u.name, "eth0");
  EXPECT_EQ(u.ifindex, 2);
  EXPECT_EQ(u.mtu, 1500);
  EXPECT_EQ(u.public_ip, Ip("192.0.2.10"));
}

TEST_F(SelectUplinkTest, IfaceByNameTakesItsFirstGlobalIpv4) {
  Uplink u = Select({.ifaces = {"eth1"}});
  EXPECT_EQ(u.name, "eth1");
  EXPECT_EQ(u.mtu, 9000);
  EXPECT_EQ(u.public_ip, Ip("198.51.100.3"));  // not the link-local 169.254.3.3, not the IPv6 one
}

TEST_F(SelectUplinkTest, IfaceByAddress) {
  Uplink u = Select({.ifaces = {"192.0.2.11"}});
  EXPECT_EQ(u.name, "eth0");
  EXPECT_EQ(u.public_ip, Ip("192.0.2.11"));
  u = Select({.ifaces = {"2001:db8::3"}});  // an IPv6 address picks the link; the public IP is its IPv4
  EXPECT_EQ(u.name, "eth1");
  EXPECT_EQ(u.public_ip, Ip("198.51.100.3"));
}

TEST_F(SelectUplinkTest, FirstMatchingIfaceWins) {
  Uplink u = Select({.ifaces = {"wlan0", "10.9.9.9", "cni0", "eth1", "eth0"}});
  EXPECT_EQ(u.name, "eth1");
}

TEST_F(SelectUplinkTest, NoMatchingIfaceSaysWhatWasTried) {
  std::string e = Error({.ifaces = {"wlan0", "10.9.9.9", "cni0"}});
  EXPECT_NE(e.find("no link named wlan0"), std::string::npos) << e;
  EXPECT_NE(e.find("no link holds address 10.9.9.9"), std::string::npos) << e;
  EXPECT_NE(e.find("cni0 has no global IPv4 address"), std::string::npos) << e;
}

TEST_F(SelectUplinkTest, PublicIpPicksTheLinkHoldingIt) {
  Uplink u = Select({.public_ip = Ip("198.51.100.3")});
  EXPECT_EQ(u.name, "eth1");
  EXPECT_EQ(u.public_ip, Ip("198.51.100.3"));
  std::string e = Error({.public_ip = Ip("203.0.113.1")});
  EXPECT_NE(e.find("203.0.113.1"), std::string::npos) << e;
  e = Error({.public_ip = Ip("2001:db8::3")});
  EXPECT_NE(e.find("not an IPv4 address"), std::string::npos) << e;
}

TEST_F(SelectUplinkTest, PublicIpWithIfaceMustBeOnThatLink) {
  Uplink u = Select({.ifaces = {"eth0"}, .public_ip = Ip("192.0.2.11")});
  EXPECT_EQ(u.name, "eth0");
  EXPECT_EQ(u.public_ip, Ip("192.0.2.11"));
  std::string e = Error({.ifaces = {"eth1"}, .public_ip = Ip("192.0.2.11")});
  EXPECT_NE(e.find("--public-ip 192.0.2.11 is not an address of eth1"), std::string::npos) << e;
  // The next --iface entry that holds it still matches.
  EXPECT_EQ(Select({.ifaces = {"eth1", "eth0"}, .public_ip = Ip("192.0.2.11")}).name, "eth0");
}

TEST_F(SelectUplinkTest, NoDefaultRoute) {
  routes_ = {Route("192.0.2.0/24", 2, 0)};
  std::string e = Error({});
  EXPECT_NE(e.find("no IPv4 default route"), std::string::npos) << e;
}

TEST_F(SelectUplinkTest, DefaultRouteLinkWithoutIpv4) {
  routes_ = {Route("0.0.0.0/0", 4, 0)};
  std::string e = Error({});
  EXPECT_NE(e.find("cni0 has no global IPv4 address"), std::string::npos) << e;
  routes_ = {Route("0.0.0.0/0", 42, 0)};
  e = Error({});
  EXPECT_NE(e.find("#42"), std::string::npos) << e;
}

TEST_F(SelectUplinkTest, EmptyInputsNeverCrash) {
  links_.clear();
  addrs_.clear();
  routes_.clear();
  EXPECT_FALSE(Error({}).empty());
  EXPECT_FALSE(Error({.ifaces = {""}}).empty());
  EXPECT_FALSE(Error({.public_ip = Ip("192.0.2.1")}).empty());
}

TEST_F(SelectUplinkTest, Ipv6SideFollowsTheChosenLink) {
  Uplink eth1 = SelectUplink(UplinkQuery{{"eth1"}, std::nullopt, std::nullopt}, links_, addrs_, routes_);
  ASSERT_TRUE(eth1.public_ipv6);
  EXPECT_EQ(*eth1.public_ipv6, Ip("2001:db8::3"));  // its global one, not a link-local
  EXPECT_EQ(*eth1.net6, Net("2001:db8::/64"));
  EXPECT_EQ(*eth1.net, Net("198.51.100.0/24"));
  Uplink eth0 = SelectUplink(UplinkQuery{}, links_, addrs_, routes_);
  EXPECT_FALSE(eth0.public_ipv6);  // only fe80::1 there
  EXPECT_EQ(*eth0.net, Net("192.0.2.0/24"));
}

TEST_F(SelectUplinkTest, PublicIpv6MustBeOnTheChosenLink) {
  UplinkQuery q{{"eth1"}, std::nullopt, Ip("2001:db8::3")};
  EXPECT_EQ(*SelectUplink(q, links_, addrs_, routes_).public_ipv6, Ip("2001:db8::3"));
  q.public_ipv6 = Ip("fd00::4");  // on cni0
  try {
    SelectUplink(q, links_, addrs_, routes_);
    ADD_FAILURE() << "accepted";
  } catch (const UplinkError& e) {
    EXPECT_NE(std::string(e.what()).find("--public-ipv6 fd00::4 is not an address of eth1"), std::string::npos)
        << e.what();
  }
  q.public_ipv6 = Ip("192.0.2.10");
  EXPECT_THROW(SelectUplink(q, links_, addrs_, routes_), UplinkError);
}

}  // namespace
}  // namespace netiface::agent
