// The host-gw backend and FindUplink against the kernel, in throw-away namespaces (kernel_topology.h):
// the backend is created inside a node namespace (its socket stays there), the test reads the routes
// back with `ip -j route`, and two nodes ping pod to pod over the routes it installed.
#include "netiface/agent/hostgw.h"

#include <gtest/gtest.h>

#include "kernel_topology.h"
#include "netiface/agent/uplink.h"
#include "netiface/cni/error.h"
#include "netiface/netlink/netns.h"

namespace netiface::agent {
namespace {

cni::IpNet Net(const std::string& s) { return *cni::IpNet::Parse(s); }
cni::IpAddr Ip(const std::string& s) { return *cni::IpAddr::Parse(s); }

Lease MakeLease(const std::string& subnet, const std::string& public_ip, const std::string& type = "host-gw") {
  Lease l;
  l.subnet.v4 = Net(subnet);
  l.attrs.public_ip = Ip(public_ip);
  l.attrs.backend_type = type;
  return l;
}

class HostGwNetns : public ::testing::Test {
 protected:
  void SetUp() override {
    NETIFACE_REQUIRE_ROOT();
    topo_ = std::make_unique<testing::Topology>(1);
    ASSERT_FALSE(HasFatalFailure());
    ns_ = nl::NetNs::Open(Node().path());
    ASSERT_TRUE(ns_);
    nl::ScopedSetNs in(*ns_);
    uplink_ = FindUplink({});
    backend_ = MakeHostGwBackend(uplink_);
    backend_->Setup(MakeLease("10.5.1.0/24", "192.0.2.1"));
  }

  const netiface::testing::TempNetns& Node() const { return *topo_->node(1).node; }

  // `ip -j route show <dst>` in the node: the one route, or null.
  nlohmann::json Route(const std::string& dst) const {
    auto j = Node().IpJson("route show " + dst);
    return j.is_array() && j.size() == 1 ? j[0] : nlohmann::json();
  }

