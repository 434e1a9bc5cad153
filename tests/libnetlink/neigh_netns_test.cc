#include "netiface/netlink/neigh.h"

#include <algorithm>

#include <gtest/gtest.h>

#include "netiface/netlink/addr.h"
#include "netiface/netlink/route.h"
#include "netiface/netlink/vxlan.h"
#include "netns_fixture.h"

namespace netiface::nl {
namespace {

cni::IpAddr Ip(const char* s) { return cni::IpAddr::Parse(s).value(); }
cni::IpNet Net(const char* s) { return cni::IpNet::Parse(s).value(); }

// The host and pod namespaces of the fixture act as two nodes joined by a veth (ul0 / eth0), each
// with a flannel-style vxlan device on it.
class NeighTest : public NetnsTest {
 protected:
  void SetUp() override {
    NetnsTest::SetUp();
    if (IsSkipped()) return;
    MakePair("ul0");
    AddAddress(*host_, Index(*host_, "ul0"), Net("192.0.2.1/24"));
    AddAddress(*pod_, Index(*pod_, "eth0"), Net("192.0.2.2/24"));
    vx1_ = MakeVxlan(*host_, "ul0", "192.0.2.1", "0e:00:00:00:00:01");
  }

  int MakeVxlan(Socket& s, const std::string& lower, const char* local, const std::string& mac) {
    CreateVxlan(
        s,
        {.name = "flannel.1", .vni = 1, .local = Ip(local), .lower_ifindex = Index(s, lower), .mtu = 1450, .mac = mac});
    SetLinkUp(s, "flannel.1");
    return Index(s, "flannel.1");
  }

  nlohmann::json Neigh(const std::string& dst) {
    auto j = host_tmp_->IpJson("neigh show dev flannel.1 to " + dst);
    return j.is_array() && j.size() == 1 ? j[0] : nlohmann::json();
  }

  // `bridge -j fdb show dev flannel.1` entries for `mac`.
  nlohmann::json Fdb(const testing::TempNetns& ns, const std::string& mac) {
    auto r = ns.Sh("bridge -j fdb show dev flannel.1");
    EXPECT_EQ(r.exit_code, 0) << r.err;
    nlohmann::json out = nlohmann::json::array();
    for (const auto& e : r.Json()) {
      if (e.value("mac", "") == mac) out.push_back(e);
    }
    return out;
  }

