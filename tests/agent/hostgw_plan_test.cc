// host-gw planning as values: the route each kind of lease needs, and what a reconcile changes.
#include <linux/rtnetlink.h>

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

nl::RouteSpec Want(const char* dst, const char* gw, int ifindex = 3) {
  return nl::RouteSpec{.dst = Net(dst), .gw = Ip(gw), .ifindex = ifindex, .protocol = kDefaultRouteProtocol};
}

nl::RouteInfo Have(const char* dst, const char* gw, int protocol, int ifindex = 3, int priority = 0) {
  nl::RouteInfo r;
  r.dst = Net(dst);
  if (gw != nullptr) r.gw = Ip(gw);
  r.ifindex = ifindex;
  r.table = RT_TABLE_MAIN;
  r.priority = priority;
  r.protocol = protocol;
  return r;
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

TEST(DiffRoutes, MissingRoutesAreAdded) {
  auto d = DiffRoutes({Want("10.5.2.0/24", "192.0.2.2"), Want("10.5.3.0/24", "192.0.2.3")},
                      {Have("10.5.2.0/24", "192.0.2.2", 78)}, 78);
  ASSERT_EQ(d.add.size(), 1u);
  EXPECT_EQ(d.add[0].dst, Net("10.5.3.0/24"));
  EXPECT_EQ(d.add[0].protocol, 78);
  EXPECT_TRUE(d.replace.empty());
  EXPECT_TRUE(d.remove.empty());
  EXPECT_TRUE(d.conflicts.empty());
}

TEST(DiffRoutes, NothingToDoWhenInPlace) {
  auto d = DiffRoutes({Want("10.5.2.0/24", "192.0.2.2")}, {Have("10.5.2.0/24", "192.0.2.2", 78)}, 78);
  EXPECT_TRUE(d.add.empty() && d.replace.empty() && d.remove.empty() && d.conflicts.empty());
}

TEST(DiffRoutes, OursWithAnotherGatewayOrDeviceIsReplaced) {
  auto d = DiffRoutes({Want("10.5.2.0/24", "192.0.2.2"), Want("10.5.3.0/24", "192.0.2.3")},
                      {Have("10.5.2.0/24", "192.0.2.9", 78), Have("10.5.3.0/24", "192.0.2.3", 78, /*ifindex=*/4)},
                      78);
  ASSERT_EQ(d.replace.size(), 2u);
  EXPECT_EQ(d.replace[0].dst, Net("10.5.2.0/24"));
  EXPECT_EQ(d.replace[0].gw, Ip("192.0.2.2"));
  EXPECT_EQ(d.replace[1].ifindex, 3);
  EXPECT_TRUE(d.add.empty());
  EXPECT_TRUE(d.remove.empty());
}

TEST(DiffRoutes, StaleOursAreRemovedWithTheirIdentity) {
  auto d = DiffRoutes({Want("10.5.2.0/24", "192.0.2.2")},
                      {Have("10.5.2.0/24", "192.0.2.2", 78), Have("10.5.9.0/24", "192.0.2.9", 78, 3, 20)}, 78);
  ASSERT_EQ(d.remove.size(), 1u);
  EXPECT_EQ(d.remove[0].dst, Net("10.5.9.0/24"));
  EXPECT_EQ(d.remove[0].gw, Ip("192.0.2.9"));
  EXPECT_EQ(d.remove[0].priority, 20);
  EXPECT_EQ(d.remove[0].protocol, 78);
}

TEST(DiffRoutes, ForeignRouteOfADesiredDestinationIsKeptAndReported) {
  auto d = DiffRoutes({Want("10.5.2.0/24", "192.0.2.2")}, {Have("10.5.2.0/24", "192.0.2.77", RTPROT_STATIC)}, 78);
  EXPECT_TRUE(d.add.empty());
  EXPECT_TRUE(d.replace.empty());
  EXPECT_TRUE(d.remove.empty());
  ASSERT_EQ(d.conflicts.size(), 1u);
  EXPECT_NE(d.conflicts[0].find("10.5.2.0/24"), std::string::npos) << d.conflicts[0];
  EXPECT_NE(d.conflicts[0].find("192.0.2.77"), std::string::npos) << d.conflicts[0];
}

TEST(DiffRoutes, OursBesideAForeignRouteOfTheSameDestinationCounts) {
  auto d = DiffRoutes({Want("10.5.2.0/24", "192.0.2.2")},
                      {Have("10.5.2.0/24", "192.0.2.77", RTPROT_BOOT, 3, 100), Have("10.5.2.0/24", "192.0.2.2", 78)},
                      78);
  EXPECT_TRUE(d.add.empty() && d.replace.empty() && d.remove.empty() && d.conflicts.empty());
}

TEST(DiffRoutes, RoutesOfOtherProtocolsAreIgnored) {
  auto d = DiffRoutes({}, {Have("0.0.0.0/0", "192.0.2.254", RTPROT_BOOT), Have("192.0.2.0/24", nullptr, RTPROT_KERNEL),
                           Have("10.9.0.0/16", "192.0.2.1", RTPROT_STATIC), Have("10.5.4.0/24", "192.0.2.4", 79)},
                      78);
  EXPECT_TRUE(d.add.empty() && d.replace.empty() && d.remove.empty() && d.conflicts.empty());
}

TEST(DiffRoutes, DuplicateDestinationsKeepTheFirst) {
  auto d = DiffRoutes({Want("10.5.2.0/24", "192.0.2.2"), Want("10.5.2.0/24", "192.0.2.3")}, {}, 78);
  ASSERT_EQ(d.add.size(), 1u);
  EXPECT_EQ(d.add[0].gw, Ip("192.0.2.2"));
}

}  // namespace
}  // namespace netiface::agent
