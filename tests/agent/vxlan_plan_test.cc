#include "netiface/agent/vxlan_plan.h"

#include <set>

#include <gtest/gtest.h>

namespace netiface::agent {
namespace {

Lease Peer(const std::string& v4, const std::string& ip, nlohmann::json data, std::string type = "vxlan") {
  Lease l;
  l.subnet.v4 = *cni::IpNet::Parse(v4);
  l.attrs.public_ip = cni::IpAddr::Parse(ip);
  l.attrs.backend_type = std::move(type);
  l.attrs.backend_data = std::move(data);
  return l;
}

VxlanLocal Local(bool direct) {
  VxlanLocal l;
  l.vni = 1;
  l.device_ifindex = 7;
  l.uplink_ifindex = 2;
  l.uplink_net = *cni::IpNet::Parse("192.0.2.1/24");
  l.direct_routing = direct;
  return l;
}

TEST(VxlanConfig, FlannelDefaultsAndKeys) {
  VxlanConfig d = ParseVxlanConfig(nlohmann::json::parse(R"({"Type":"vxlan"})"));
  EXPECT_EQ(d.vni, 1u);
  EXPECT_EQ(d.port, 0);
  EXPECT_FALSE(d.gbp);
  EXPECT_FALSE(d.direct_routing);
  EXPECT_EQ(d.mtu, 0);
  VxlanConfig c = ParseVxlanConfig(
      nlohmann::json::parse(R"({"Type":"vxlan","vni":4096,"PORT":4789,"GBP":true,"directRouting":true,"MTU":1400})"));
  EXPECT_EQ(c.vni, 4096u);
  EXPECT_EQ(c.port, 4789);
  EXPECT_TRUE(c.gbp);
  EXPECT_TRUE(c.direct_routing);
  EXPECT_EQ(c.mtu, 1400);
}

TEST(VxlanConfig, BadValuesNameKeyAndValue) {
  struct Case {
    const char* json;
    const char* message;
  };
  for (const Case& k :
       {Case{R"({"VNI":16777216})", "Backend.VNI 16777216"}, Case{R"({"VNI":-1})", "Backend.VNI -1"},
        Case{R"({"Port":70000})", "Backend.Port 70000"}, Case{R"({"Port":"8472"})", "Backend.Port \"8472\""},
        Case{R"({"GBP":"yes"})", "Backend.GBP \"yes\""}, Case{R"({"MTU":40})", "Backend.MTU 40"}}) {
    try {
      ParseVxlanConfig(nlohmann::json::parse(k.json));
      ADD_FAILURE() << k.json << " accepted";
    } catch (const ConfigError& e) {
      EXPECT_NE(std::string(e.what()).find(k.message), std::string::npos) << e.what();
    }
  }
}

TEST(VxlanPlan, NamesAndMtu) {
  EXPECT_EQ(VxlanDeviceName(1, false), "flannel.1");
  EXPECT_EQ(VxlanDeviceName(42, true), "flannel-v6.42");
  EXPECT_EQ(VxlanMtu(VxlanConfig{}, 1500, false), 1450);
  EXPECT_EQ(VxlanMtu(VxlanConfig{}, 1500, true), 1430);
  VxlanConfig c;
  c.mtu = 1300;
  EXPECT_EQ(VxlanMtu(c, 1500, false), 1300);
}

TEST(VxlanPlan, StableVtepMac) {
  const auto ip1 = *cni::IpAddr::Parse("192.0.2.1");
  const auto ip2 = *cni::IpAddr::Parse("192.0.2.2");
  const std::string m = StableVtepMac(ip1, 1);
  EXPECT_EQ(m, StableVtepMac(ip1, 1));  // same node, same VNI: the same MAC, restart or reboot
  ASSERT_EQ(m.size(), 17u);
  int first = std::stoi(m.substr(0, 2), nullptr, 16);
  EXPECT_EQ(first & 0x03, 0x02) << m;  // locally administered, unicast
  EXPECT_NE(m, StableVtepMac(ip2, 1));
  EXPECT_NE(m, StableVtepMac(ip1, 2));
  std::set<std::string> macs;
  for (int i = 1; i < 255; ++i) macs.insert(StableVtepMac(cni::IpAddr::V4(0xc0000200u + i), 1));
  EXPECT_EQ(macs.size(), 254u);
  EXPECT_EQ(VxlanBackendData(1, m).dump(), R"({"VNI":1,"VtepMAC":")" + m + R"("})");
}

TEST(VxlanPlan, EncapsulatedPeer) {
  std::string why;
  auto p = PlanVxlanPeer(Peer("10.5.3.0/24", "198.51.100.3", {{"VNI", 1}, {"VtepMAC", "0E:AA:bb:cc:dd:03"}}),
                         Local(true), &why);
  ASSERT_TRUE(p) << why;
  EXPECT_FALSE(p->direct);  // not on the uplink's segment: encapsulated even with DirectRouting
  EXPECT_EQ(p->neigh_ip.ToString(), "10.5.3.0");
  EXPECT_EQ(p->mac, "0e:aa:bb:cc:dd:03");
  EXPECT_EQ(p->fdb_dst.ToString(), "198.51.100.3");
  EXPECT_EQ(p->route.dst.ToString(), "10.5.3.0/24");
  EXPECT_EQ(p->route.gw->ToString(), "10.5.3.0");
  EXPECT_EQ(p->route.ifindex, 7);
  EXPECT_TRUE(p->route.onlink);
  EXPECT_EQ(p->route.protocol, 78);
}

TEST(VxlanPlan, DirectRoutingOnTheSameSegment) {
  Lease peer = Peer("10.5.2.0/24", "192.0.2.2", {{"VNI", 1}, {"VtepMAC", "0e:aa:bb:cc:dd:02"}});
  auto direct = PlanVxlanPeer(peer, Local(true), nullptr);
  ASSERT_TRUE(direct);
  EXPECT_TRUE(direct->direct);
  EXPECT_EQ(direct->route.gw->ToString(), "192.0.2.2");
  EXPECT_EQ(direct->route.ifindex, 2);
  EXPECT_FALSE(direct->route.onlink);
  auto encap = PlanVxlanPeer(peer, Local(false), nullptr);
  ASSERT_TRUE(encap);
  EXPECT_FALSE(encap->direct);
  EXPECT_EQ(encap->route.ifindex, 7);
}

TEST(VxlanPlan, LeasesNotForThisBackend) {
  std::string why;
  EXPECT_FALSE(PlanVxlanPeer(Peer("10.5.2.0/24", "192.0.2.2", nullptr, "host-gw"), Local(false), &why));
  EXPECT_NE(why.find("host-gw"), std::string::npos);
  EXPECT_FALSE(PlanVxlanPeer(Peer("10.5.2.0/24", "192.0.2.2", {{"VNI", 1}}), Local(false), &why));
  EXPECT_NE(why.find("VtepMAC"), std::string::npos);
  EXPECT_FALSE(PlanVxlanPeer(Peer("10.5.2.0/24", "192.0.2.2", {{"VNI", 1}, {"VtepMAC", "zz"}}), Local(false), &why));
  EXPECT_NE(why.find("invalid BackendData.VtepMAC"), std::string::npos);
  EXPECT_FALSE(PlanVxlanPeer(Peer("10.5.2.0/24", "192.0.2.2", {{"VNI", 2}, {"VtepMAC", "0e:00:00:00:00:01"}}),
                             Local(false), &why));
  EXPECT_NE(why.find("VNI 2"), std::string::npos);
}

Lease DualStackPeer() {
  Lease l = Peer("10.5.3.0/24", "198.51.100.3", {{"VNI", 1}, {"VtepMAC", "0e:aa:bb:cc:dd:03"}});
  l.subnet.v6 = *cni::IpNet::Parse("fd00:5:0:3::/64");
  l.attrs.public_ipv6 = cni::IpAddr::Parse("2001:db8:9::3");
  l.attrs.backend_v6_data = {{"VNI", 1}, {"VtepMAC", "0e:aa:bb:cc:dd:63"}};
  return l;
}

TEST(VxlanEntries, IPv4OnlyNodeProgramsTheIpv4SideOnly) {
  std::string why;
  auto e = VxlanEntries(DualStackPeer(), Local(false), &why);
  ASSERT_TRUE(e) << why;
  ASSERT_EQ(e->neighs.size(), 1u);
  EXPECT_EQ(e->neighs[0].ifindex, 7);
  EXPECT_EQ(e->neighs[0].dst.ToString(), "10.5.3.0");
  EXPECT_EQ(e->neighs[0].mac, "0e:aa:bb:cc:dd:03");
  ASSERT_EQ(e->fdbs.size(), 1u);
  EXPECT_EQ(e->fdbs[0].dst.ToString(), "198.51.100.3");
  ASSERT_EQ(e->routes.size(), 1u);
  EXPECT_TRUE(e->routes[0].onlink);
}

TEST(VxlanEntries, DualStackPeerGetsBothFamiliesOnTheirDevices) {
  VxlanLocal local = Local(false);
  local.device6_ifindex = 8;
  local.uplink_net6 = *cni::IpNet::Parse("2001:db8:1::1/64");
  auto e = VxlanEntries(DualStackPeer(), local, nullptr);
  ASSERT_TRUE(e);
  ASSERT_EQ(e->neighs.size(), 2u);
  EXPECT_EQ(e->neighs[1].ifindex, 8);
  EXPECT_EQ(e->neighs[1].dst.ToString(), "fd00:5:0:3::");
  EXPECT_EQ(e->neighs[1].mac, "0e:aa:bb:cc:dd:63");  // BackendV6Data's VTEP
  ASSERT_EQ(e->fdbs.size(), 2u);
  EXPECT_EQ(e->fdbs[1].ifindex, 8);
  EXPECT_EQ(e->fdbs[1].dst.ToString(), "2001:db8:9::3");  // over the IPv6 underlay
  ASSERT_EQ(e->routes.size(), 2u);
  EXPECT_EQ(e->routes[1].dst.ToString(), "fd00:5:0:3::/64");
  EXPECT_EQ(e->routes[1].gw->ToString(), "fd00:5:0:3::");
  EXPECT_EQ(e->routes[1].ifindex, 8);
  EXPECT_TRUE(e->routes[1].onlink);
}

TEST(VxlanEntries, PeerWithoutAnIpv6SideIsReachedOverIpv4) {
  VxlanLocal local = Local(false);
  local.device6_ifindex = 8;
  Lease l = DualStackPeer();
  l.attrs.backend_v6_data = nullptr;  // an IPv4-only flanneld, or one without the v6 device
  auto e = VxlanEntries(l, local, nullptr);
  ASSERT_TRUE(e);
  EXPECT_EQ(e->routes.size(), 1u);
  std::string why;
  EXPECT_FALSE(PlanVxlanPeer(l, local, /*ipv6=*/true, &why));
  EXPECT_NE(why.find("BackendV6Data.VtepMAC"), std::string::npos) << why;
}

TEST(VxlanEntries, DirectRoutingPeerNeedsOnlyItsRoutes) {
  VxlanLocal local = Local(true);
  local.device6_ifindex = 8;
  local.uplink_net6 = *cni::IpNet::Parse("2001:db8:9::1/64");
  auto e = VxlanEntries(DualStackPeer(), local, nullptr);  // v4 public IP is off-segment, v6 is on it
  ASSERT_TRUE(e);
  EXPECT_EQ(e->neighs.size(), 1u);  // IPv4 side only
  EXPECT_EQ(e->fdbs.size(), 1u);
  ASSERT_EQ(e->routes.size(), 2u);
  EXPECT_EQ(e->routes[1].gw->ToString(), "2001:db8:9::3");
  EXPECT_EQ(e->routes[1].ifindex, 2);
  EXPECT_FALSE(e->routes[1].onlink);
  EXPECT_FALSE(VxlanEntries(Peer("10.5.2.0/24", "192.0.2.2", nullptr, "host-gw"), local, nullptr));
}

}  // namespace
}  // namespace netiface::agent