  int vx1_ = 0;
};

TEST_F(NeighTest, PermanentNeighborReplaceListDelete) {
  ReplaceNeighbor(*host_, {vx1_, Ip("10.5.2.0"), "0e:00:00:00:00:02"});
  auto j = Neigh("10.5.2.0");
  EXPECT_EQ(j.value("lladdr", ""), "0e:00:00:00:00:02") << j.dump();
  EXPECT_EQ(j["state"], nlohmann::json::array({"PERMANENT"})) << j.dump();

  ReplaceNeighbor(*host_, {vx1_, Ip("10.5.2.0"), "0E:00:00:00:00:0A"});
  EXPECT_EQ(Neigh("10.5.2.0").value("lladdr", ""), "0e:00:00:00:00:0a") << "replaced in place";
  ReplaceNeighbor(*host_, {vx1_, Ip("fd00:5:2::"), "0e:00:00:00:00:03"});
  EXPECT_EQ(Neigh("fd00:5:2::").value("lladdr", ""), "0e:00:00:00:00:03");

  auto list = ListPermanentNeighbors(*host_, vx1_);
  ASSERT_EQ(list.size(), 2u);
  std::sort(list.begin(), list.end(), [](const NeighSpec& a, const NeighSpec& b) { return a.dst < b.dst; });
  EXPECT_EQ(list[0].dst, Ip("10.5.2.0"));
  EXPECT_EQ(list[0].mac, "0e:00:00:00:00:0a");
  EXPECT_EQ(list[0].ifindex, vx1_);
  EXPECT_EQ(list[1].dst, Ip("fd00:5:2::"));
  EXPECT_EQ(list[1].mac, "0e:00:00:00:00:03");
  EXPECT_TRUE(ListPermanentNeighbors(*host_, Index(*host_, "ul0")).empty()) << "only the link asked for";

  EXPECT_TRUE(DeleteNeighbor(*host_, {vx1_, Ip("10.5.2.0"), ""}));
  EXPECT_FALSE(DeleteNeighbor(*host_, {vx1_, Ip("10.5.2.0"), ""}));
  EXPECT_TRUE(Neigh("10.5.2.0").is_null());
  EXPECT_TRUE(DeleteNeighbor(*host_, {vx1_, Ip("fd00:5:2::"), ""}));
  EXPECT_TRUE(ListPermanentNeighbors(*host_, vx1_).empty());
}

TEST_F(NeighTest, NonPermanentNeighborsAreNotListed) {
  ASSERT_EQ(host_tmp_->Sh("ip neigh add 10.5.3.0 lladdr 0e:00:00:00:00:04 dev flannel.1 nud reachable").exit_code, 0);
  ReplaceNeighbor(*host_, {vx1_, Ip("10.5.2.0"), "0e:00:00:00:00:02"});
  auto list = ListPermanentNeighbors(*host_, vx1_);
  ASSERT_EQ(list.size(), 1u);
  EXPECT_EQ(list[0].dst, Ip("10.5.2.0"));
}

TEST_F(NeighTest, FdbReplaceListDelete) {
  ReplaceFdb(*host_, {vx1_, "0e:00:00:00:00:02", Ip("192.0.2.2")});
  auto j = Fdb(*host_tmp_, "0e:00:00:00:00:02");
  ASSERT_EQ(j.size(), 1u) << j.dump();
  EXPECT_EQ(j[0].value("dst", ""), "192.0.2.2") << j.dump();
  EXPECT_EQ(j[0]["flags"], nlohmann::json::array({"self"})) << j.dump();
  EXPECT_EQ(j[0].value("state", ""), "permanent") << j.dump();

  ReplaceFdb(*host_, {vx1_, "0e:00:00:00:00:02", Ip("192.0.2.3")});
  j = Fdb(*host_tmp_, "0e:00:00:00:00:02");
  ASSERT_EQ(j.size(), 1u) << "replaced, not appended: " << j.dump();
  EXPECT_EQ(j[0].value("dst", ""), "192.0.2.3");
  ReplaceFdb(*host_, {vx1_, "0e:00:00:00:00:05", Ip("192.0.2.5")});
  EXPECT_EQ(Fdb(*host_tmp_, "0e:00:00:00:00:05").at(0).value("dst", ""), "192.0.2.5");
  std::string msg = ExpectError(cni::kNetlink, [&] {
    ReplaceFdb(*host_, {vx1_, "0e:00:00:00:00:06", Ip("fd00:2::6")});
  });
  EXPECT_NE(msg.find("Address family not supported"), std::string::npos) << "an IPv4 vxlan, the errno kept: " << msg;

  auto list = ListFdb(*host_, vx1_);
  ASSERT_EQ(list.size(), 2u) << "entries without a dst (the device's own multicast MACs) are left out";
  std::sort(list.begin(), list.end(), [](const FdbSpec& a, const FdbSpec& b) { return a.mac < b.mac; });
  EXPECT_EQ(list[0].mac, "0e:00:00:00:00:02");
  EXPECT_EQ(list[0].dst, Ip("192.0.2.3"));
  EXPECT_EQ(list[0].ifindex, vx1_);
  EXPECT_EQ(list[1].mac, "0e:00:00:00:00:05");
  EXPECT_EQ(list[1].dst, Ip("192.0.2.5"));

  EXPECT_FALSE(DeleteFdb(*host_, {vx1_, "0e:00:00:00:00:02", Ip("192.0.2.2")})) << "the old dst is gone";
  EXPECT_TRUE(DeleteFdb(*host_, {vx1_, "0e:00:00:00:00:02", Ip("192.0.2.3")}));
  EXPECT_FALSE(DeleteFdb(*host_, {vx1_, "0e:00:00:00:00:02", Ip("192.0.2.3")}));
  EXPECT_TRUE(Fdb(*host_tmp_, "0e:00:00:00:00:02").empty());
  EXPECT_TRUE(DeleteFdb(*host_, {vx1_, "0e:00:00:00:00:05", Ip("192.0.2.5")}));
  EXPECT_TRUE(ListFdb(*host_, vx1_).empty());
}

TEST_F(NeighTest, FdbOfAnIpv6Vxlan) {
  AddAddress(*host_, Index(*host_, "ul0"), Net("fd00:2::1/64"), /*nodad=*/true);
  CreateVxlan(*host_, {.name = "flannel-v6.1", .local = Ip("fd00:2::1"), .lower_ifindex = Index(*host_, "ul0")});
  int vx6 = Index(*host_, "flannel-v6.1");
  ReplaceFdb(*host_, {vx6, "0e:00:00:00:00:05", Ip("fd00:2::5")});
  auto list = ListFdb(*host_, vx6);
  ASSERT_EQ(list.size(), 1u);
  EXPECT_EQ(list[0].dst, Ip("fd00:2::5"));
  EXPECT_TRUE(DeleteFdb(*host_, {vx6, "0e:00:00:00:00:05", Ip("fd00:2::5")}));
  EXPECT_TRUE(ListFdb(*host_, vx6).empty());
}

TEST_F(NeighTest, BadInputAndMissingLink) {
  ExpectError(cni::kInvalidConfig, [&] { ReplaceNeighbor(*host_, {vx1_, Ip("10.5.2.0"), "not-a-mac"}); });
  ExpectError(cni::kInvalidConfig, [&] { ReplaceNeighbor(*host_, {0, Ip("10.5.2.0"), "0e:00:00:00:00:02"}); });
  ExpectError(cni::kInvalidConfig, [&] { ReplaceFdb(*host_, {vx1_, "", Ip("192.0.2.2")}); });
  ExpectError(cni::kInvalidConfig, [&] { DeleteFdb(*host_, {-1, "0e:00:00:00:00:02", Ip("192.0.2.2")}); });
  std::string msg = ExpectError(cni::kNetlink, [&] {
    ReplaceFdb(*host_, {vx1_ + 1000, "0e:00:00:00:00:02", Ip("192.0.2.2")});
  });
  EXPECT_NE(msg.find("192.0.2.2"), std::string::npos) << msg;
  ExpectError(cni::kNetlink, [&] { ReplaceNeighbor(*host_, {vx1_ + 1000, Ip("10.5.2.0"), "0e:00:00:00:00:02"}); });
  EXPECT_TRUE(ListPermanentNeighbors(*host_, vx1_).empty());
  EXPECT_TRUE(ListFdb(*host_, vx1_).empty());
}

// Two nodes: static neighbour + FDB entries only (learning off), so a ping across the vxlan
// addresses works only if both kinds of entry are right; the peer's nft counter sees the UDP 8472.
TEST_F(NeighTest, PingAcrossVxlanWithStaticEntries) {
  int vx2 = MakeVxlan(*pod_, "eth0", "192.0.2.2", "0e:00:00:00:00:02");
  AddAddress(*host_, vx1_, Net("10.5.1.0/32"));
  AddAddress(*pod_, vx2, Net("10.5.2.0/32"));
  ASSERT_EQ(pod_tmp_
                ->Sh("nft add table inet vxt && nft add chain inet vxt in "
                     "'{ type filter hook input priority 0; }' && "
                     "nft add rule inet vxt in udp dport 8472 counter")
                .exit_code,
            0);
  EXPECT_FALSE(host_tmp_->Ping("10.5.2.0")) << "no entries yet: nowhere to send";

  ReplaceNeighbor(*host_, {vx1_, Ip("10.5.2.0"), "0e:00:00:00:00:02"});
  ReplaceFdb(*host_, {vx1_, "0e:00:00:00:00:02", Ip("192.0.2.2")});
  ReplaceRoute(*host_, {.dst = Net("10.5.2.0/24"), .gw = Ip("10.5.2.0"), .ifindex = vx1_, .onlink = true});
  ReplaceNeighbor(*pod_, {vx2, Ip("10.5.1.0"), "0e:00:00:00:00:01"});
  ReplaceFdb(*pod_, {vx2, "0e:00:00:00:00:01", Ip("192.0.2.1")});
  ReplaceRoute(*pod_, {.dst = Net("10.5.1.0/24"), .gw = Ip("10.5.1.0"), .ifindex = vx2, .onlink = true});

  EXPECT_TRUE(host_tmp_->Ping("10.5.2.0", 3));
  auto r = pod_tmp_->Sh("nft -j list table inet vxt");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  uint64_t packets = 0;
  for (const auto& item : r.Json().value("nftables", nlohmann::json::array())) {
    if (!item.contains("rule")) continue;
    for (const auto& e : item["rule"].value("expr", nlohmann::json::array())) {
      if (e.contains("counter")) packets = e["counter"].value("packets", uint64_t{0});
    }
  }
  EXPECT_GE(packets, 3u) << r.out;
  auto fdb = ListFdb(*pod_, vx2);
  ASSERT_EQ(fdb.size(), 1u) << "nothing learned";
  EXPECT_EQ(fdb[0].mac, "0e:00:00:00:00:01");
}

}  // namespace
}  // namespace netiface::nl
