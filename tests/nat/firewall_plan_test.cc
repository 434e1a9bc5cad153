// The firewall plan as values: the accepts per address and family, the isolation pair, the comment, the
// kernel's JSON of the statements read back (listing taken from nft 1.0.6), GC's choice.
#include "firewall_plan.h"

#include <gtest/gtest.h>

#include "netiface/cni/error.h"

namespace netiface::nat {
namespace {

cni::IpAddr Addr(const char* s) { return *cni::IpAddr::Parse(s); }

const std::string kCid = "7e6d5c4b3a29180f7e6d5c4b3a29180f7e6d5c4b3a29180f7e6d5c4b3a29180f";

TEST(FirewallPlan, AcceptsPerAddressAndTheIsolationPair) {
  FirewallSpec s{.tag = {"podman", kCid, "eth0"}, .addrs = {Addr("10.88.0.5"), Addr("fd00:88::5")}};
  EXPECT_EQ(PlanFirewallRules(s), (std::vector<Rule>{
                                      {"firewall_forward", "ip daddr 10.88.0.5 ct state established,related accept"},
                                      {"firewall_forward", "ip saddr 10.88.0.5 accept"},
                                      {"firewall_forward", "ip6 daddr fd00:88::5 ct state established,related accept"},
                                      {"firewall_forward", "ip6 saddr fd00:88::5 accept"},
                                  }));
  s.isolated_bridge = "cni-podman0";
  std::vector<Rule> rules = PlanFirewallRules(s);
  ASSERT_EQ(rules.size(), 6u);
  // Chain order: the jump's target first (it must exist before the jump), then the base chains.
  EXPECT_EQ(rules[0], (Rule{"firewall_isolation_stage2", R"(oifname "cni-podman0" drop)"}));
  EXPECT_EQ(rules[1], (Rule{"firewall_isolation",
                            R"(iifname "cni-podman0" oifname != "cni-podman0" jump firewall_isolation_stage2)"}));
  EXPECT_EQ(FirewallComment(s.tag), "netiface-firewall:podman:" + kCid + ":eth0");
}

TEST(FirewallPlan, RefusesWhatCannotReachNftSyntax) {
  for (const char* bridge : {"br 0", "br\"0", "a-very-long-bridge-name", "br;0"}) {
    SCOPED_TRACE(bridge);
    FirewallSpec s{.tag = {"n", kCid, "eth0"}, .addrs = {Addr("10.0.0.2")}, .isolated_bridge = bridge};
    EXPECT_THROW(PlanFirewallRules(s), cni::Error);
  }
  EXPECT_THROW(PlanFirewallRules({.tag = {"n;x", kCid, "eth0"}}), cni::Error);
}

TEST(FirewallPlan, ReadsTheKernelsJsonBack) {
  const char* listing = R"({"nftables":[{"metainfo":{"version":"1.0.6"}},
    {"table":{"family":"inet","name":"netiface","handle":1}},
    {"chain":{"family":"inet","table":"netiface","name":"firewall_isolation_stage2","handle":1}},
    {"chain":{"family":"inet","table":"netiface","name":"firewall_isolation","handle":2}},
    {"chain":{"family":"inet","table":"netiface","name":"firewall_forward","handle":3}},
    {"rule":{"family":"inet","table":"netiface","chain":"firewall_isolation_stage2","handle":4,"comment":"c",
      "expr":[{"match":{"op":"==","left":{"meta":{"key":"oifname"}},"right":"cni-podman0"}},{"drop":null}]}},
    {"rule":{"family":"inet","table":"netiface","chain":"firewall_isolation","handle":5,"comment":"c",
      "expr":[{"match":{"op":"==","left":{"meta":{"key":"iifname"}},"right":"cni-podman0"}},
              {"match":{"op":"!=","left":{"meta":{"key":"oifname"}},"right":"cni-podman0"}},
              {"jump":{"target":"firewall_isolation_stage2"}}]}},
    {"rule":{"family":"inet","table":"netiface","chain":"firewall_forward","handle":6,"comment":"c",
      "expr":[{"match":{"op":"==","left":{"payload":{"protocol":"ip","field":"daddr"}},"right":"10.88.0.2"}},
              {"match":{"op":"in","left":{"ct":{"key":"state"}},"right":["established","related"]}},
              {"accept":null}]}},
    {"rule":{"family":"inet","table":"netiface","chain":"firewall_forward","handle":7,"comment":"c",
      "expr":[{"match":{"op":"==","left":{"payload":{"protocol":"ip6","field":"saddr"}},"right":"fd00::2"}},
              {"accept":null}]}}]})";
  Listing l = ParseListing(listing);
  ASSERT_EQ(l.rules.size(), 4u);
  EXPECT_EQ(l.rules[0].body, R"(oifname "cni-podman0" drop)");
  EXPECT_EQ(l.rules[1].body, R"(iifname "cni-podman0" oifname != "cni-podman0" jump firewall_isolation_stage2)");
  EXPECT_EQ(l.rules[2].body, "ip daddr 10.88.0.2 ct state established,related accept");
  EXPECT_EQ(l.rules[3].body, "ip6 saddr fd00::2 accept");
  // An interface name nft would print quoted differently, or a jump elsewhere, never reads as ours.
  EXPECT_EQ(FirewallStatementFromJson(nlohmann::json::parse(R"({"jump":{"target":"x y"}})")), std::nullopt);
  EXPECT_EQ(FirewallStatementFromJson(
                nlohmann::json::parse(R"({"match":{"op":"==","left":{"meta":{"key":"iifname"}},"right":"a b"}})")),
            std::nullopt);
}

TEST(FirewallPlan, GcPicksTheNetworksStaleAttachmentsOnly) {
  Listing l;
  auto rule = [&](const Tag& t) { l.rules.push_back({"firewall_forward", 1, FirewallComment(t), "x"}); };
  rule({"podman", "a", "eth0"});
  rule({"podman", "b", "eth0"});
  rule({"other", "c", "eth0"});
  l.rules.push_back({"portmap_prerouting", 2, TagCommentWith("netiface-portmap:", {"podman", "b", "eth0"}), "y"});
  EXPECT_EQ(StaleFirewallComments(l, "podman", {{"a", "eth0"}}),
            (std::set<std::string>{FirewallComment({"podman", "b", "eth0"})}));
}

}  // namespace
}  // namespace netiface::nat
