// The reconcile planner shared by the backends, as values: routes of our protocol, neighbour and FDB
// entries of our devices, a peer planned whole or not at all.
#include "netiface/agent/peer_entries.h"

#include <linux/rtnetlink.h>

#include <gtest/gtest.h>

namespace netiface::agent {
namespace {

constexpr int kProto = 78;

cni::IpNet Net(const char* s) { return *cni::IpNet::Parse(s); }
cni::IpAddr Ip(const char* s) { return *cni::IpAddr::Parse(s); }
SubnetKey Key(const char* v4) { return SubnetKey{Net(v4), std::nullopt}; }

nl::RouteSpec Want(const char* dst, const char* gw, int ifindex = 3) {
  return nl::RouteSpec{.dst = Net(dst), .gw = Ip(gw), .ifindex = ifindex, .protocol = kProto};
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

// A host-gw peer: one route.
PeerEntries Routed(const char* dst, const char* gw) { return PeerEntries{{}, {}, {Want(dst, gw)}}; }

// A vxlan peer on device 7: neighbour, FDB, onlink route.
PeerEntries Tunnelled(const char* subnet, const char* subnet_addr, const char* mac, const char* public_ip) {
  nl::RouteSpec r = Want(subnet, subnet_addr, 7);
  r.onlink = true;
  return PeerEntries{{nl::NeighSpec{7, Ip(subnet_addr), mac}}, {nl::FdbSpec{7, mac, Ip(public_ip)}}, {r}};
}

size_t RoutesToAdd(const ReconcilePlan& p) {
  size_t n = 0;
  for (const auto& [k, c] : p.set) n += c.routes_add.size();
  return n;
}

TEST(PlanReconcile, MissingRoutesAreAdded) {
  auto p = PlanReconcile({{Key("10.5.2.0/24"), Routed("10.5.2.0/24", "192.0.2.2")},
                          {Key("10.5.3.0/24"), Routed("10.5.3.0/24", "192.0.2.3")}},
                         {{Have("10.5.2.0/24", "192.0.2.2", kProto)}, {}, {}}, kProto);
  ASSERT_EQ(p.set.size(), 1u);
  const PeerChanges& c = p.set.at(Key("10.5.3.0/24"));
  ASSERT_EQ(c.routes_add.size(), 1u);
  EXPECT_EQ(c.routes_add[0].protocol, kProto);
  EXPECT_TRUE(c.routes_replace.empty());
  EXPECT_TRUE(p.remove.empty());
  EXPECT_TRUE(p.conflicts.empty());
}

TEST(PlanReconcile, NothingToDoWhenInPlace) {
  auto p = PlanReconcile({{Key("10.5.2.0/24"), Tunnelled("10.5.2.0/24", "10.5.2.0", "0e:00:00:00:00:02", "192.0.2.2")}},
                         {{Have("10.5.2.0/24", "10.5.2.0", kProto, 7)},
                          {nl::NeighSpec{7, Ip("10.5.2.0"), "0e:00:00:00:00:02"}},
                          {nl::FdbSpec{7, "0e:00:00:00:00:02", Ip("192.0.2.2")}}},
                         kProto);
  EXPECT_TRUE(p.set.empty());
  EXPECT_TRUE(p.remove.empty());
  EXPECT_TRUE(p.conflicts.empty());
}

TEST(PlanReconcile, OursWithAnotherGatewayOrDeviceIsReplaced) {
  auto p = PlanReconcile(
      {{Key("10.5.2.0/24"), Routed("10.5.2.0/24", "192.0.2.2")},
       {Key("10.5.3.0/24"), Routed("10.5.3.0/24", "192.0.2.3")}},
      {{Have("10.5.2.0/24", "192.0.2.9", kProto), Have("10.5.3.0/24", "192.0.2.3", kProto, 4)}, {}, {}}, kProto);
  ASSERT_EQ(p.set.size(), 2u);
  EXPECT_EQ(p.set.at(Key("10.5.2.0/24")).routes_replace.at(0).gw, Ip("192.0.2.2"));
  EXPECT_EQ(p.set.at(Key("10.5.3.0/24")).routes_replace.at(0).ifindex, 3);
  EXPECT_EQ(RoutesToAdd(p), 0u);
  EXPECT_TRUE(p.remove.empty());
}

TEST(PlanReconcile, StaleOursAreRemovedWithTheirIdentity) {
  auto p = PlanReconcile(
      {{Key("10.5.2.0/24"), Routed("10.5.2.0/24", "192.0.2.2")}},
      {{Have("10.5.2.0/24", "192.0.2.2", kProto), Have("10.5.9.0/24", "192.0.2.9", kProto, 3, 20)}, {}, {}}, kProto);
  ASSERT_EQ(p.remove.routes.size(), 1u);
  EXPECT_EQ(p.remove.routes[0].dst, Net("10.5.9.0/24"));
  EXPECT_EQ(p.remove.routes[0].gw, Ip("192.0.2.9"));
  EXPECT_EQ(p.remove.routes[0].priority, 20);
  EXPECT_EQ(p.remove.routes[0].protocol, kProto);
}

TEST(PlanReconcile, AForeignRouteLeavesThePeerOutWhole) {
  // The vxlan peer's route is held by a static route: its neighbour and FDB entries are not wanted either.
  auto p = PlanReconcile(
      {{Key("10.5.2.0/24"), Tunnelled("10.5.2.0/24", "10.5.2.0", "0e:00:00:00:00:02", "192.0.2.2")}},
      {{Have("10.5.2.0/24", "192.0.2.77", RTPROT_STATIC)}, {nl::NeighSpec{7, Ip("10.5.2.0"), "0e:00:00:00:00:02"}}, {}},
      kProto);
  EXPECT_TRUE(p.set.empty());
  EXPECT_TRUE(p.remove.routes.empty());  // the foreign route is never touched
  ASSERT_EQ(p.remove.neighs.size(), 1u);
  ASSERT_EQ(p.conflicts.size(), 1u);
  EXPECT_NE(p.conflicts[0].find("10.5.2.0/24"), std::string::npos) << p.conflicts[0];
  EXPECT_NE(p.conflicts[0].find("192.0.2.77"), std::string::npos) << p.conflicts[0];
}

TEST(PlanReconcile, OursBesideAForeignRouteOfTheSameDestinationCounts) {
  auto p = PlanReconcile(
      {{Key("10.5.2.0/24"), Routed("10.5.2.0/24", "192.0.2.2")}},
      {{Have("10.5.2.0/24", "192.0.2.77", RTPROT_BOOT, 3, 100), Have("10.5.2.0/24", "192.0.2.2", kProto)}, {}, {}},
      kProto);
  EXPECT_TRUE(p.set.empty() && p.remove.empty() && p.conflicts.empty());
}

TEST(PlanReconcile, RoutesOfOtherProtocolsAreIgnored) {
  auto p = PlanReconcile({},
                         {{Have("0.0.0.0/0", "192.0.2.254", RTPROT_BOOT), Have("192.0.2.0/24", nullptr, RTPROT_KERNEL),
                           Have("10.9.0.0/16", "192.0.2.1", RTPROT_STATIC), Have("10.5.4.0/24", "192.0.2.4", 79),
                           Have("fe80::/64", nullptr, RTPROT_KERNEL)},
                          {},
                          {}},
                         kProto);
  EXPECT_TRUE(p.set.empty() && p.remove.empty() && p.conflicts.empty());
}

TEST(PlanReconcile, ADestinationWantedTwiceGoesToTheFirstPeer) {
  auto p = PlanReconcile({{Key("10.5.2.0/24"), Routed("10.5.2.0/24", "192.0.2.2")},
                          {Key("10.5.3.0/24"), Routed("10.5.2.0/24", "192.0.2.3")}},
                         {}, kProto);
  ASSERT_EQ(p.set.size(), 1u);
  EXPECT_EQ(p.set.begin()->second.routes_add.at(0).gw, Ip("192.0.2.2"));
  ASSERT_EQ(p.conflicts.size(), 1u);
}

TEST(PlanReconcile, ChangedMacOrDestinationIsSetAndTheOldFdbEntryRemoved) {
  // The peer's VTEP moved to 192.0.2.9 with a new MAC; the kernel still has the old entries.
  auto p = PlanReconcile({{Key("10.5.2.0/24"), Tunnelled("10.5.2.0/24", "10.5.2.0", "0e:00:00:00:00:99", "192.0.2.9")}},
                         {{Have("10.5.2.0/24", "10.5.2.0", kProto, 7)},
                          {nl::NeighSpec{7, Ip("10.5.2.0"), "0e:00:00:00:00:02"}},
                          {nl::FdbSpec{7, "0e:00:00:00:00:02", Ip("192.0.2.2")}}},
                         kProto);
  const PeerChanges& c = p.set.at(Key("10.5.2.0/24"));
  ASSERT_EQ(c.neighs.size(), 1u);
  EXPECT_EQ(c.neighs[0].mac, "0e:00:00:00:00:99");
  ASSERT_EQ(c.fdbs.size(), 1u);
  EXPECT_EQ(c.fdbs[0].dst, Ip("192.0.2.9"));
  EXPECT_TRUE(c.routes_add.empty() && c.routes_replace.empty());
  ASSERT_EQ(p.remove.fdbs.size(), 1u);
  EXPECT_EQ(p.remove.fdbs[0].mac, "0e:00:00:00:00:02");
  EXPECT_TRUE(p.remove.neighs.empty());  // the neighbour entry is replaced in place
}

TEST(PlanReconcile, StaleNeighbourAndFdbEntriesOfOurDevicesGo) {
  auto p = PlanReconcile({},
                         {{},
                          {nl::NeighSpec{7, Ip("10.5.8.0"), "0e:00:00:00:00:08"}},
                          {nl::FdbSpec{7, "0e:00:00:00:00:08", Ip("192.0.2.8")}}},
                         kProto);
  EXPECT_EQ(p.remove.neighs.size(), 1u);
  EXPECT_EQ(p.remove.fdbs.size(), 1u);
}

TEST(PlanReconcile, AMissingFdbEntryAloneIsRepaired) {
  auto p = PlanReconcile(
      {{Key("10.5.2.0/24"), Tunnelled("10.5.2.0/24", "10.5.2.0", "0e:00:00:00:00:02", "192.0.2.2")}},
      {{Have("10.5.2.0/24", "10.5.2.0", kProto, 7)}, {nl::NeighSpec{7, Ip("10.5.2.0"), "0e:00:00:00:00:02"}}, {}},
      kProto);
  const PeerChanges& c = p.set.at(Key("10.5.2.0/24"));
  EXPECT_TRUE(c.neighs.empty());
  EXPECT_EQ(c.fdbs.size(), 1u);
  EXPECT_TRUE(p.remove.empty());
}

}  // namespace
}  // namespace netiface::agent
