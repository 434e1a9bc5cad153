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
  for (const Case& k : {Case{R"({"VNI":16777216})", "Backend.VNI 16777216"}, Case{R"({"VNI":-1})", "Backend.VNI -1"},
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
  EXPECT_NE(why.find("invalid VtepMAC"), std::string::npos);
  EXPECT_FALSE(
      PlanVxlanPeer(Peer("10.5.2.0/24", "192.0.2.2", {{"VNI", 2}, {"VtepMAC", "0e:00:00:00:00:01"}}), Local(false), &why));
  EXPECT_NE(why.find("VNI 2"), std::string::npos);
}

}  // namespace
}  // namespace netiface::agent
