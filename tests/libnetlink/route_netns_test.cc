#include "netiface/netlink/route.h"

#include <linux/rtnetlink.h>
#include <sys/socket.h>

#include <algorithm>

#include <gtest/gtest.h>

#include "netiface/netlink/addr.h"
#include "netns_fixture.h"

namespace netiface::nl {
namespace {

cni::IpNet Net(const char* s) { return cni::IpNet::Parse(s).value(); }
cni::IpAddr Ip(const char* s) { return cni::IpAddr::Parse(s).value(); }

class RouteTest : public NetnsTest {
 protected:
  void SetUp() override {
    NetnsTest::SetUp();
    if (IsSkipped()) return;
    MakePair("vr0");
    eth0_ = Index(*pod_, "eth0");
    AddAddress(*pod_, eth0_, Net("10.30.0.2/24"));
    AddAddress(*pod_, eth0_, Net("fd00:30::2/64"), /*nodad=*/true);
  }

  std::optional<RouteInfo> Find(int family, const cni::IpNet& dst, int table = 0) {
    auto routes = ListRoutes(*pod_, family, table);
    auto it = std::find_if(routes.begin(), routes.end(), [&](const RouteInfo& r) { return r.dst == dst; });
    if (it == routes.end()) return std::nullopt;
    return *it;
  }

  nlohmann::json IpRoute(const std::string& args) {
    auto j = pod_tmp_->IpJson("-d route show " + args);
    return j.size() == 1 ? j[0] : nlohmann::json();
  }

