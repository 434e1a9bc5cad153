#include "netiface/bridge/plan.h"

#include <sys/socket.h>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "netiface/cni/error.h"

namespace netiface::bridge {
namespace {

using nlohmann::json;

cni::IpNet Net(const char* s) { return *cni::IpNet::Parse(s); }
cni::IpAddr Ip(const char* s) { return *cni::IpAddr::Parse(s); }

Config Cfg(json extra = json::object()) {
  json j = {{"cniVersion", "1.0.0"}, {"name", "net1"}, {"type", "bridge"}, {"ipam", {{"type", "host-local"}}}};
  j.update(extra);
  return ParseConfig(cni::ParseNetConf(j.dump()));
}

cni::Result Ipam(const char* j) { return cni::ParseResult(json::parse(j), "1.0.0"); }

TEST(MakePlanTest, GatewayFromIpamGoesOnTheBridge) {
  Plan p = MakePlan(Cfg({{"isGateway", true}}),
                    Ipam(R"({"ips":[{"address":"10.1.0.5/24","gateway":"10.1.0.254"}],"routes":[]})"));
  EXPECT_EQ(p.bridge_addrs, std::vector<cni::IpNet>{Net("10.1.0.254/24")});
  EXPECT_TRUE(p.forward_v4);
  EXPECT_FALSE(p.forward_v6);
  EXPECT_TRUE(p.has_v4);
  EXPECT_FALSE(p.has_v6);
  ASSERT_EQ(p.result.ips.size(), 1u);
  EXPECT_EQ(p.result.ips[0].interface, kContainerIfaceIndex);
  EXPECT_EQ(p.container_addrs, std::vector<cni::IpNet>{Net("10.1.0.5/24")});
  EXPECT_TRUE(p.result.routes.empty());
}

TEST(MakePlanTest, MissingGatewayIsTheSubnetsFirstAddress) {
  Plan p = MakePlan(Cfg({{"isGateway", true}}), Ipam(R"({"ips":[{"address":"10.1.0.5/24"}]})"));
  EXPECT_EQ(p.result.ips[0].gateway, Ip("10.1.0.1"));
  EXPECT_EQ(p.bridge_addrs, std::vector<cni::IpNet>{Net("10.1.0.1/24")});
}

TEST(MakePlanTest, WithoutIsGatewayNothingGoesOnTheBridge) {
  Plan p = MakePlan(Cfg(), Ipam(R"({"ips":[{"address":"10.1.0.5/24"}]})"));
  EXPECT_TRUE(p.bridge_addrs.empty());
  EXPECT_FALSE(p.forward_v4);
  EXPECT_FALSE(p.result.ips[0].gateway);
}

TEST(MakePlanTest, DefaultGatewayAddsADefaultRoutePerFamily) {
  Plan p = MakePlan(Cfg({{"isDefaultGateway", true}}),
                    Ipam(R"({"ips":[{"address":"10.1.0.5/24","gateway":"10.1.0.1"},{"address":"fd00::5/64"}],
                             "routes":[{"dst":"10.0.0.0/8"}]})"));
  std::vector<cni::Route> want = {cni::Route{Net("10.0.0.0/8")}, cni::Route{Net("0.0.0.0/0"), Ip("10.1.0.1")},
                                  cni::Route{Net("::/0"), Ip("fd00::1")}};
  EXPECT_EQ(p.result.routes, want);
  EXPECT_EQ(p.bridge_addrs, (std::vector<cni::IpNet>{Net("10.1.0.1/24"), Net("fd00::1/64")}));
  EXPECT_TRUE(p.forward_v4);
  EXPECT_TRUE(p.forward_v6);
  EXPECT_TRUE(p.has_v6);
}

TEST(MakePlanTest, AnExistingDefaultRouteIsKept) {
  Plan p = MakePlan(Cfg({{"isDefaultGateway", true}}),
                    Ipam(R"({"ips":[{"address":"10.1.0.5/24"}],"routes":[{"dst":"0.0.0.0/0"}]})"));
  ASSERT_EQ(p.result.routes.size(), 1u);
  EXPECT_FALSE(p.result.routes[0].gw);
  ASSERT_EQ(p.container_routes.size(), 1u);
  EXPECT_EQ(p.container_routes[0].gw, Ip("10.1.0.1"));  // installed via the family's gateway
}

TEST(MakePlanTest, RoutesWithoutGatewayUseTheFamilysGateway) {
  Plan p = MakePlan(Cfg({{"isGateway", true}}),
                    Ipam(R"({"ips":[{"address":"10.1.0.5/24"},{"address":"fd00::5/64","gateway":"fd00::1"}],
                             "routes":[{"dst":"10.244.0.0/16"},{"dst":"fd42::/56"},
                                       {"dst":"192.168.1.7/24","gw":"10.1.0.9"}]})"));
  ASSERT_EQ(p.container_routes.size(), 3u);
  EXPECT_EQ(p.container_routes[0].dst, Net("10.244.0.0/16"));
  EXPECT_EQ(p.container_routes[0].gw, Ip("10.1.0.1"));
  EXPECT_EQ(p.container_routes[1].gw, Ip("fd00::1"));
  EXPECT_EQ(p.container_routes[2].dst, Net("192.168.1.0/24"));  // as a network
  EXPECT_EQ(p.container_routes[2].gw, Ip("10.1.0.9"));
  // The result keeps the routes as IPAM gave them.
  EXPECT_FALSE(p.result.routes[0].gw);
}

TEST(MakePlanTest, RouteWithoutAnyGatewayGoesOutOfTheLink) {
  Plan p = MakePlan(Cfg(), Ipam(R"({"ips":[{"address":"10.1.0.5/24"}],"routes":[{"dst":"10.9.0.0/16"}]})"));
  ASSERT_EQ(p.container_routes.size(), 1u);
  EXPECT_FALSE(p.container_routes[0].gw);
}

TEST(MakePlanTest, Route11AttributesAreCarried) {
  Plan p = MakePlan(Cfg(), cni::ParseResult(json::parse(R"({"ips":[{"address":"10.1.0.5/24","gateway":"10.1.0.1"}],
      "routes":[{"dst":"10.9.0.0/16","mtu":1400,"advmss":1360,"priority":20,"table":100}]})"),
                                            "1.1.0"));
  const auto& r = p.container_routes.at(0);
  EXPECT_EQ(r.mtu, 1400);
  EXPECT_EQ(r.advmss, 1360);
  EXPECT_EQ(r.priority, 20);
  EXPECT_EQ(r.table, 100);
}

TEST(MakePlanTest, ConfigDnsReplacesIpamDns) {
  auto ipam = Ipam(R"({"ips":[{"address":"10.1.0.5/24"}],"dns":{"nameservers":["1.1.1.1"]}})");
  EXPECT_EQ(MakePlan(Cfg(), ipam).result.dns.nameservers, std::vector<std::string>{"1.1.1.1"});
  Plan p = MakePlan(Cfg({{"dns", {{"nameservers", {"10.0.0.10"}}, {"search", {"svc.local"}}}}}), ipam);
  EXPECT_EQ(p.result.dns.nameservers, std::vector<std::string>{"10.0.0.10"});
  EXPECT_EQ(p.result.dns.search, std::vector<std::string>{"svc.local"});
}

TEST(MakePlanTest, SharedGatewayIsListedOnce) {
  Plan p =
      MakePlan(Cfg({{"isGateway", true}}), Ipam(R"({"ips":[{"address":"10.1.0.5/24"},{"address":"10.1.0.6/24"}]})"));
  EXPECT_EQ(p.bridge_addrs, std::vector<cni::IpNet>{Net("10.1.0.1/24")});
}

TEST(PlanBridgeAddrsTest, AlreadyPresentIsKept) {
  auto ch = PlanBridgeAddrs("cni0", {Net("10.1.0.1/24"), Net("fe80::1/64")}, {Net("10.1.0.1/24")}, false);
  EXPECT_TRUE(ch.add.empty());
  EXPECT_TRUE(ch.remove.empty());
}

TEST(PlanBridgeAddrsTest, EmptyBridgeGetsTheGateways) {
  auto ch = PlanBridgeAddrs("cni0", {Net("fe80::1/64")}, {Net("10.1.0.1/24"), Net("fd00::1/64")}, false);
  EXPECT_EQ(ch.add, (std::vector<cni::IpNet>{Net("10.1.0.1/24"), Net("fd00::1/64")}));
  EXPECT_TRUE(ch.remove.empty());
}

TEST(PlanBridgeAddrsTest, AnotherIpv4AddressConflicts) {
  try {
    PlanBridgeAddrs("cni0", {Net("10.9.0.1/24")}, {Net("10.1.0.1/24")}, false);
    FAIL() << "no conflict reported";
  } catch (const cni::Error& e) {
    EXPECT_EQ(e.code(), cni::kInvalidConfig);
    EXPECT_THAT(e.msg(), ::testing::HasSubstr("cni0"));
    EXPECT_THAT(e.details(), ::testing::HasSubstr("10.9.0.1/24"));
  }
  auto ch = PlanBridgeAddrs("cni0", {Net("10.9.0.1/24")}, {Net("10.1.0.1/24")}, true);
  EXPECT_EQ(ch.remove, std::vector<cni::IpNet>{Net("10.9.0.1/24")});
  EXPECT_EQ(ch.add, std::vector<cni::IpNet>{Net("10.1.0.1/24")});
}

TEST(PlanBridgeAddrsTest, Ipv6SubnetsMayCoexistUnlessTheyOverlap) {
  auto ch = PlanBridgeAddrs("cni0", {Net("fd01::1/64")}, {Net("fd00::1/64")}, false);
  EXPECT_EQ(ch.add, std::vector<cni::IpNet>{Net("fd00::1/64")});
  EXPECT_THROW(PlanBridgeAddrs("cni0", {Net("fd00::9/64")}, {Net("fd00::1/64")}, false), cni::Error);
}

TEST(MissingTest, Addresses) {
  EXPECT_TRUE(MissingAddresses({Net("10.1.0.5/24")}, {Net("fe80::1/64"), Net("10.1.0.5/24")}).empty());
  EXPECT_EQ(MissingAddresses({Net("10.1.0.5/24")}, {Net("10.1.0.5/16")}).size(), 1u);  // prefix matters
}

TEST(MissingTest, RoutesWithoutGatewayPass) {
  FamilyGateways gws{Ip("10.1.0.1"), std::nullopt};
  std::vector<nl::RouteInfo> actual = {
      {Net("10.1.0.0/24"), std::nullopt, 2},
      {Net("10.244.0.0/16"), Ip("10.1.0.1"), 2},
      {Net("0.0.0.0/0"), Ip("10.1.0.1"), 2},
  };
  std::vector<cni::Route> want = {cni::Route{Net("10.244.0.0/16")}, cni::Route{Net("0.0.0.0/0"), Ip("10.1.0.1")},
                                  cni::Route{Net("10.1.0.0/24")}};
  EXPECT_TRUE(MissingRoutes(want, gws, actual).empty());
  // A gateway-less result route must not match a route via some other gateway.
  EXPECT_EQ(MissingRoutes({cni::Route{Net("10.244.0.0/16")}}, gws, {{Net("10.244.0.0/16"), Ip("10.1.0.7"), 2}}).size(),
            1u);
  // A named gateway must match exactly.
  EXPECT_EQ(MissingRoutes({cni::Route{Net("0.0.0.0/0"), Ip("10.1.0.9")}}, gws, actual).size(), 1u);
  EXPECT_EQ(MissingRoutes({cni::Route{Net("10.99.0.0/16")}}, gws, actual).size(), 1u);
}

}  // namespace
}  // namespace netiface::bridge
