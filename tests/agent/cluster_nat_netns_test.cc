// The agent's cluster masquerade/forward rules against the kernel, inside throw-away namespaces: the
// test thread enters a namespace only around each nat call, and reads the ruleset back with the nft CLI
// there. A traffic check runs over the two-node topology of kernel_topology.h.
#include <algorithm>
#include <sstream>

#include <gtest/gtest.h>

#include "kernel_topology.h"
#include "netiface/cni/error.h"
#include "netiface/nat/cluster.h"
#include "netiface/nat/nat.h"
#include "netiface/netlink/netns.h"

namespace netiface::nat {
namespace {

cni::IpNet Net(const std::string& s) { return *cni::IpNet::Parse(s); }

ClusterRules V4Rules(const std::string& subnet = "10.5.1.0/24") {
  ClusterRules r;
  r.v4 = ClusterFamily{Net("10.5.0.0/16"), Net(subnet)};
  r.masquerade = true;
  r.forward = true;
  return r;
}

// The rule lines nft prints for V4Rules(subnet), per chain.
std::vector<std::string> ExpectedPostrouting(const std::string& sub) {
  const std::string c = " comment \"netiface-agent:cluster\"";
  return {"meta mark & 0x00004000 == 0x00004000 return" + c,
          "ip saddr " + sub + " ip daddr 10.5.0.0/16 return" + c,
          "ip saddr 10.5.0.0/16 ip daddr " + sub + " return" + c,
          "ip saddr != 10.5.0.0/16 ip daddr " + sub + " return" + c,
          "ip saddr 10.5.0.0/16 ip daddr != 224.0.0.0/4 masquerade fully-random" + c,
          "ip saddr != 10.5.0.0/16 ip daddr 10.5.0.0/16 masquerade fully-random" + c};
}
std::vector<std::string> ExpectedForward() {
  const std::string c = " comment \"netiface-agent:cluster\"";
  return {"ip saddr 10.5.0.0/16 accept" + c, "ip daddr 10.5.0.0/16 accept" + c};
}

class ClusterNatNetns : public ::testing::Test {
 protected:
  void SetUp() override {
    NETIFACE_REQUIRE_ROOT();
    host_ = std::make_unique<netiface::testing::TempNetns>("agnat");
    ns_ = nl::NetNs::Open(host_->path());
    ASSERT_TRUE(ns_);
  }

  template <typename F>
  auto In(F&& f) {
    nl::ScopedSetNs in(*ns_);
    return f();
  }

  // The rule lines of a chain of ours as `nft list chain` prints them ("" lines and the header dropped).
  std::vector<std::string> ChainRules(const std::string& chain, bool handles = false) const {
    auto r = host_->Sh(std::string("nft ") + (handles ? "-a " : "") + "list chain inet netiface " + chain);
    std::vector<std::string> out;
    std::istringstream lines(r.out);
    for (std::string line; std::getline(lines, line);) {
      line.erase(0, line.find_first_not_of('\t'));
      if (line.empty() || line.starts_with("table") || line.starts_with("chain") || line.starts_with("type") ||
          line == "}") {
        continue;
      }
      out.push_back(line);
    }
    return out;
  }
  std::string Ruleset(const char* flags = "") const {
    return host_->Sh(std::string("nft ") + flags + " list ruleset").out;
  }