  int eth0_ = 0;
};

TEST_F(RouteTest, ScopeLinkRoute) {
  RouteSpec r{.dst = Net("10.31.0.0/16"), .ifindex = eth0_};
  EXPECT_EQ(AddRoute(*pod_, r), AddRouteOutcome::kAdded);
  auto got = Find(AF_INET, r.dst);
  ASSERT_TRUE(got);
  EXPECT_EQ(got->scope, RT_SCOPE_LINK);
  EXPECT_EQ(got->ifindex, eth0_);
  EXPECT_FALSE(got->gw);
  EXPECT_EQ(got->table, RT_TABLE_MAIN);
  EXPECT_EQ(got->protocol, RTPROT_BOOT);
  auto j = IpRoute("10.31.0.0/16");
  EXPECT_EQ(j.value("scope", ""), "link") << j.dump();
  EXPECT_EQ(j.value("dev", ""), "eth0") << j.dump();
}

TEST_F(RouteTest, ViaGatewayAddExistsReplaceDelete) {
  RouteSpec r{.dst = Net("10.32.0.0/16"), .gw = Ip("10.30.0.1")};
  EXPECT_EQ(AddRoute(*pod_, r), AddRouteOutcome::kAdded);
  EXPECT_EQ(AddRoute(*pod_, r), AddRouteOutcome::kExists);
  auto got = Find(AF_INET, r.dst);
  ASSERT_TRUE(got);
  EXPECT_EQ(got->gw, Ip("10.30.0.1"));
  EXPECT_EQ(got->ifindex, eth0_) << "the kernel picks the device from the gateway";
  EXPECT_EQ(got->scope, RT_SCOPE_UNIVERSE);

  RouteSpec moved = r;
  moved.gw = Ip("10.30.0.9");
  ReplaceRoute(*pod_, moved);
  got = Find(AF_INET, r.dst);
  ASSERT_TRUE(got);
  EXPECT_EQ(got->gw, Ip("10.30.0.9"));
  EXPECT_EQ(IpRoute("10.32.0.0/16").value("gateway", ""), "10.30.0.9");

  ReplaceRoute(*pod_, {.dst = Net("10.33.0.0/16"), .gw = Ip("10.30.0.1")});  // replace adds too
  EXPECT_TRUE(Find(AF_INET, Net("10.33.0.0/16")));

  // A gateway given to DeleteRoute must match: the route now goes via .9, not .1.
  EXPECT_FALSE(DeleteRoute(*pod_, r));
  EXPECT_TRUE(Find(AF_INET, r.dst));
  EXPECT_TRUE(DeleteRoute(*pod_, moved));
  EXPECT_FALSE(Find(AF_INET, r.dst));
  EXPECT_FALSE(DeleteRoute(*pod_, moved));
  // Only the destination given: whatever route it has goes.
  EXPECT_TRUE(DeleteRoute(*pod_, {.dst = Net("10.33.0.0/16")}));
  EXPECT_FALSE(Find(AF_INET, Net("10.33.0.0/16")));
}

TEST_F(RouteTest, UnreachableGatewayNeedsOnlink) {
  RouteSpec r{.dst = Net("10.34.0.0/16"), .gw = Ip("192.168.77.1"), .ifindex = eth0_};
  std::string msg = ExpectError(cni::kNetlink, [&] { AddRoute(*pod_, r); });
  EXPECT_NE(msg.find("10.34.0.0/16"), std::string::npos) << msg;
  EXPECT_NE(msg.find("Network is unreachable"), std::string::npos) << "the kernel's errno, not libnl's" << msg;
  r.onlink = true;
  EXPECT_EQ(AddRoute(*pod_, r), AddRouteOutcome::kAdded);
  auto got = Find(AF_INET, r.dst);
  ASSERT_TRUE(got);
  EXPECT_EQ(got->gw, Ip("192.168.77.1"));
  auto j = IpRoute("10.34.0.0/16");
  auto flags = j.value("flags", nlohmann::json::array());
  EXPECT_NE(std::find(flags.begin(), flags.end(), "onlink"), flags.end()) << j.dump();
  EXPECT_TRUE(DeleteRoute(*pod_, r));
}

TEST_F(RouteTest, SourcePriorityMetricsAndHostBits) {
  RouteSpec r{.dst = Net("10.35.1.1/16"),  // host bits: the route is for the network
              .gw = Ip("10.30.0.1"),
              .src = Ip("10.30.0.2"),
              .priority = 300,
              .mtu = 1400,
              .advmss = 1360};
  EXPECT_EQ(AddRoute(*pod_, r), AddRouteOutcome::kAdded);
  auto got = Find(AF_INET, Net("10.35.0.0/16"));
  ASSERT_TRUE(got);
  EXPECT_EQ(got->priority, 300);
  auto j = IpRoute("10.35.0.0/16");
  EXPECT_EQ(j.value("prefsrc", ""), "10.30.0.2") << j.dump();
  EXPECT_EQ(j.value("metric", 0), 300) << j.dump();
  ASSERT_TRUE(j.contains("metrics")) << j.dump();
  EXPECT_EQ(j["metrics"][0].value("mtu", 0), 1400) << j.dump();
  EXPECT_EQ(j["metrics"][0].value("advmss", 0), 1360) << j.dump();
  // Same destination, another metric: a second route.
  RouteSpec other = r;
  other.priority = 400;
  EXPECT_EQ(AddRoute(*pod_, other), AddRouteOutcome::kAdded);
  EXPECT_TRUE(DeleteRoute(*pod_, other));
  EXPECT_TRUE(Find(AF_INET, Net("10.35.0.0/16")));
}

TEST_F(RouteTest, DefaultRouteAndTables) {
  RouteSpec def{.dst = Net("0.0.0.0/0"), .gw = Ip("10.30.0.1")};
  EXPECT_EQ(AddRoute(*pod_, def), AddRouteOutcome::kAdded);
  auto got = Find(AF_INET, Net("0.0.0.0/0"));
  ASSERT_TRUE(got);
  EXPECT_EQ(got->dst.prefix_len(), 0);

  RouteSpec in_table{.dst = Net("10.36.0.0/16"), .gw = Ip("10.30.0.1"), .table = 100};
  EXPECT_EQ(AddRoute(*pod_, in_table), AddRouteOutcome::kAdded);
  EXPECT_FALSE(Find(AF_INET, in_table.dst));
  auto t = Find(AF_INET, in_table.dst, 100);
  ASSERT_TRUE(t);
  EXPECT_EQ(t->table, 100);
  EXPECT_EQ(pod_tmp_->IpJson("route show table 100").size(), 1u);
  // Local-table routes and other families are filtered out.
  for (const auto& r : ListRoutes(*pod_, AF_INET)) {
    EXPECT_EQ(r.dst.family(), AF_INET);
    EXPECT_EQ(r.table, RT_TABLE_MAIN);
  }
  EXPECT_TRUE(DeleteRoute(*pod_, in_table));
  EXPECT_FALSE(Find(AF_INET, in_table.dst, 100));
}

TEST_F(RouteTest, Ipv6Routes) {
  RouteSpec r{.dst = Net("fd00:31::/64"), .gw = Ip("fd00:30::1")};
  EXPECT_EQ(AddRoute(*pod_, r), AddRouteOutcome::kAdded);
  EXPECT_EQ(AddRoute(*pod_, r), AddRouteOutcome::kExists);
  auto got = Find(AF_INET6, r.dst);
  ASSERT_TRUE(got);
  EXPECT_EQ(got->gw, Ip("fd00:30::1"));
  EXPECT_EQ(got->ifindex, eth0_);
  EXPECT_FALSE(Find(AF_INET, r.dst));
  auto both = ListRoutes(*pod_, AF_UNSPEC);
  EXPECT_TRUE(std::any_of(both.begin(), both.end(), [&](const RouteInfo& x) { return x.dst == r.dst; }));
  EXPECT_TRUE(std::any_of(both.begin(), both.end(), [](const RouteInfo& x) { return x.dst.family() == AF_INET; }));

  RouteSpec link{.dst = Net("fd00:32::/64"), .ifindex = eth0_};
  EXPECT_EQ(AddRoute(*pod_, link), AddRouteOutcome::kAdded);
  EXPECT_TRUE(Find(AF_INET6, link.dst));
  EXPECT_TRUE(DeleteRoute(*pod_, r));
  EXPECT_FALSE(DeleteRoute(*pod_, r));
  EXPECT_TRUE(DeleteRoute(*pod_, link));
}

TEST_F(RouteTest, ProtocolOnAddAndDelete) {
  RouteSpec r{.dst = Net("10.33.0.0/24"), .gw = Ip("10.30.0.1"), .ifindex = eth0_, .protocol = 78};
  EXPECT_EQ(AddRoute(*pod_, r), AddRouteOutcome::kAdded);
  auto got = Find(AF_INET, r.dst);
  ASSERT_TRUE(got);
  EXPECT_EQ(got->protocol, 78);
  EXPECT_EQ(IpRoute("10.33.0.0/24").value("protocol", ""), "78");

  RouteSpec other = r;
  other.protocol = 79;
  EXPECT_FALSE(DeleteRoute(*pod_, other));
  EXPECT_TRUE(Find(AF_INET, r.dst));
  EXPECT_TRUE(DeleteRoute(*pod_, r));
  EXPECT_FALSE(Find(AF_INET, r.dst));

  RouteSpec v6{.dst = Net("fd00:33::/64"), .gw = Ip("fd00:30::1"), .protocol = 78};
  EXPECT_EQ(AddRoute(*pod_, v6), AddRouteOutcome::kAdded);
  EXPECT_EQ(Find(AF_INET6, v6.dst)->protocol, 78);
  other = v6;
  other.protocol = RTPROT_BOOT;
  EXPECT_FALSE(DeleteRoute(*pod_, other));
  EXPECT_TRUE(DeleteRoute(*pod_, v6));
  EXPECT_FALSE(Find(AF_INET6, v6.dst));

  RouteSpec boot{.dst = Net("10.34.0.0/24"), .gw = Ip("10.30.0.1")};
  EXPECT_EQ(AddRoute(*pod_, boot), AddRouteOutcome::kAdded);
  EXPECT_EQ(Find(AF_INET, boot.dst)->protocol, RTPROT_BOOT);
  EXPECT_TRUE(DeleteRoute(*pod_, boot));  // protocol 0: any
}

}  // namespace
}  // namespace netiface::nl
