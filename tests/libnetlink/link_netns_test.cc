#include "netiface/netlink/link.h"

#include <cerrno>
#include <tuple>

#include <gtest/gtest.h>

#include "netns_fixture.h"

namespace netiface::nl {
namespace {

using LinkTest = NetnsTest;

nlohmann::json Dev(const testing::TempNetns& ns, const std::string& name) {
  auto j = ns.IpJson("-d link show dev " + name);
  return j.is_array() && j.size() == 1 ? j[0] : nlohmann::json();
}

TEST_F(LinkTest, VethPeerIsCreatedDirectlyInThePodNamespace) {
  VethSpec spec;
  spec.name = "vh0";
  spec.peer_name = "eth0";
  spec.peer_ns = &*pod_ns_;
  spec.mtu = 1400;
  spec.num_queues = 2;
  spec.mac = "02:11:22:33:44:55";
  spec.peer_mac = "0a:58:0a:01:00:02";
  CreateVeth(*host_, spec);

  auto host = FindLink(*host_, "vh0");
  auto pod = FindLink(*pod_, "eth0");
  ASSERT_TRUE(host && pod);
  EXPECT_EQ(host->kind, "veth");
  EXPECT_EQ(pod->kind, "veth");
  EXPECT_EQ(host->mtu, 1400);
  EXPECT_EQ(pod->mtu, 1400);
  EXPECT_EQ(host->mac, "02:11:22:33:44:55");
  EXPECT_EQ(pod->mac, "0a:58:0a:01:00:02");
  EXPECT_EQ(host->peer_index, pod->index);
  EXPECT_EQ(pod->peer_index, host->index);
  EXPECT_FALSE(host->admin_up);
  EXPECT_FALSE(FindLink(*host_, "eth0"));
  EXPECT_FALSE(FindLink(*pod_, "vh0"));

  // Read back independently with iproute2.
  for (auto [ns, name, mac] : {std::tuple{host_tmp_.get(), "vh0", "02:11:22:33:44:55"},
                               std::tuple{pod_tmp_.get(), "eth0", "0a:58:0a:01:00:02"}}) {
    auto d = Dev(*ns, name);
    ASSERT_FALSE(d.is_null()) << name;
    EXPECT_EQ(d.value("mtu", 0), 1400) << name;
    EXPECT_EQ(d.value("address", ""), mac) << name;
    EXPECT_EQ(d.value("num_tx_queues", 0), 2) << name;
    EXPECT_EQ(d.value("num_rx_queues", 0), 2) << name;
    EXPECT_EQ(d["linkinfo"].value("info_kind", ""), "veth") << name;
  }
}

TEST_F(LinkTest, VethInOneNamespaceWhenNoPeerNamespace) {
  CreateVeth(*pod_, {.name = "a0", .peer_name = "b0"});
  auto a = FindLink(*pod_, "a0");
  auto b = FindLink(*pod_, "b0");
  ASSERT_TRUE(a && b);
  EXPECT_EQ(a->peer_index, b->index);
  EXPECT_EQ(Dev(*pod_tmp_, "a0").value("num_tx_queues", 0), 1);
}

TEST_F(LinkTest, CreatingAnExistingVethFailsWithExists) {
  MakePair("vh1", false);
  ExpectError(cni::kNetlink, [&] { MakePair("vh1", false); });
  EXPECT_EQ(ErrnoOf([&] { MakePair("vh1", false); }), EEXIST);
  // The peer name is taken in the pod: nothing is left behind in the host either.
  EXPECT_EQ(ErrnoOf([&] { MakePair("vh2", false); }), EEXIST);
  EXPECT_FALSE(FindLink(*host_, "vh2"));
}

TEST_F(LinkTest, DeleteLinkReportsWhetherItExisted) {
  MakePair("vh3");
  EXPECT_TRUE(DeleteLink(*host_, "vh3"));
  EXPECT_FALSE(FindLink(*host_, "vh3"));
  EXPECT_FALSE(FindLink(*pod_, "eth0")) << "the peer goes with its pair";
  EXPECT_FALSE(DeleteLink(*host_, "vh3"));
  EXPECT_FALSE(DeleteLink(*host_, ""));
}

TEST_F(LinkTest, FindLinkByIndexMatchesByName) {
  MakePair("vh4");
  auto by_name = FindLink(*pod_, "eth0");
  ASSERT_TRUE(by_name);
  auto by_index = FindLinkByIndex(*pod_, by_name->index);
  ASSERT_TRUE(by_index);
  EXPECT_EQ(by_index->name, "eth0");
  EXPECT_EQ(by_index->mac, by_name->mac);
  EXPECT_FALSE(FindLinkByIndex(*pod_, by_name->index + 1000));
}

TEST_F(LinkTest, EnsureBridgeCreatesOnceAndRejectsOtherKinds) {
  EXPECT_TRUE(EnsureBridge(*host_, "br0", 1450));
  auto br = FindLink(*host_, "br0");
  ASSERT_TRUE(br);
  EXPECT_EQ(br->kind, "bridge");
  EXPECT_EQ(br->mtu, 1450);
  EXPECT_EQ(Dev(*host_tmp_, "br0")["linkinfo"].value("info_kind", ""), "bridge");
  EXPECT_FALSE(EnsureBridge(*host_, "br0", 1450));

  MakePair("vh5", false);
  std::string msg = ExpectError(cni::kInvalidConfig, [&] { EnsureBridge(*host_, "vh5", 0); });
  EXPECT_NE(msg.find("not a bridge"), std::string::npos) << msg;
  ExpectError(cni::kInvalidConfig, [&] { EnsureBridge(*host_, "much-too-long-name", 0); });
}

TEST_F(LinkTest, SetMasterAndHairpin) {
  ASSERT_TRUE(EnsureBridge(*host_, "br0", 0));
  SetLinkUp(*host_, "br0");
  MakePair("vh6");
  SetMaster(*host_, "vh6", "br0");
  auto port = FindLink(*host_, "vh6");
  ASSERT_TRUE(port);
  EXPECT_EQ(port->master_index, Index(*host_, "br0"));
  EXPECT_FALSE(port->hairpin);

  SetHairpin(*host_, "vh6", true);
  EXPECT_TRUE(FindLink(*host_, "vh6")->hairpin);
  auto d = Dev(*host_tmp_, "vh6");
  EXPECT_EQ(d["linkinfo"].value("info_slave_kind", ""), "bridge");
  EXPECT_EQ(d["linkinfo"]["info_slave_data"].value("hairpin", false), true) << d.dump();

  SetHairpin(*host_, "vh6", false);
  EXPECT_FALSE(FindLink(*host_, "vh6")->hairpin);
  EXPECT_EQ(Dev(*host_tmp_, "vh6")["linkinfo"]["info_slave_data"].value("hairpin", true), false);

  SetMaster(*host_, "vh6", "");
  EXPECT_EQ(FindLink(*host_, "vh6")->master_index, 0);
  ExpectError(cni::kNetlink, [&] { SetMaster(*host_, "vh6", "nobridge"); });
  ExpectError(cni::kNetlink, [&] { SetHairpin(*host_, "nolink", true); });
}

TEST_F(LinkTest, VethCreatedAsABridgePort) {
  ASSERT_TRUE(EnsureBridge(*host_, "br0", 0));
  const int br = Index(*host_, "br0");
  CreateVeth(*host_, {.name = "vh8", .peer_name = "eth0", .peer_ns = &*pod_ns_, .master_index = br});
  auto port = FindLink(*host_, "vh8");
  ASSERT_TRUE(port);
  EXPECT_EQ(port->master_index, br);
  EXPECT_EQ(Dev(*host_tmp_, "vh8").value("master", ""), "br0");
  EXPECT_EQ(FindLink(*pod_, "eth0")->master_index, 0);
  ExpectError(cni::kNetlink, [&] {
    CreateVeth(*host_, {.name = "vh9", .peer_name = "eth1", .peer_ns = &*pod_ns_, .master_index = 999999});
  });
  EXPECT_FALSE(FindLink(*host_, "vh9")) << "a failed enslave leaves no half-made pair";
}

TEST_F(LinkTest, StateMtuMacPromisc) {
  MakePair("vh7", false);
  SetLinkUp(*host_, "vh7");
  EXPECT_TRUE(FindLink(*host_, "vh7")->admin_up);
  // A veth is oper-up only when both ends are up.
  EXPECT_FALSE(WaitOperUp(*host_, "vh7", 20).has_value());
  SetLinkUp(*pod_, "eth0");
  EXPECT_TRUE(WaitOperUp(*host_, "vh7", 5000).has_value());
  EXPECT_TRUE(FindLink(*host_, "vh7")->oper_up);
  SetLinkDown(*host_, "vh7");
  EXPECT_FALSE(FindLink(*host_, "vh7")->admin_up);
  EXPECT_FALSE(WaitOperUp(*host_, "nolink", 10).has_value());

  SetMtu(*pod_, "eth0", 1280);
  EXPECT_EQ(FindLink(*pod_, "eth0")->mtu, 1280);
  SetMac(*pod_, "eth0", "02:aa:bb:cc:dd:ee");
  EXPECT_EQ(FindLink(*pod_, "eth0")->mac, "02:aa:bb:cc:dd:ee");
  EXPECT_EQ(Dev(*pod_tmp_, "eth0").value("address", ""), "02:aa:bb:cc:dd:ee");
  ExpectError(cni::kInvalidConfig, [&] { SetMac(*pod_, "eth0", "not-a-mac"); });

  SetPromisc(*host_, "vh7", true);
  EXPECT_TRUE(FindLink(*host_, "vh7")->promisc);
  SetPromisc(*host_, "vh7", false);
  EXPECT_FALSE(FindLink(*host_, "vh7")->promisc);
}

TEST_F(LinkTest, KernelRefusalsNameTheCause) {
  std::string msg = ExpectError(cni::kNetlink, [&] { SetMtu(*host_, "nolink", 1400); });
  EXPECT_NE(msg.find("nolink"), std::string::npos) << msg;
  EXPECT_NE(msg.find("No such device"), std::string::npos) << msg;
  MakePair("vh8", false);
  msg = ExpectError(cni::kNetlink, [&] { SetMtu(*host_, "vh8", 100000); });
  EXPECT_NE(msg.find("vh8"), std::string::npos) << msg;
  EXPECT_NE(msg.find("Invalid argument"), std::string::npos) << msg;
}

}  // namespace
}  // namespace netiface::nl