  std::unique_ptr<netiface::testing::TempNetns> host_;
  std::optional<nl::NetNs> ns_;
};

TEST_F(ClusterNatNetns, ApplyCreatesExactlyThePlannedRulesAndIsIdempotent) {
  In([&] { ApplyClusterRules(V4Rules()); });
  EXPECT_EQ(ChainRules("cluster_postrouting"), ExpectedPostrouting("10.5.1.0/24"));
  EXPECT_EQ(ChainRules("cluster_forward"), ExpectedForward());
  auto chains = host_->Sh("nft -j list chains").Json();
  int ours = 0;
  for (const auto& item : chains["nftables"]) {
    if (item.contains("chain") && item["chain"].value("table", "") == "netiface") ++ours;
  }
  EXPECT_EQ(ours, 2) << chains.dump();  // no attachment chain was created

  const std::string before = Ruleset("-a");
  In([&] { ApplyClusterRules(V4Rules()); });
  EXPECT_EQ(Ruleset("-a"), before);  // handles unchanged: nothing was written
  EXPECT_TRUE(In([&] { return MissingClusterRules(V4Rules()); }).empty());
}

TEST_F(ClusterNatNetns, ChangedSubnetMovesTheRulesInPlace) {
  In([&] { ApplyClusterRules(V4Rules()); });
  const auto forward_before = ChainRules("cluster_forward", /*handles=*/true);
  In([&] { ApplyClusterRules(V4Rules("10.5.7.0/24")); });
  EXPECT_EQ(ChainRules("cluster_postrouting"), ExpectedPostrouting("10.5.7.0/24"));
  EXPECT_EQ(ChainRules("cluster_forward", true), forward_before);  // unchanged chain untouched
}

TEST_F(ClusterNatNetns, MissingReportsADeletedRuleAndApplyRestoresIt) {
  In([&] { ApplyClusterRules(V4Rules()); });
  auto listing = host_->Sh("nft -j -a list chain inet netiface cluster_postrouting").Json();
  std::vector<uint64_t> handles;
  for (const auto& item : listing["nftables"]) {
    if (item.contains("rule")) handles.push_back(item["rule"]["handle"].get<uint64_t>());
  }
  ASSERT_EQ(handles.size(), 6u);
  ASSERT_EQ(
      host_->Sh("nft delete rule inet netiface cluster_postrouting handle " + std::to_string(handles[1])).exit_code, 0);
  EXPECT_EQ(In([&] { return MissingClusterRules(V4Rules()); }),
            std::vector<std::string>{"cluster_postrouting: ip saddr 10.5.1.0/24 ip daddr 10.5.0.0/16 return"});
  In([&] { ApplyClusterRules(V4Rules()); });
  EXPECT_EQ(ChainRules("cluster_postrouting"), ExpectedPostrouting("10.5.1.0/24"));
  EXPECT_TRUE(In([&] { return MissingClusterRules(V4Rules()); }).empty());
}

TEST_F(ClusterNatNetns, RemoveLeavesTheRulesetAsBefore) {
  ASSERT_EQ(host_->Sh("nft add table ip other && nft add chain ip other c").exit_code, 0);
  const std::string before = Ruleset();
  EXPECT_FALSE(In([&] { return RemoveClusterRules(); }));
  ClusterRules dual = V4Rules();
  dual.v6 = ClusterFamily{Net("fd00:5::/48"), Net("fd00:5:0:1::/64")};
  In([&] { ApplyClusterRules(dual); });
  EXPECT_EQ(ChainRules("cluster_postrouting").size(), 11u);
  EXPECT_EQ(ChainRules("cluster_forward").size(), 4u);
  EXPECT_TRUE(In([&] { return RemoveClusterRules(); }));
  EXPECT_EQ(Ruleset(), before);
  // Both switches off means no rules at all.
  In([&] { ApplyClusterRules(V4Rules()); });
  ClusterRules off = V4Rules();
  off.masquerade = off.forward = false;
  In([&] { ApplyClusterRules(off); });
  EXPECT_EQ(Ruleset(), before);
}

TEST_F(ClusterNatNetns, CoexistsWithAnAttachmentsRules) {
  Spec att;
  att.tag = {"net1", "ctr1", "eth0"};
  att.masquerade = {Net("10.5.1.2/24")};
  In([&] { Apply(att); });
  In([&] { ApplyClusterRules(V4Rules()); });
  In([&] { Verify(att); });
  const auto attachment_rules = ChainRules("postrouting", true);
  ASSERT_EQ(attachment_rules.size(), 1u);

  EXPECT_TRUE(In([&] { return RemoveClusterRules(); }));
  EXPECT_EQ(ChainRules("postrouting", true), attachment_rules);
  EXPECT_NE(host_->Sh("nft list chain inet netiface cluster_postrouting").exit_code, 0);

  In([&] { ApplyClusterRules(V4Rules()); });
  EXPECT_TRUE(In([&] { return Remove(att.tag); }));
  EXPECT_TRUE(In([&] { return MissingClusterRules(V4Rules()); }).empty());
  EXPECT_NE(host_->Sh("nft list chain inet netiface postrouting").exit_code, 0);
  EXPECT_TRUE(In([&] { return RemoveClusterRules(); }));
  EXPECT_EQ(Ruleset(), "");
}

TEST_F(ClusterNatNetns, InvalidOwnerIsRejectedBeforeAnyChange) {
  ClusterRules r = V4Rules();
  r.owner = "bad owner";
  EXPECT_THROW(In([&] { ApplyClusterRules(r); }), cni::Error);
  EXPECT_THROW(In([&] { return RemoveClusterRules("x;y"); }), cni::Error);
  EXPECT_EQ(Ruleset(), "");
}

// Packets seen by an input hook, by source: "table ip seen" with one counter per address.
void CountEchoRequests(const netiface::testing::TempNetns& ns, const std::vector<std::string>& sources) {
  std::string cmds = "nft add table ip seen && nft add chain ip seen in '{ type filter hook input priority 0; }'";
  for (const auto& s : sources) cmds += " && nft add rule ip seen in ip saddr " + s + " icmp type echo-request counter";
  agent::testing::Topology::Must(ns, cmds);
}
uint64_t Seen(const netiface::testing::TempNetns& ns, const std::string& source) {
  auto j = ns.Sh("nft -j list table ip seen").Json();
  for (const auto& item : j["nftables"]) {
    if (!item.contains("rule")) continue;
    uint64_t packets = 0;
    bool match = false;
    for (const auto& e : item["rule"]["expr"]) {
      if (e.contains("match") && e["match"]["right"] == source) match = true;
      if (e.contains("counter")) packets = e["counter"]["packets"].get<uint64_t>();
    }
    if (match) return packets;
  }
  ADD_FAILURE() << "no counter for " << source << ": " << j.dump();
  return 0;
}

TEST(ClusterNatTraffic, PodToOutsideIsMasqueradedPodToPodKeepsItsSource) {
  NETIFACE_REQUIRE_ROOT();
  agent::testing::Topology topo(2);
  ASSERT_FALSE(::testing::Test::HasFatalFailure());
  const auto& n1 = topo.node(1);
  const auto& n2 = topo.node(2);
  agent::testing::Topology::Must(*n1.node, "ip route add 10.5.2.0/24 via 192.0.2.2 dev eth0");
  agent::testing::Topology::Must(*n2.node, "ip route add 10.5.1.0/24 via 192.0.2.1 dev eth0");
  CountEchoRequests(topo.underlay(), {"192.0.2.1", "10.5.1.2"});
  CountEchoRequests(*n2.pod, {"192.0.2.1", "10.5.1.2"});

  EXPECT_FALSE(n1.pod->Ping("192.0.2.254")) << "the outside answers a pod without masquerade";
  EXPECT_EQ(Seen(topo.underlay(), "10.5.1.2"), 1u);

  auto ns = nl::NetNs::Open(n1.node->path());
  ASSERT_TRUE(ns);
  {
    nl::ScopedSetNs in(*ns);
    ApplyClusterRules(V4Rules());
  }
  EXPECT_TRUE(n1.pod->Ping("192.0.2.254", 2));
  EXPECT_EQ(Seen(topo.underlay(), "192.0.2.1"), 2u);  // the outside sees the node's address
  EXPECT_EQ(Seen(topo.underlay(), "10.5.1.2"), 1u);

  EXPECT_TRUE(n1.pod->Ping(n2.pod_ip(), 2));
  EXPECT_EQ(Seen(*n2.pod, "10.5.1.2"), 2u);  // pod to remote pod keeps the pod's address
  EXPECT_EQ(Seen(*n2.pod, "192.0.2.1"), 0u);

  nl::ScopedSetNs in(*ns);
  EXPECT_TRUE(RemoveClusterRules());
}

}  // namespace
}  // namespace netiface::nat
