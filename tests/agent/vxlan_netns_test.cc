// The vxlan backend against the kernel, in throw-away namespaces (kernel_topology.h): the device it
// makes, the neighbour/FDB/route entries per peer read back with ip and bridge, repair of a deleted
// device, all-or-nothing per peer, and pods on two nodes pinging over the tunnel in both families.
#include "netiface/agent/vxlan.h"

#include <gtest/gtest.h>

#include "kernel_topology.h"
#include "netiface/agent/uplink.h"
#include "netiface/cni/error.h"
#include "netiface/netlink/netns.h"

namespace netiface::agent {
namespace {

using testing::Topology;

cni::IpNet Net(const std::string& s) { return *cni::IpNet::Parse(s); }
cni::IpAddr Ip(const std::string& s) { return *cni::IpAddr::Parse(s); }

// Node n's lease as the vxlan backend of that node publishes it (IPv6 side when `v6`).
Lease NodeLease(int n, bool v6) {
  Lease l;
  const std::string ns = std::to_string(n);
  l.subnet.v4 = Net("10.5." + ns + ".0/24");
  l.attrs.public_ip = Ip("192.0.2." + ns);
  l.attrs.backend_type = "vxlan";
  l.attrs.backend_data = VxlanBackendData(1, StableVtepMac(*l.attrs.public_ip, 1));
  if (v6) {
    l.subnet.v6 = Net("fd00:5:0:" + ns + "::/64");
    l.attrs.public_ipv6 = Ip("2001:db8:1::" + ns);
    l.attrs.backend_v6_data = VxlanBackendData(1, StableVtepMac(*l.attrs.public_ipv6, 1));
  }
  return l;
}

// Adds the IPv6 side to node n of the topology: underlay 2001:db8:1::n/64, pod fd00:5:0:n::2/64.
void AddIpv6(const Topology& topo, int n) {
  const auto& t = topo.node(n);
  const std::string ns = std::to_string(n);
  Topology::Must(*t.node, "ip -6 addr add 2001:db8:1::" + ns +
                              "/64 dev eth0 nodad && "
                              "ip -6 addr add fd00:5:0:" +
                              ns +
                              "::1/64 dev vp0 nodad && "
                              "sysctl -qw net.ipv6.conf.all.forwarding=1");
  Topology::Must(*t.pod, "ip -6 addr add fd00:5:0:" + ns +
                             "::2/64 dev eth0 nodad && "
                             "ip -6 route add default via fd00:5:0:" +
                             ns + "::1");
}

class VxlanNetns : public ::testing::Test {
 protected:
  void SetUp() override {
    NETIFACE_REQUIRE_ROOT();
    topo_ = std::make_unique<Topology>(1);
    ASSERT_FALSE(HasFatalFailure());
    AddIpv6(*topo_, 1);
    ASSERT_FALSE(HasFatalFailure());
    ns_ = nl::NetNs::Open(Node().path());
    ASSERT_TRUE(ns_);
    nl::ScopedSetNs in(*ns_);
    uplink_ = FindUplink({});
    backend_ = MakeVxlanBackend(uplink_, VxlanConfig{}, /*ipv6=*/true);
    backend_->Setup(NodeLease(1, true));
  }

  const netiface::testing::TempNetns& Node() const { return *topo_->node(1).node; }
  nlohmann::json Link(const std::string& dev) const {
    auto j = Node().IpJson("-d link show " + dev);
    return j.is_array() && j.size() == 1 ? j[0] : nlohmann::json();
  }
  nlohmann::json Neighs(const std::string& dev) const {
    return Node().IpJson("neigh show dev " + dev + " nud permanent");
  }
  std::string Fdb(const std::string& dev) const { return Node().Sh("bridge fdb show dev " + dev).out; }
  nlohmann::json Route(const std::string& dst) const {
    auto j = Node().IpJson("route show " + dst);
    return j.is_array() && j.size() == 1 ? j[0] : nlohmann::json();
  }

