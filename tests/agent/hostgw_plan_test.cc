// host-gw planning as values: the routes each kind of lease needs.
#include <gtest/gtest.h>

#include "netiface/agent/hostgw.h"

namespace netiface::agent {
namespace {

cni::IpNet Net(const char* s) { return *cni::IpNet::Parse(s); }
cni::IpAddr Ip(const char* s) { return *cni::IpAddr::Parse(s); }

Lease HostGwLease(const char* subnet, const char* public_ip, const char* type = "host-gw") {
  Lease l;
  l.subnet.v4 = Net(subnet);
  if (public_ip != nullptr) l.attrs.public_ip = Ip(public_ip);
  l.attrs.backend_type = type;
  return l;
}

TEST(HostGwRoute, HostGwLeaseGivesRouteViaPublicIp) {
  std::string why;
  auto r = HostGwRoute(HostGwLease("10.5.2.0/24", "192.0.2.2"), 3, 78, &why);
  ASSERT_TRUE(r) << why;
  EXPECT_EQ(r->dst, Net("10.5.2.0/24"));
  EXPECT_EQ(r->gw, Ip("192.0.2.2"));
  EXPECT_EQ(r->ifindex, 3);
  EXPECT_EQ(r->protocol, 78);
  EXPECT_FALSE(r->onlink);
  EXPECT_EQ(r->table, 0);
}

TEST(HostGwRoute, DualStackLeaseRoutesOnlyItsIpv4Subnet) {
  Lease l = HostGwLease("10.5.2.0/24", "192.0.2.2");
  l.subnet.v6 = Net("fd00:5:0:2::/64");
  l.attrs.public_ipv6 = Ip("2001:db8::2");
  auto r = HostGwRoute(l, 7, 99, nullptr);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->dst, Net("10.5.2.0/24"));
  EXPECT_EQ(r->ifindex, 7);
  EXPECT_EQ(r->protocol, 99);
}

TEST(HostGwRoute, OtherBackendTypeIsSkippedWithReason) {
  std::string why;
  EXPECT_FALSE(HostGwRoute(HostGwLease("10.5.2.0/24", "192.0.2.2", "vxlan"), 3, 78, &why));
  EXPECT_NE(why.find("vxlan"), std::string::npos) << why;
  EXPECT_NE(why.find("10.5.2.0/24"), std::string::npos) << why;
  why.clear();
  EXPECT_FALSE(HostGwRoute(HostGwLease("10.5.2.0/24", "192.0.2.2", ""), 3, 78, &why));
  EXPECT_FALSE(why.empty());
}

TEST(HostGwRoute, MissingOrIpv6PublicIpIsSkipped) {
  std::string why;
  EXPECT_FALSE(HostGwRoute(HostGwLease("10.5.2.0/24", nullptr), 3, 78, &why));
  EXPECT_NE(why.find("no PublicIP"), std::string::npos) << why;
  EXPECT_FALSE(HostGwRoute(HostGwLease("10.5.2.0/24", "2001:db8::2"), 3, 78, &why));
  EXPECT_NE(why.find("not IPv4"), std::string::npos) << why;
  EXPECT_FALSE(HostGwRoute(HostGwLease("10.5.2.0/24", nullptr), 3, 78, nullptr));  // why is optional
}

TEST(HostGwRoute, NonIpv4SubnetIsSkipped) {
  std::string why;
  EXPECT_FALSE(HostGwRoute(HostGwLease("fd00:5::/64", "192.0.2.2"), 3, 78, &why));
  EXPECT_NE(why.find("not an IPv4 subnet"), std::string::npos) << why;
}

TEST(HostGwEntries, DualStackPeerGetsARoutePerFamily) {
  Lease l = HostGwLease("10.5.2.0/24", "192.0.2.2");
  l.subnet.v6 = Net("fd00:5:0:2::/64");
  l.attrs.public_ipv6 = Ip("2001:db8:1::2");
  auto v4only = HostGwEntries(l, 3, 78, /*ipv6=*/false, nullptr);
  ASSERT_TRUE(v4only);
  ASSERT_EQ(v4only->routes.size(), 1u);
  auto both = HostGwEntries(l, 3, 78, /*ipv6=*/true, nullptr);
  ASSERT_TRUE(both);
  ASSERT_EQ(both->routes.size(), 2u);
  EXPECT_EQ(both->routes[1].dst, Net("fd00:5:0:2::/64"));
  EXPECT_EQ(both->routes[1].gw, Ip("2001:db8:1::2"));
  EXPECT_EQ(both->routes[1].ifindex, 3);
  EXPECT_EQ(both->routes[1].protocol, 78);
  EXPECT_TRUE(both->neighs.empty() && both->fdbs.empty());
  // A peer without an IPv6 side is reached over IPv4 only.
  l.attrs.public_ipv6.reset();
  EXPECT_EQ(HostGwEntries(l, 3, 78, true, nullptr)->routes.size(), 1u);
  EXPECT_FALSE(HostGwEntries(HostGwLease("10.5.2.0/24", "192.0.2.2", "vxlan"), 3, 78, true, nullptr));
}

}  // namespace
}  // namespace netiface::agent