  std::unique_ptr<testing::Topology> topo_;
  std::optional<nl::NetNs> ns_;
  Uplink uplink_;
  std::unique_ptr<Backend> backend_;
};

TEST_F(HostGwNetns, FindUplinkTakesTheDefaultRoutesLink) {
  EXPECT_EQ(uplink_.name, "eth0");
  EXPECT_EQ(uplink_.public_ip, Ip("192.0.2.1"));
  EXPECT_EQ(uplink_.mtu, 1500);
  EXPECT_EQ(backend_->Mtu(), 1500);
  EXPECT_EQ(backend_->Type(), "host-gw");
  EXPECT_TRUE(backend_->BackendData().is_null());
  nl::ScopedSetNs in(*ns_);
  EXPECT_EQ(FindUplink({.ifaces = {"vp0"}}).public_ip, Ip("10.5.1.1"));
  EXPECT_EQ(FindUplink({.ifaces = {"192.0.2.1"}}).name, "eth0");
  EXPECT_THROW(FindUplink({.ifaces = {"nosuch0"}}), UplinkError);
}

TEST_F(HostGwNetns, AddReplaceRemovePeer) {
  backend_->AddPeer(MakeLease("10.5.2.0/24", "192.0.2.2"));
  auto r = Route("10.5.2.0/24");
  ASSERT_FALSE(r.is_null()) << Node().IpJson("route").dump();
  EXPECT_EQ(r.value("gateway", ""), "192.0.2.2");
  EXPECT_EQ(r.value("dev", ""), "eth0");
  EXPECT_EQ(r.value("protocol", ""), "78");

  backend_->AddPeer(MakeLease("10.5.2.0/24", "192.0.2.2"));  // unchanged: still one route
  EXPECT_EQ(Node().IpJson("route show 10.5.2.0/24").size(), 1u);

  backend_->AddPeer(MakeLease("10.5.2.0/24", "192.0.2.3"));
  r = Route("10.5.2.0/24");
  EXPECT_EQ(r.value("gateway", ""), "192.0.2.3") << r.dump();
  EXPECT_EQ(r.value("protocol", ""), "78");

  backend_->RemovePeer(MakeLease("10.5.2.0/24", "192.0.2.3"));
  EXPECT_TRUE(Route("10.5.2.0/24").is_null());
  backend_->RemovePeer(MakeLease("10.5.2.0/24", "192.0.2.3"));  // absent is fine
}

TEST_F(HostGwNetns, OwnSubnetAndOtherBackendsAreNeverRouted) {
  backend_->AddPeer(MakeLease("10.5.1.0/24", "192.0.2.1"));
  auto own = Node().IpJson("route show 10.5.1.0/24");
  ASSERT_EQ(own.size(), 1u);
  EXPECT_EQ(own[0].value("protocol", ""), "kernel");  // only vp0's connected route
  backend_->AddPeer(MakeLease("10.5.3.0/24", "192.0.2.3", "vxlan"));
  backend_->AddPeer(MakeLease("10.5.3.0/24", "192.0.2.3", "vxlan"));  // warned once, still skipped
  EXPECT_TRUE(Route("10.5.3.0/24").is_null());
  // A lease that switches from host-gw to another type loses its route.
  backend_->AddPeer(MakeLease("10.5.4.0/24", "192.0.2.4"));
  EXPECT_FALSE(Route("10.5.4.0/24").is_null());
  backend_->AddPeer(MakeLease("10.5.4.0/24", "192.0.2.4", "vxlan"));
  EXPECT_TRUE(Route("10.5.4.0/24").is_null());
}

TEST_F(HostGwNetns, ForeignRouteOfTheSameDestinationIsLeftAlone) {
  testing::Topology::Must(Node(), "ip route add 10.5.5.0/24 via 192.0.2.99 dev eth0");
  // The peer cannot be routed: AddPeer says so (the daemon logs it), and touches nothing.
  EXPECT_THROW(backend_->AddPeer(MakeLease("10.5.5.0/24", "192.0.2.5")), cni::Error);
  auto r = Route("10.5.5.0/24");
  EXPECT_EQ(r.value("gateway", ""), "192.0.2.99") << r.dump();
  EXPECT_EQ(r.value("protocol", "boot"), "boot");  // ip -j leaves out the default protocol
  backend_->Reconcile({MakeLease("10.5.5.0/24", "192.0.2.5")});
  EXPECT_EQ(Route("10.5.5.0/24").value("gateway", ""), "192.0.2.99");
  backend_->RemovePeer(MakeLease("10.5.5.0/24", "192.0.2.5"));
  EXPECT_EQ(Route("10.5.5.0/24").value("gateway", ""), "192.0.2.99");
}

TEST_F(HostGwNetns, ReconcileRepairsAndRemovesStale) {
  backend_->AddPeer(MakeLease("10.5.2.0/24", "192.0.2.2"));
  backend_->AddPeer(MakeLease("10.5.3.0/24", "192.0.2.3"));
  testing::Topology::Must(Node(),
                          "ip route del 10.5.2.0/24 && "
                          "ip route add 10.5.9.0/24 via 192.0.2.9 dev eth0 proto 78 && "
                          "ip route replace 10.5.3.0/24 via 192.0.2.33 dev eth0 proto 78 && "
                          "ip route add 10.5.8.0/24 via 192.0.2.8 dev eth0 proto static");
  std::vector<Lease> peers = {MakeLease("10.5.2.0/24", "192.0.2.2"), MakeLease("10.5.3.0/24", "192.0.2.3")};
  backend_->Reconcile(peers);
  EXPECT_EQ(Route("10.5.2.0/24").value("gateway", ""), "192.0.2.2");
  EXPECT_EQ(Route("10.5.2.0/24").value("protocol", ""), "78");
  EXPECT_EQ(Route("10.5.3.0/24").value("gateway", ""), "192.0.2.3");
  EXPECT_TRUE(Route("10.5.9.0/24").is_null());
  EXPECT_EQ(Route("10.5.8.0/24").value("protocol", ""), "static");  // not ours: kept
  auto before = Node().IpJson("route");
  backend_->Reconcile(peers);
  EXPECT_EQ(Node().IpJson("route"), before);
  // After a reconcile the backend knows what it owns again: a gateway change replaces.
  backend_->AddPeer(MakeLease("10.5.2.0/24", "192.0.2.4"));
  EXPECT_EQ(Route("10.5.2.0/24").value("gateway", ""), "192.0.2.4");
}

TEST_F(HostGwNetns, RemoveAgentRoutesTakesOnlyOurProtocol) {
  backend_->AddPeer(MakeLease("10.5.2.0/24", "192.0.2.2"));
  backend_->AddPeer(MakeLease("10.5.3.0/24", "192.0.2.3"));
  testing::Topology::Must(Node(),
                          "ip -6 addr add fd00:2::1/64 dev eth0 nodad && "
                          "ip -6 route add fd00:5::/64 via fd00:2::2 proto 78 && "
                          "ip route add 10.5.8.0/24 via 192.0.2.8 dev eth0 proto static");
  auto before = Node().IpJson("route show proto 78");
  ASSERT_EQ(before.size(), 2u) << before.dump();
  int removed = 0;
  {
    nl::ScopedSetNs in(*ns_);
    removed = RemoveAgentRoutes();
  }
  EXPECT_EQ(removed, 3);
  EXPECT_TRUE(Node().IpJson("route show proto 78").empty());
  EXPECT_TRUE(Node().IpJson("-6 route show proto 78").empty());
  EXPECT_FALSE(Route("10.5.8.0/24").is_null());
  EXPECT_FALSE(Node().IpJson("route show default").empty());
  nl::ScopedSetNs in(*ns_);
  EXPECT_EQ(RemoveAgentRoutes(), 0);
}

TEST(HostGwTraffic, PodToPodAcrossTwoNodes) {
  NETIFACE_REQUIRE_ROOT();
  testing::Topology topo(2);
  ASSERT_FALSE(::testing::Test::HasFatalFailure());
  const auto& n1 = topo.node(1);
  const auto& n2 = topo.node(2);
  EXPECT_FALSE(n1.pod->Ping(n2.pod_ip())) << "pods reach each other without routes";

  std::vector<std::unique_ptr<Backend>> backends;
  for (const auto* n : {&n1, &n2}) {
    auto ns = nl::NetNs::Open(n->node->path());
    ASSERT_TRUE(ns);
    nl::ScopedSetNs in(*ns);
    backends.push_back(MakeHostGwBackend(FindUplink({})));
    backends.back()->Setup(MakeLease(n->subnet(), n->uplink_ip()));
  }
  backends[0]->AddPeer(MakeLease(n2.subnet(), n2.uplink_ip()));
  backends[1]->AddPeer(MakeLease(n1.subnet(), n1.uplink_ip()));
  EXPECT_TRUE(n1.pod->Ping(n2.pod_ip(), 2));
  EXPECT_TRUE(n2.pod->Ping(n1.pod_ip(), 2));

  backends[0]->RemovePeer(MakeLease(n2.subnet(), n2.uplink_ip()));
  EXPECT_FALSE(n1.pod->Ping(n2.pod_ip()));
  backends[0]->Reconcile({MakeLease(n2.subnet(), n2.uplink_ip())});
  EXPECT_TRUE(n1.pod->Ping(n2.pod_ip(), 2));
}

}  // namespace
}  // namespace netiface::agent