  std::unique_ptr<Topology> topo_;
  std::optional<nl::NetNs> ns_;
  Uplink uplink_;
  std::unique_ptr<Backend> backend_;
};

TEST_F(VxlanNetns, SetupMakesBothDevicesAsFlannelDoes) {
  auto l4 = Link("flannel.1");
  ASSERT_FALSE(l4.is_null());
  const auto& info = l4["linkinfo"]["info_data"];
  EXPECT_EQ(info.value("id", 0), 1);
  EXPECT_EQ(info.value("local", ""), "192.0.2.1");
  EXPECT_EQ(info.value("port", 0), 8472);
  EXPECT_FALSE(info.value("learning", true));
  EXPECT_EQ(l4.value("mtu", 0), 1450);
  EXPECT_EQ(l4.value("address", ""), StableVtepMac(Ip("192.0.2.1"), 1));
  EXPECT_NE(l4["flags"].dump().find("\"UP\""), std::string::npos) << l4.dump();
  auto a4 = Node().IpJson("-4 addr show dev flannel.1");
  ASSERT_EQ(a4.size(), 1u);
  EXPECT_EQ(a4[0]["addr_info"].at(0).value("local", ""), "10.5.1.0");
  EXPECT_EQ(a4[0]["addr_info"].at(0).value("prefixlen", 0), 32);

  auto l6 = Link("flannel-v6.1");
  ASSERT_FALSE(l6.is_null());
  EXPECT_EQ(l6["linkinfo"]["info_data"].value("local6", ""), "2001:db8:1::1");
  EXPECT_EQ(l6.value("mtu", 0), 1430);  // 70 bytes of IPv6 encapsulation
  EXPECT_EQ(l6.value("address", ""), StableVtepMac(Ip("2001:db8:1::1"), 1));
  EXPECT_NE(Node().Sh("ip -6 addr show dev flannel-v6.1").out.find("fd00:5:0:1::/128"), std::string::npos);

  EXPECT_EQ(backend_->BackendData().dump(), VxlanBackendData(1, StableVtepMac(Ip("192.0.2.1"), 1)).dump());
  EXPECT_EQ(backend_->BackendV6Data()["VtepMAC"], StableVtepMac(Ip("2001:db8:1::1"), 1));
  EXPECT_EQ(backend_->Mtu(), 1430);
}

TEST_F(VxlanNetns, AddAndRemovePeerInBothFamilies) {
  const Lease peer = NodeLease(2, true);
  const std::string mac4 = StableVtepMac(Ip("192.0.2.2"), 1);
  const std::string mac6 = StableVtepMac(Ip("2001:db8:1::2"), 1);
  backend_->AddPeer(peer);
  auto n4 = Neighs("flannel.1");
  ASSERT_EQ(n4.size(), 1u) << n4.dump();
  EXPECT_EQ(n4[0].value("dst", ""), "10.5.2.0");
  EXPECT_EQ(n4[0].value("lladdr", ""), mac4);
  EXPECT_NE(Fdb("flannel.1").find(mac4 + " dst 192.0.2.2 self permanent"), std::string::npos) << Fdb("flannel.1");
  auto r4 = Route("10.5.2.0/24");
  EXPECT_EQ(r4.value("gateway", ""), "10.5.2.0");
  EXPECT_EQ(r4.value("dev", ""), "flannel.1");
  EXPECT_EQ(r4.value("protocol", ""), "78");
  EXPECT_NE(r4["flags"].dump().find("onlink"), std::string::npos) << r4.dump();
  auto n6 = Neighs("flannel-v6.1");
  ASSERT_EQ(n6.size(), 1u) << n6.dump();
  EXPECT_EQ(n6[0].value("dst", ""), "fd00:5:0:2::");
  EXPECT_EQ(n6[0].value("lladdr", ""), mac6);
  EXPECT_NE(Fdb("flannel-v6.1").find(mac6 + " dst 2001:db8:1::2 self permanent"), std::string::npos);
  auto r6 = Node().IpJson("-6 route show fd00:5:0:2::/64");
  ASSERT_EQ(r6.size(), 1u);
  EXPECT_EQ(r6[0].value("dev", ""), "flannel-v6.1");

  backend_->AddPeer(peer);  // unchanged: still one of each
  EXPECT_EQ(Neighs("flannel.1").size(), 1u);

  backend_->RemovePeer(peer);
  EXPECT_TRUE(Neighs("flannel.1").empty());
  EXPECT_TRUE(Neighs("flannel-v6.1").empty());
  EXPECT_EQ(Fdb("flannel.1").find(mac4), std::string::npos);
  EXPECT_EQ(Fdb("flannel-v6.1").find(mac6), std::string::npos);
  EXPECT_TRUE(Route("10.5.2.0/24").is_null());
  EXPECT_TRUE(Node().IpJson("-6 route show fd00:5:0:2::/64").empty());
  backend_->RemovePeer(peer);  // absent is fine
}

TEST_F(VxlanNetns, ChangedVtepMacMovesTheEntries) {
  Lease peer = NodeLease(2, false);
  backend_->AddPeer(peer);
  peer.attrs.backend_data = VxlanBackendData(1, "0e:00:00:00:00:99");
  peer.attrs.public_ip = Ip("192.0.2.99");
  backend_->AddPeer(peer);
  auto n4 = Neighs("flannel.1");
  ASSERT_EQ(n4.size(), 1u);
  EXPECT_EQ(n4[0].value("lladdr", ""), "0e:00:00:00:00:99");
  std::string fdb = Fdb("flannel.1");
  EXPECT_NE(fdb.find("0e:00:00:00:00:99 dst 192.0.2.99"), std::string::npos) << fdb;
  EXPECT_EQ(fdb.find("192.0.2.2"), std::string::npos) << fdb;
}

TEST_F(VxlanNetns, APeerIsProgrammedWholeOrNotAtAll) {
  Topology::Must(Node(), "ip route add 10.5.3.0/24 via 192.0.2.99 dev eth0");
  EXPECT_THROW(backend_->AddPeer(NodeLease(3, true)), cni::Error);
  EXPECT_TRUE(Neighs("flannel.1").empty()) << Neighs("flannel.1").dump();
  EXPECT_EQ(Fdb("flannel.1").find(" dst 192.0.2.3"), std::string::npos);
  EXPECT_EQ(Route("10.5.3.0/24").value("gateway", ""), "192.0.2.99");  // the foreign route stays
  // Its IPv6 side was not left behind either.
  EXPECT_TRUE(Neighs("flannel-v6.1").empty());
  EXPECT_TRUE(Node().IpJson("-6 route show fd00:5:0:3::/64").empty());
  // A reconcile keeps it out too.
  backend_->Reconcile({NodeLease(3, true)});
  EXPECT_TRUE(Neighs("flannel.1").empty());
}

TEST_F(VxlanNetns, ReconcileRecreatesADeletedOrChangedDeviceWithEveryPeer) {
  std::vector<Lease> peers = {NodeLease(2, true), NodeLease(3, true)};
  for (const auto& p : peers) backend_->AddPeer(p);
  const std::string mac = Link("flannel.1").value("address", "");
  const std::string fdb_before = Fdb("flannel.1");
  Topology::Must(Node(), "ip link del flannel.1 && ip link set flannel-v6.1 mtu 1300");
  backend_->Reconcile(peers);
  EXPECT_EQ(Link("flannel.1").value("address", ""), mac);  // the same VTEP MAC on the new device
  EXPECT_EQ(Link("flannel-v6.1").value("mtu", 0), 1430);
  EXPECT_EQ(Neighs("flannel.1").size(), 2u);
  EXPECT_EQ(Neighs("flannel-v6.1").size(), 2u);
  EXPECT_EQ(Fdb("flannel.1"), fdb_before);
  EXPECT_EQ(Route("10.5.3.0/24").value("dev", ""), "flannel.1");
  EXPECT_EQ(Node().IpJson("-6 route show fd00:5:0:3::/64").size(), 1u);
  // Stale entries on our devices go; a foreign address on the device is replaced by ours.
  Topology::Must(Node(),
                 "ip neigh add 10.5.9.0 lladdr 0e:00:00:00:00:09 dev flannel.1 nud permanent && "
                 "bridge fdb add 0e:00:00:00:00:09 dev flannel.1 dst 192.0.2.9 self permanent && "
                 "ip addr add 10.9.9.9/32 dev flannel.1");
  backend_->Reconcile(peers);
  EXPECT_EQ(Neighs("flannel.1").size(), 2u);
  EXPECT_EQ(Fdb("flannel.1"), fdb_before);
  EXPECT_EQ(Node().Sh("ip -4 addr show dev flannel.1").out.find("10.9.9.9"), std::string::npos);
  // A second reconcile changes nothing.
  auto routes = Node().IpJson("route");
  backend_->Reconcile(peers);
  EXPECT_EQ(Node().IpJson("route"), routes);
}

TEST_F(VxlanNetns, CleanupRemovesOnlyFlannelVxlanDevices) {
  Topology::Must(Node(), "ip link add flannel.7 type bridge && ip link add vx9 type vxlan id 9 dstport 4789");
  nl::ScopedSetNs in(*ns_);
  EXPECT_EQ(RemoveVxlanDevices(), 2);
  EXPECT_TRUE(Link("flannel.1").is_null());
  EXPECT_FALSE(Link("flannel.7").is_null());  // a bridge of that name is not ours
  EXPECT_FALSE(Link("vx9").is_null());
}

TEST(VxlanTraffic, PodsOnTwoNodesReachEachOtherOverTheTunnel) {
  NETIFACE_REQUIRE_ROOT();
  Topology topo(2);
  ASSERT_FALSE(::testing::Test::HasFatalFailure());
  for (int n : {1, 2}) AddIpv6(topo, n);
  ASSERT_FALSE(::testing::Test::HasFatalFailure());
  const auto& n1 = topo.node(1);
  const auto& n2 = topo.node(2);
  std::vector<std::unique_ptr<Backend>> backends;
  for (int n : {1, 2}) {
    auto ns = nl::NetNs::Open(topo.node(n).node->path());
    ASSERT_TRUE(ns);
    nl::ScopedSetNs in(*ns);
    backends.push_back(MakeVxlanBackend(FindUplink({}), VxlanConfig{}, true));
    backends.back()->Setup(NodeLease(n, true));
  }
  backends[0]->AddPeer(NodeLease(2, true));
  backends[1]->AddPeer(NodeLease(1, true));
  EXPECT_TRUE(n1.pod->Ping(n2.pod_ip(), 2));
  EXPECT_TRUE(n2.pod->Ping(n1.pod_ip(), 2));
  EXPECT_TRUE(n1.pod->Ping("fd00:5:0:2::2", 2));
  EXPECT_TRUE(n2.pod->Ping("fd00:5:0:1::2", 2));
  // It went through the tunnels: both devices sent packets.
  for (const char* dev : {"flannel.1", "flannel-v6.1"}) {
    auto j = n1.node->IpJson(std::string("-s link show ") + dev);
    ASSERT_EQ(j.size(), 1u);
    EXPECT_GT(j[0]["stats64"]["tx"].value("packets", 0), 0) << dev;
  }
  // No learning: the underlay bridge delivers only what the FDB entries address.
  backends[0]->RemovePeer(NodeLease(2, true));
  EXPECT_FALSE(n1.pod->Ping(n2.pod_ip()));
}

}  // namespace
}  // namespace netiface::agent
