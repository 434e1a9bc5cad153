#include "netiface/veth_workload/plan.h"

#include <gtest/gtest.h>

#include "netiface/cni/error.h"
#include "test_helpers.h"

namespace netiface::veth_workload {
namespace {

using nlohmann::json;
using test::BaseConf;

cni::IpNet Net(const std::string& s) { return *cni::IpNet::Parse(s); }
cni::IpAddr Ip(const std::string& s) { return *cni::IpAddr::Parse(s); }

cni::Result Ipam(std::vector<std::string> addrs, std::vector<std::string> routes = {}) {
  cni::Result r;
  for (const auto& a : addrs) r.ips.push_back({.address = Net(a)});
  for (const auto& d : routes) r.routes.push_back({.dst = Net(d)});
  return r;
}

Identity Id() {
  return {.node = "node1", .pod_namespace = "namespace", .pod = "podname", .container_id = "ctr1", .ifname = "eth0"};
}

Plan MakeFrom(const json& conf, const cni::Result& ipam, const AddRequest& req = {}) {
  Config c = ParseConfig(cni::ParseNetConf(conf.dump()));
  return MakePlan(c, Id(), req, ipam, "/run/netns/pod");
}

std::vector<PlannedRoute> Routes(std::vector<std::pair<std::string, std::string>> spec) {
  std::vector<PlannedRoute> out;
  for (const auto& [dst, gw] : spec) out.push_back({Net(dst), gw.empty() ? std::nullopt : std::optional(Ip(gw))});
  return out;
}

TEST(PlanTest, Ipv4) {
  Plan p = MakeFrom(BaseConf(), Ipam({"10.0.0.2/24"}));
  EXPECT_EQ(p.host_veth, "cali82111e10a96");
  EXPECT_EQ(p.endpoint_name, "node1-k8s-podname-eth0");
  EXPECT_EQ(p.addresses, std::vector<cni::IpNet>{Net("10.0.0.2/32")});
  EXPECT_EQ(p.subnets, std::vector<cni::IpNet>{Net("10.0.0.2/24")});
  EXPECT_TRUE(p.has_v4);
  EXPECT_FALSE(p.has_v6);
  EXPECT_EQ(p.container_routes, Routes({{"169.254.1.1/32", ""}, {"0.0.0.0/0", "169.254.1.1"}}));
  EXPECT_EQ(p.container_sysctls, (std::vector<Sysctl>{{"net/ipv4/ip_forward", "0"}}));
  // Known to have no IPv6 before the links go up: nothing of IPv6 in the container.
  EXPECT_TRUE(p.container_link_sysctls.empty());
  EXPECT_EQ(p.host_sysctls, (std::vector<Sysctl>{
                                {"net/ipv4/conf/cali82111e10a96/proxy_arp", "1"},
                                {"net/ipv4/neigh/cali82111e10a96/proxy_delay", "0"},
                                {"net/ipv4/conf/cali82111e10a96/forwarding", "1"},
                                {"net/ipv4/conf/cali82111e10a96/route_localnet", "1"},
                                {"net/ipv6/conf/cali82111e10a96/accept_ra", "0", true},
                            }));
  EXPECT_EQ(p.host_routes, std::vector<cni::IpNet>{Net("10.0.0.2/32")});
  EXPECT_FALSE(p.nat);
  EXPECT_EQ(p.mtu, 1500);
}

TEST(PlanTest, Ipv6) {
  Plan p = MakeFrom(BaseConf(), Ipam({"fd00::2/64"}));
  EXPECT_EQ(p.addresses, std::vector<cni::IpNet>{Net("fd00::2/128")});
  EXPECT_FALSE(p.has_v4);
  EXPECT_TRUE(p.has_v6);
  EXPECT_EQ(p.container_routes, Routes({{"::/0", "fe80::ecee:eeff:feee:eeee"}}));
  // DAD off before the links go up (written while IPAM runs), the rest once the family is known.
  EXPECT_EQ(p.container_link_sysctls, (std::vector<Sysctl>{{"net/ipv6/conf/eth0/accept_dad", "0", true}}));
  EXPECT_EQ(p.container_sysctls,
            (std::vector<Sysctl>{{"net/ipv6/conf/eth0/disable_ipv6", "0"}, {"net/ipv6/conf/all/forwarding", "0"}}));
  const std::string k = "net/ipv6/conf/cali82111e10a96/";
  EXPECT_EQ(p.host_link_sysctls,
            (std::vector<Sysctl>{
                {k + "accept_dad", "0", true}, {k + "addr_gen_mode", "0", true}, {k + "accept_ra", "0", true}}));
  EXPECT_EQ(p.host_sysctls, (std::vector<Sysctl>{{k + "disable_ipv6", "0"},
                                                 {k + "accept_dad", "0"},
                                                 {k + "addr_gen_mode", "0"},
                                                 {k + "proxy_ndp", "1"},
                                                 {k + "forwarding", "1"},
                                                 {k + "accept_ra", "0"}}));
  EXPECT_EQ(p.host_routes, std::vector<cni::IpNet>{Net("fd00::2/128")});
}

TEST(PlanTest, LinkSettingsWhileTheAddressesAreUnknown) {
  Config c = ParseConfig(cni::ParseNetConf(BaseConf().dump()));
  const std::vector<Sysctl> dad_off{{"net/ipv6/conf/eth0/accept_dad", "0", true}};
  // IPAM still runs (exec'd): IPv6 may come, so DAD goes off before the links go up.
  EXPECT_EQ(MakeLinkPlan(c, Id(), {}, "/run/netns/pod").container_link_sysctls, dad_off);
  cni::Result v4 = Ipam({"10.0.0.2/24"}), dual = Ipam({"10.0.0.2/24", "fd00::2/64"});
  EXPECT_TRUE(MakeLinkPlan(c, Id(), {}, "/run/netns/pod", &v4).container_link_sysctls.empty());
  EXPECT_EQ(MakeLinkPlan(c, Id(), {}, "/run/netns/pod", &dual).container_link_sysctls, dad_off);
  // The host veth's are the same either way (accept_ra=0 matters to an IPv4 workload too).
  EXPECT_EQ(MakeLinkPlan(c, Id(), {}, "/run/netns/pod", &v4).host_link_sysctls,
            MakeLinkPlan(c, Id(), {}, "/run/netns/pod").host_link_sysctls);
}

TEST(PlanTest, DualStackWithIpamRoutes) {
  cni::Result ipam = Ipam({"10.0.0.2/24", "fd00::2/64"}, {"10.1.0.0/16", "fd00:1::/64", "10.9.9.9/8", "10.1.0.0/16"});
  Plan p = MakeFrom(BaseConf(), ipam);
  EXPECT_EQ(p.container_routes, Routes({{"169.254.1.1/32", ""},
                                        {"10.1.0.0/16", "169.254.1.1"},
                                        {"fd00:1::/64", "fe80::ecee:eeff:feee:eeee"},
                                        {"10.0.0.0/8", "169.254.1.1"}}));
  json conf = BaseConf();
  conf["includeDefaultRoutes"] = true;
  p = MakeFrom(conf, ipam);
  EXPECT_EQ(p.container_routes, Routes({{"169.254.1.1/32", ""},
                                        {"10.1.0.0/16", "169.254.1.1"},
                                        {"fd00:1::/64", "fe80::ecee:eeff:feee:eeee"},
                                        {"10.0.0.0/8", "169.254.1.1"},
                                        {"0.0.0.0/0", "169.254.1.1"},
                                        {"::/0", "fe80::ecee:eeff:feee:eeee"}}));
  EXPECT_EQ(p.host_routes, (std::vector<cni::IpNet>{Net("10.0.0.2/32"), Net("fd00::2/128")}));
}

TEST(PlanTest, RoutesOfAMissingFamilyAndTheGatewayItselfAreSkipped) {
  Plan p = MakeFrom(BaseConf(), Ipam({"10.0.0.2/24"}, {"fd00:1::/64", "169.254.1.1/32", "10.2.0.0/16"}));
  EXPECT_EQ(p.container_routes, Routes({{"169.254.1.1/32", ""}, {"10.2.0.0/16", "169.254.1.1"}}));
}

TEST(PlanTest, ForwardingAllowed) {
  json conf = BaseConf();
  conf["allowIpForwarding"] = true;
  Plan p = MakeFrom(conf, Ipam({"10.0.0.2/24", "fd00::2/64"}));
  EXPECT_EQ(p.container_sysctls, (std::vector<Sysctl>{{"net/ipv6/conf/eth0/disable_ipv6", "0"},
                                                      {"net/ipv6/conf/all/forwarding", "1"},
                                                      {"net/ipv4/ip_forward", "1"}}));
}

TEST(PlanTest, DuplicateAddressesCollapse) {
  Plan p = MakeFrom(BaseConf(), Ipam({"10.0.0.2/24", "10.0.0.2/24", "10.0.1.2/24"}));
  EXPECT_EQ(p.addresses, (std::vector<cni::IpNet>{Net("10.0.0.2/32"), Net("10.0.1.2/32")}));
}

TEST(PlanTest, IpMasqAndFloatingIps) {
  json conf = BaseConf();
  conf["ipMasq"] = true;
  AddRequest req;
  req.floating_ips = {Ip("192.0.2.10"), Ip("2001:db8::10")};
  Plan p = MakeFrom(conf, Ipam({"10.0.0.2/24", "fd00::2/64"}), req);
  EXPECT_TRUE(p.nat);
  EXPECT_EQ(p.nat_spec.tag.network, "vwnet");
  EXPECT_EQ(p.nat_spec.tag.container_id, "ctr1");
  EXPECT_EQ(p.nat_spec.tag.ifname, "eth0");
  EXPECT_EQ(p.nat_spec.masquerade, (std::vector<cni::IpNet>{Net("10.0.0.2/24"), Net("fd00::2/64")}));
  ASSERT_EQ(p.nat_spec.floating_ips.size(), 2u);
  EXPECT_EQ(p.nat_spec.floating_ips[0], std::make_pair(Ip("192.0.2.10"), Ip("10.0.0.2")));
  EXPECT_EQ(p.nat_spec.floating_ips[1], std::make_pair(Ip("2001:db8::10"), Ip("fd00::2")));

  conf["ipMasq"] = false;
  p = MakeFrom(conf, Ipam({"10.0.0.2/24"}), AddRequest{.floating_ips = {Ip("192.0.2.10")}});
  EXPECT_TRUE(p.nat);
  EXPECT_TRUE(p.nat_spec.masquerade.empty());
}

TEST(PlanTest, Errors) {
  try {
    MakeFrom(BaseConf(), Ipam({}));
    ADD_FAILURE() << "no error without addresses";
  } catch (const cni::Error& e) {
    EXPECT_EQ(e.code(), cni::kInvalidConfig);
  }
  json conf = BaseConf();
  conf["mtu"] = 1200;
  EXPECT_NO_THROW(MakeFrom(conf, Ipam({"10.0.0.2/24"})));
  try {
    MakeFrom(conf, Ipam({"fd00::2/64"}));
    ADD_FAILURE() << "no error for an IPv6 MTU below 1280";
  } catch (const cni::Error& e) {
    EXPECT_EQ(e.code(), cni::kInvalidConfig);
    EXPECT_NE(std::string(e.what()).find("mtu"), std::string::npos);
  }
  try {
    MakeFrom(BaseConf(), Ipam({"10.0.0.2/24"}), AddRequest{.floating_ips = {Ip("2001:db8::1")}});
    ADD_FAILURE() << "no error for a floating IP of a family the pod lacks";
  } catch (const cni::Error& e) {
    EXPECT_EQ(e.code(), cni::kInvalidConfig);
  }
}

TEST(PlanTest, DnsFromConfOverridesIpam) {
  cni::Result ipam = Ipam({"10.0.0.2/24"});
  ipam.dns.nameservers = {"10.0.0.53"};
  EXPECT_EQ(MakeFrom(BaseConf(), ipam).dns.nameservers, std::vector<std::string>{"10.0.0.53"});
  json conf = BaseConf();
  conf["dns"] = {{"nameservers", {"1.1.1.1"}}, {"search", {"svc"}}};
  Plan p = MakeFrom(conf, ipam);
  EXPECT_EQ(p.dns.nameservers, std::vector<std::string>{"1.1.1.1"});
  EXPECT_EQ(p.dns.search, std::vector<std::string>{"svc"});
}

TEST(ResultTest, ShapeAtEveryVersion) {
  Plan p = MakeFrom(BaseConf(), Ipam({"10.0.0.2/24", "fd00::2/64"}, {"10.1.0.0/16"}));
  cni::Result r = BuildResult(p, "0a:58:0a:00:00:02");
  ASSERT_EQ(r.interfaces.size(), 2u);
  EXPECT_EQ(r.interfaces[0].name, "cali82111e10a96");
  EXPECT_EQ(r.interfaces[0].mac, "ee:ee:ee:ee:ee:ee");
  EXPECT_EQ(r.interfaces[0].sandbox, "");
  EXPECT_EQ(r.interfaces[1].name, "eth0");
  EXPECT_EQ(r.interfaces[1].mac, "0a:58:0a:00:00:02");
  EXPECT_EQ(r.interfaces[1].sandbox, "/run/netns/pod");
  ASSERT_EQ(r.ips.size(), 2u);
  EXPECT_EQ(r.ips[0].interface, 1);
  EXPECT_EQ(r.ips[0].address, Net("10.0.0.2/32"));
  EXPECT_EQ(r.ips[0].gateway, Ip("169.254.1.1"));
  EXPECT_EQ(r.ips[1].address, Net("fd00::2/128"));
  EXPECT_EQ(r.ips[1].gateway, Ip("fe80::ecee:eeff:feee:eeee"));
  ASSERT_EQ(r.routes.size(), 1u);  // the scope-link route to the gateway is not a result route
  EXPECT_EQ(r.routes[0].dst, Net("10.1.0.0/16"));
  EXPECT_EQ(r.routes[0].gw, Ip("169.254.1.1"));

  json v11 = cni::ResultToJson(r, "1.1.0");
  EXPECT_EQ(v11["ips"][0]["address"], "10.0.0.2/32");
  EXPECT_EQ(v11["interfaces"][1]["sandbox"], "/run/netns/pod");
  json v040 = cni::ResultToJson(r, "0.4.0");
  EXPECT_EQ(v040["ips"][1]["version"], "6");
  json v020 = cni::ResultToJson(r, "0.2.0");
  EXPECT_EQ(v020["ip4"]["ip"], "10.0.0.2/32");
  EXPECT_EQ(v020["ip4"]["gateway"], "169.254.1.1");
  EXPECT_EQ(v020["ip6"]["ip"], "fd00::2/128");
}

TEST(RecordTest, FromPlan) {
  json conf = BaseConf();
  conf["ipMasq"] = true;
  Plan p = MakeFrom(conf, Ipam({"10.0.0.2/24"}), AddRequest{.floating_ips = {Ip("192.0.2.10")}});
  EndpointRecord r = BuildRecord(p, "0a:58:0a:00:00:02");
  EXPECT_EQ(r.name, "node1-k8s-podname-eth0");
  EXPECT_EQ(r.network, "vwnet");
  EXPECT_EQ(r.node, "node1");
  EXPECT_EQ(r.orchestrator, "k8s");
  EXPECT_EQ(r.pod_namespace, "namespace");
  EXPECT_EQ(r.pod, "podname");
  EXPECT_EQ(r.container_id, "ctr1");
  EXPECT_EQ(r.ifname, "eth0");
  EXPECT_EQ(r.netns, "/run/netns/pod");
  EXPECT_EQ(r.host_veth, "cali82111e10a96");
  EXPECT_EQ(r.container_mac, "0a:58:0a:00:00:02");
  EXPECT_EQ(r.ip_networks, std::vector<cni::IpNet>{Net("10.0.0.2/32")});
  EXPECT_EQ(r.masquerade, std::vector<cni::IpNet>{Net("10.0.0.2/24")});
  ASSERT_EQ(r.ip_nats.size(), 1u);
  EXPECT_EQ(r.Folder(), "namespace");
  nat::Spec s = NatSpecOf(r);
  EXPECT_EQ(s.tag.container_id, "ctr1");
  EXPECT_EQ(s.masquerade, r.masquerade);
  EXPECT_EQ(s.floating_ips, r.ip_nats);
}

TEST(RecordTest, NoIpamResult) {
  cni::Result r = NoIpamResult({Net("10.9.0.5/32"), Net("fd00::5/64")});
  ASSERT_EQ(r.ips.size(), 2u);
  EXPECT_TRUE(r.routes.empty());
  Plan p = MakeFrom(BaseConf(), r);
  EXPECT_EQ(p.addresses, (std::vector<cni::IpNet>{Net("10.9.0.5/32"), Net("fd00::5/128")}));
  EXPECT_EQ(p.container_routes,
            Routes({{"169.254.1.1/32", ""}, {"0.0.0.0/0", "169.254.1.1"}, {"::/0", "fe80::ecee:eeff:feee:eeee"}}));
}

}  // namespace
}  // namespace netiface::veth_workload
