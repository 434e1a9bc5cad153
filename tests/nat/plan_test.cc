// The pure half of the nat library: rules planned for a spec, comments, the JSON listing and the
// transactions computed from it. No root, no nftables.
#include "plan.h"

#include <iterator>
#include <sstream>

#include <gtest/gtest.h>

#include "netiface/cni/error.h"

namespace netiface::nat {
namespace {

cni::IpNet Net(const char* s) { return *cni::IpNet::Parse(s); }
cni::IpAddr Addr(const char* s) { return *cni::IpAddr::Parse(s); }

Spec DualStack() {
  Spec s;
  s.tag = {"net1", "ctr1", "eth0"};
  s.masquerade = {Net("10.22.0.5/24"), Net("fd00:22::5/64")};
  s.floating_ips = {{Addr("203.0.113.7"), Addr("10.22.0.5")}};
  return s;
}

// A listing as libnftables prints it for the rules in `rules` (chain, handle, comment, expr JSON).
std::string ListingJson(const std::vector<std::string>& chains, const std::vector<nlohmann::json>& rules) {
  nlohmann::json items = nlohmann::json::array();
  items.push_back({{"metainfo", {{"version", "1.0.6"}, {"json_schema_version", 1}}}});
  items.push_back({{"table", {{"family", "inet"}, {"name", "netiface"}, {"handle", 1}}}});
  for (const auto& c : chains) items.push_back({{"chain", {{"family", "inet"}, {"table", "netiface"}, {"name", c}}}});
  for (const auto& r : rules) items.push_back({{"rule", r}});
  return nlohmann::json{{"nftables", items}}.dump();
}

nlohmann::json Match(const char* proto, const char* field, const char* op, nlohmann::json right) {
  return {{"match", {{"op", op}, {"left", {{"payload", {{"protocol", proto}, {"field", field}}}}}, {"right", right}}}};
}

nlohmann::json Prefix(const char* addr, int len) { return {{"prefix", {{"addr", addr}, {"len", len}}}}; }

nlohmann::json MasqRule(uint64_t handle, const std::string& comment) {
  return {{"family", "inet"},
          {"table", "netiface"},
          {"chain", "postrouting"},
          {"handle", handle},
          {"comment", comment},
          {"expr",
           {Match("ip", "saddr", "==", "10.22.0.5"),
            Match("ip", "daddr", "!=", Prefix("10.22.0.0", 24)),
            Match("ip", "daddr", "!=", Prefix("224.0.0.0", 4)),
            {{"masquerade", nullptr}}}}};
}

TEST(NatPlan, PlansMasqueradeAndFloatingRulesInChainOrder) {
  auto rules = PlanRules(DualStack());
  std::vector<Rule> want = {
      {"prerouting", "ip daddr 203.0.113.7 dnat ip to 10.22.0.5"},
      {"output", "ip daddr 203.0.113.7 dnat ip to 10.22.0.5"},
      {"postrouting_floating", "ip saddr 10.22.0.5 snat ip to 203.0.113.7"},
      {"postrouting", "ip saddr 10.22.0.5 ip daddr != 10.22.0.0/24 ip daddr != 224.0.0.0/4 masquerade"},
      {"postrouting", "ip6 saddr fd00:22::5 ip6 daddr != fd00:22::/64 ip6 daddr != ff00::/8 masquerade"},
  };
  EXPECT_EQ(rules, want);
}

TEST(NatPlan, DropsDuplicatesAndZeroLengthPrefixes) {
  Spec s;
  s.tag = {"n", "c", "eth0"};
  s.masquerade = {Net("10.0.0.2/24"), Net("10.0.0.2/24"), Net("10.0.0.3/0")};
  EXPECT_EQ(PlanRules(s).size(), 1u);
  EXPECT_TRUE(PlanRules(Spec{{"n", "c", "eth0"}, {}, {}}).empty());
}

TEST(NatPlan, RejectsUnsafeTagsAndMixedFamilies) {
  for (const Tag& bad : {Tag{"net 1", "c", "eth0"}, Tag{"n", "c\"; flush ruleset", "eth0"}, Tag{"n", "c", ""},
                         Tag{"n:x", "c", "eth0"}}) {
    Spec s{bad, {Net("10.0.0.2/24")}, {}};
    try {
      PlanRules(s);
      ADD_FAILURE() << "accepted " << bad.network << "/" << bad.container_id << "/" << bad.ifname;
    } catch (const cni::Error& e) {
      EXPECT_EQ(e.code(), cni::kNatFailure);
    }
  }
  Spec mixed{{"n", "c", "eth0"}, {}, {{Addr("203.0.113.7"), Addr("fd00::5")}}};
  EXPECT_THROW(PlanRules(mixed), cni::Error);
}

TEST(NatPlan, CommentsAreReadableAndFitWhenLong) {
  EXPECT_EQ(TagComment({"net1", "ctr1", "eth0"}), "netiface:net1:ctr1:eth0");
  EXPECT_EQ(NetworkCommentPrefix("net1"), "netiface:net1:");
  std::string long_net(200, 'n');
  std::string long_id(200, 'c');
  auto a = TagComment({long_net, long_id, "eth0"});
  auto b = TagComment({long_net, long_id, "eth1"});
  EXPECT_LE(a.size(), kMaxComment);
  EXPECT_NE(a, b);
  EXPECT_TRUE(a.starts_with(NetworkCommentPrefix(long_net)));
  EXPECT_NE(NetworkCommentPrefix(long_net), NetworkCommentPrefix(long_net + "x"));
  // A 64-character container ID still reads in full.
  std::string id64(64, 'f');
  EXPECT_EQ(TagComment({"net1", id64, "eth0"}), "netiface:net1:" + id64 + ":eth0");
}

TEST(NatPlan, ListedRulesRenderLikePlannedOnes) {
  auto listing = ParseListing(ListingJson({"postrouting"}, {MasqRule(7, "netiface:net1:ctr1:eth0")}));
  ASSERT_TRUE(listing.table_exists);
  ASSERT_EQ(listing.rules.size(), 1u);
  EXPECT_EQ(listing.rules[0].handle, 7u);
  EXPECT_EQ(listing.rules[0].body, PlanRules(Spec{{"net1", "ctr1", "eth0"}, {Net("10.22.0.5/24")}, {}})[0].body);
  nlohmann::json dnat = {Match("ip6", "daddr", "==", "2001:db8:0::7"),
                         {{"dnat", {{"family", "ip6"}, {"addr", "fd00::5"}}}}};
  EXPECT_EQ(RuleBodyFromJson(dnat), "ip6 daddr 2001:db8::7 dnat ip6 to fd00::5");
  nlohmann::json unknown = {Match("ip", "saddr", "==", "10.0.0.1"), {{"counter", {{"packets", 0}}}}};
  EXPECT_TRUE(RuleBodyFromJson(unknown).find('?') != std::string::npos);
}

TEST(NatPlan, RejectsGarbageListings) {
  EXPECT_THROW(ParseListing("not json"), cni::Error);
  EXPECT_THROW(ParseListing("{\"x\":1}"), cni::Error);
  EXPECT_FALSE(ListsOurTable(R"({"nftables":[{"table":{"family":"ip","name":"netiface"}}]})"));
  EXPECT_TRUE(ListsOurTable(R"({"nftables":[{"table":{"family":"inet","name":"netiface"}}]})"));
}

TEST(NatPlan, ApplyOnEmptyTableCreatesOnlyNeededChains) {
  Spec s{{"net1", "ctr1", "eth0"}, {Net("10.22.0.5/24")}, {}};
  auto cmds = ApplyCommands(Listing{}, TagComment(s.tag), PlanRules(s));
  EXPECT_EQ(cmds,
            "add table inet netiface\n"
            "add chain inet netiface postrouting { type nat hook postrouting priority srcnat; policy accept; }\n"
            "add rule inet netiface postrouting ip saddr 10.22.0.5 ip daddr != 10.22.0.0/24 ip daddr != "
            "224.0.0.0/4 masquerade comment \"netiface:net1:ctr1:eth0\"\n");
}

TEST(NatPlan, ApplyIsANoOpWhenRulesAreThere) {
  Spec s{{"net1", "ctr1", "eth0"}, {Net("10.22.0.5/24")}, {}};
  auto listing = ParseListing(ListingJson({"postrouting"}, {MasqRule(7, TagComment(s.tag))}));
  EXPECT_EQ(ApplyCommands(listing, TagComment(s.tag), PlanRules(s)), "");
  EXPECT_TRUE(MissingRules(listing, TagComment(s.tag), PlanRules(s)).empty());
}

TEST(NatPlan, ReapplyReplacesInPlace) {
  Spec s{{"net1", "ctr1", "eth0"}, {Net("10.22.0.6/24")}, {}};
  auto listing = ParseListing(
      ListingJson({"postrouting"}, {MasqRule(7, TagComment(s.tag)), MasqRule(8, "netiface:net1:other:eth0")}));
  auto cmds = ApplyCommands(listing, TagComment(s.tag), PlanRules(s));
  EXPECT_NE(cmds.find("add rule inet netiface postrouting position 7 ip saddr 10.22.0.6 "), std::string::npos) << cmds;
  EXPECT_NE(cmds.find("delete rule inet netiface postrouting handle 7\n"), std::string::npos);
  EXPECT_EQ(cmds.find("handle 8"), std::string::npos);
  EXPECT_EQ(cmds.find("add chain"), std::string::npos);
  auto missing = MissingRules(listing, TagComment(s.tag), PlanRules(s));
  ASSERT_EQ(missing.size(), 1u);
  EXPECT_NE(missing[0].find("10.22.0.6"), std::string::npos);
}

TEST(NatPlan, RemoveDeletesTheTableWithItsLastRule) {
  auto listing = ParseListing(ListingJson({"postrouting"}, {MasqRule(7, "netiface:net1:a:eth0")}));
  EXPECT_EQ(RemoveCommands(listing, {"netiface:net1:a:eth0"}),
            "delete rule inet netiface postrouting handle 7\ndelete table inet netiface\n");
  EXPECT_EQ(RemoveCommands(listing, {"netiface:net1:b:eth0"}), "");
}

TEST(NatPlan, RemoveKeepsOtherRulesAndTheirChains) {
  nlohmann::json dnat = {
      {"family", "inet"},
      {"table", "netiface"},
      {"chain", "prerouting"},
      {"handle", 9},
      {"comment", "netiface:net1:a:eth0"},
      {"expr", {Match("ip", "daddr", "==", "203.0.113.7"), {{"dnat", {{"family", "ip"}, {"addr", "10.22.0.5"}}}}}}};
  auto listing = ParseListing(ListingJson(
      {"postrouting", "prerouting"}, {MasqRule(7, "netiface:net1:a:eth0"), MasqRule(8, "netiface:net2:a:eth0"), dnat}));
  EXPECT_EQ(RemoveCommands(listing, {"netiface:net1:a:eth0"}),
            "delete rule inet netiface postrouting handle 7\n"
            "delete rule inet netiface prerouting handle 9\n"
            "delete chain inet netiface prerouting\n");
}

TEST(NatPlan, RemoveAlsoDeletesChainsEmptiedBehindOurBack) {
  auto listing = ParseListing(ListingJson({"postrouting", "prerouting"}, {MasqRule(7, "netiface:net1:a:eth0")}));
  EXPECT_EQ(RemoveCommands(listing, {"netiface:net1:b:eth0"}), "delete chain inet netiface prerouting\n");
  auto empty = ParseListing(ListingJson({"postrouting"}, {}));
  EXPECT_EQ(RemoveCommands(empty, {"netiface:net1:b:eth0"}), "delete table inet netiface\n");
  EXPECT_EQ(RemoveCommands(Listing{}, {"netiface:net1:b:eth0"}), "");
}

TEST(NatPlan, StaleCommentsAreThoseOfTheNetworkNotValid) {
  auto listing = ParseListing(
      ListingJson({"postrouting"}, {MasqRule(1, "netiface:net1:a:eth0"), MasqRule(2, "netiface:net1:b:eth0"),
                                    MasqRule(3, "netiface:net10:c:eth0"), MasqRule(4, "netiface:net2:d:eth0")}));
  auto stale = StaleComments(listing, "net1", {{"a", "eth0"}});
  EXPECT_EQ(stale, std::set<std::string>{"netiface:net1:b:eth0"});
  EXPECT_EQ(StaleComments(listing, "net1", {{"a", "eth0"}, {"b", "eth0"}}).size(), 0u);
  EXPECT_EQ(StaleComments(listing, "net3", {}).size(), 0u);
}

// --- the node agent's cluster rules ---

ClusterRules DualStackCluster() {
  ClusterRules r;
  r.v4 = ClusterFamily{Net("10.5.0.0/16"), Net("10.5.1.0/24")};
  r.v6 = ClusterFamily{Net("fd00:5::/48"), Net("fd00:5:0:1::/64")};
  r.masquerade = true;
  r.forward = true;
  return r;
}

TEST(NatClusterPlan, PlansFlanneldsRulesInOrder) {
  std::vector<Rule> want = {
      {"cluster_postrouting", "meta mark & 0x4000 == 0x4000 return"},
      {"cluster_postrouting", "ip saddr 10.5.1.0/24 ip daddr 10.5.0.0/16 return"},
      {"cluster_postrouting", "ip saddr 10.5.0.0/16 ip daddr 10.5.1.0/24 return"},
      {"cluster_postrouting", "ip saddr != 10.5.0.0/16 ip daddr 10.5.1.0/24 return"},
      {"cluster_postrouting", "ip saddr 10.5.0.0/16 ip daddr != 224.0.0.0/4 masquerade fully-random"},
      {"cluster_postrouting", "ip saddr != 10.5.0.0/16 ip daddr 10.5.0.0/16 masquerade fully-random"},
      {"cluster_postrouting", "ip6 saddr fd00:5:0:1::/64 ip6 daddr fd00:5::/48 return"},
      {"cluster_postrouting", "ip6 saddr fd00:5::/48 ip6 daddr fd00:5:0:1::/64 return"},
      {"cluster_postrouting", "ip6 saddr != fd00:5::/48 ip6 daddr fd00:5:0:1::/64 return"},
      {"cluster_postrouting", "ip6 saddr fd00:5::/48 ip6 daddr != ff00::/8 masquerade fully-random"},
      {"cluster_postrouting", "ip6 saddr != fd00:5::/48 ip6 daddr fd00:5::/48 masquerade fully-random"},
      {"cluster_forward", "ip saddr 10.5.0.0/16 accept"},
      {"cluster_forward", "ip daddr 10.5.0.0/16 accept"},
      {"cluster_forward", "ip6 saddr fd00:5::/48 accept"},
      {"cluster_forward", "ip6 daddr fd00:5::/48 accept"},
  };
  EXPECT_EQ(PlanClusterRules(DualStackCluster()), want);
}

TEST(NatClusterPlan, SwitchesAndFamiliesSelectRules) {
  ClusterRules r = DualStackCluster();
  r.v6.reset();
  r.forward = false;
  auto rules = PlanClusterRules(r);
  ASSERT_EQ(rules.size(), 6u);
  for (const auto& x : rules) EXPECT_EQ(x.chain, "cluster_postrouting");
  r.masquerade = false;
  r.forward = true;
  EXPECT_EQ(PlanClusterRules(r), (std::vector<Rule>{{"cluster_forward", "ip saddr 10.5.0.0/16 accept"},
                                                    {"cluster_forward", "ip daddr 10.5.0.0/16 accept"}}));
  r.forward = false;
  EXPECT_TRUE(PlanClusterRules(r).empty());
  r = DualStackCluster();
  r.v4.reset();
  r.v6.reset();
  EXPECT_TRUE(PlanClusterRules(r).empty());
}

TEST(NatClusterPlan, HostBitsAreCleared) {
  ClusterRules r;
  r.v4 = ClusterFamily{Net("10.5.3.4/16"), Net("10.5.1.9/24")};
  r.forward = true;
  r.masquerade = true;
  auto rules = PlanClusterRules(r);
  EXPECT_EQ(rules[1].body, "ip saddr 10.5.1.0/24 ip daddr 10.5.0.0/16 return");
  EXPECT_EQ(rules.back().body, "ip daddr 10.5.0.0/16 accept");
}

TEST(NatClusterPlan, RejectsBadOwnersAndNetworks) {
  for (const char* owner : {"", "a b", "x\"; flush ruleset", "a:b", "#x"}) {
    ClusterRules r = DualStackCluster();
    r.owner = owner;
    EXPECT_THROW(PlanClusterRules(r), cni::Error) << owner;
    EXPECT_THROW(ClusterComment(owner), cni::Error) << owner;
  }
  EXPECT_THROW(ClusterComment(std::string(120, 'a')), cni::Error);
  EXPECT_EQ(ClusterComment("cluster"), "netiface-agent:cluster");
  EXPECT_EQ(ClusterComment(std::string(113, 'a')).size(), kMaxComment);
  // Never equal to, nor a prefix of, an attachment's comment.
  EXPECT_FALSE(TagComment(Tag{"netiface-agent", "cluster", "x"}).starts_with(ClusterComment("cluster")));

  auto bad = [](ClusterFamily f, bool v4) {
    ClusterRules r;
    (v4 ? r.v4 : r.v6) = f;
    r.masquerade = true;
    try {
      PlanClusterRules(r);
    } catch (const cni::Error& e) {
      EXPECT_EQ(e.code(), cni::kNatFailure);
      return e.msg();
    }
    ADD_FAILURE() << "accepted " << f.network.ToString() << " / " << f.subnet.ToString();
    return std::string();
  };
  EXPECT_NE(bad({Net("10.5.0.0/16"), Net("10.6.1.0/24")}, true).find("not inside"), std::string::npos);
  EXPECT_NE(bad({Net("10.5.0.0/16"), Net("10.0.0.0/8")}, true).find("not inside"), std::string::npos);
  EXPECT_NE(bad({Net("0.0.0.0/0"), Net("10.5.1.0/24")}, true).find("prefix length 0"), std::string::npos);
  EXPECT_NE(bad({Net("fd00:5::/48"), Net("fd00:5:0:1::/64")}, true).find("wrong family"), std::string::npos);
  EXPECT_NE(bad({Net("10.5.0.0/16"), Net("10.5.1.0/24")}, false).find("wrong family"), std::string::npos);
}

// The expressions below are what `nft -j -a list table inet netiface` printed (nftables 1.0.6) for
// the planned rules, with their comment "netiface-agent:cluster".
nlohmann::json MarkReturn() {
  return nlohmann::json::parse(R"([{"match": {"op": "==", "left": {"&": [{"meta": {"key": "mark"}}, 16384]},
                                             "right": 16384}}, {"return": null}])");
}

TEST(NatClusterPlan, KernelJsonOfEveryNewStatementRendersAsPlanned) {
  EXPECT_EQ(RuleBodyFromJson(MarkReturn()), "meta mark & 0x4000 == 0x4000 return");
  EXPECT_EQ(RuleBodyFromJson({Match("ip", "saddr", "==", Prefix("10.5.1.0", 24)),
                              Match("ip", "daddr", "==", Prefix("10.5.0.0", 16)),
                              {{"return", nullptr}}}),
            "ip saddr 10.5.1.0/24 ip daddr 10.5.0.0/16 return");
  EXPECT_EQ(RuleBodyFromJson({Match("ip", "saddr", "!=", Prefix("10.5.0.0", 16)),
                              Match("ip", "daddr", "==", Prefix("10.5.1.0", 24)),
                              {{"return", nullptr}}}),
            "ip saddr != 10.5.0.0/16 ip daddr 10.5.1.0/24 return");
  EXPECT_EQ(RuleBodyFromJson({Match("ip", "saddr", "==", Prefix("10.5.0.0", 16)),
                              Match("ip", "daddr", "!=", Prefix("224.0.0.0", 4)),
                              {{"masquerade", {{"flags", "fully-random"}}}}}),
            "ip saddr 10.5.0.0/16 ip daddr != 224.0.0.0/4 masquerade fully-random");
  EXPECT_EQ(RuleBodyFromJson({Match("ip6", "saddr", "==", Prefix("fd00:5::", 48)),
                              Match("ip6", "daddr", "!=", Prefix("ff00::", 8)),
                              {{"masquerade", {{"flags", "fully-random"}}}}}),
            "ip6 saddr fd00:5::/48 ip6 daddr != ff00::/8 masquerade fully-random");
  EXPECT_EQ(RuleBodyFromJson({Match("ip", "saddr", "==", Prefix("10.5.0.0", 16)), {{"accept", nullptr}}}),
            "ip saddr 10.5.0.0/16 accept");
  EXPECT_EQ(RuleBodyFromJson({Match("ip6", "daddr", "==", Prefix("fd00:5::", 48)), {{"accept", nullptr}}}),
            "ip6 daddr fd00:5::/48 accept");
  // Several flags, as nft lists "masquerade random,persistent".
  EXPECT_EQ(RuleBodyFromJson({{{"masquerade", {{"flags", {"random", "persistent"}}}}}}),
            "masquerade random,persistent");
}

TEST(NatClusterPlan, UnknownShapesNeverEqualAPlannedBody) {
  for (const char* expr : {
           R"([{"match": {"op": "==", "left": {"&": [{"meta": {"key": "iif"}}, 16384]}, "right": 16384}}])",
           R"([{"match": {"op": "==", "left": {"&": [{"meta": {"key": "mark"}}]}, "right": 16384}}])",
           R"([{"match": {"op": "==", "left": {"&": [{"meta": {"key": "mark"}}, 16384]}, "right": "x"}}])",
           R"([{"masquerade": {"flags": 3}}])",
           R"([{"masquerade": {"flags": []}}])",
           R"([{"masquerade": {"to": 1, "flags": "random"}}])",
           R"([{"return": 1}])",
           R"([{"accept": {}}])",
       }) {
    std::string body = RuleBodyFromJson(nlohmann::json::parse(expr));
    EXPECT_EQ(body.substr(0, 1), "?") << expr << " -> " << body;
  }
}

TEST(NatClusterPlan, ApplyCreatesBothChainsAndIsANoOpOnceThere) {
  const std::string comment = ClusterComment("cluster");
  auto desired = PlanClusterRules(DualStackCluster());
  std::string cmds = ApplyCommands(ParseListing(ListingJson({}, {})), comment, desired);
  EXPECT_NE(cmds.find("add chain inet netiface cluster_postrouting { type nat hook postrouting priority srcnat; "
                      "policy accept; }"),
            std::string::npos)
      << cmds;
  EXPECT_NE(cmds.find("add chain inet netiface cluster_forward { type filter hook forward priority filter; "
                      "policy accept; }"),
            std::string::npos)
      << cmds;
  EXPECT_NE(cmds.find("add rule inet netiface cluster_postrouting meta mark & 0x4000 == 0x4000 return comment "
                      "\"netiface-agent:cluster\""),
            std::string::npos)
      << cmds;
  EXPECT_EQ(cmds.find("chain inet netiface postrouting "), std::string::npos) << cmds;

  // The same rules, listed: nothing to do.
  std::vector<nlohmann::json> listed;
  uint64_t handle = 10;
  for (const auto& r : desired) {
    nlohmann::json expr = nlohmann::json::array();
    if (r.body.starts_with("meta mark")) {
      expr = MarkReturn();
    } else {
      // Rebuild the expressions from the planned words: "<p> <field> [!=] <value>"... "<verdict>".
      std::istringstream words(r.body);
      std::vector<std::string> w{std::istream_iterator<std::string>(words), {}};
      size_t i = 0;
      while (i + 2 < w.size() && (w[i] == "ip" || w[i] == "ip6")) {
        std::string op = "==";
        size_t v = i + 2;
        if (w[v] == "!=") {
          op = "!=";
          ++v;
        }
        auto slash = w[v].find('/');
        nlohmann::json right = Prefix(w[v].substr(0, slash).c_str(), std::stoi(w[v].substr(slash + 1)));
        expr.push_back(Match(w[i].c_str(), w[i + 1].c_str(), op.c_str(), right));
        i = v + 1;
      }
      if (w[i] == "masquerade") {
        expr.push_back({{"masquerade", {{"flags", w[i + 1]}}}});
      } else {
        expr.push_back({{w[i], nullptr}});
      }
    }
    listed.push_back({{"chain", r.chain}, {"handle", handle++}, {"comment", comment}, {"expr", expr}});
  }
  Listing l = ParseListing(ListingJson({"cluster_postrouting", "cluster_forward"}, listed));
  for (size_t i = 0; i < desired.size(); ++i) EXPECT_EQ(l.rules[i].body, desired[i].body);
  EXPECT_EQ(ApplyCommands(l, comment, desired), "");
  EXPECT_TRUE(MissingRules(l, comment, desired).empty());

  // A changed subnet is replaced in place; the rules of an attachment in another chain are kept.
  ClusterRules moved = DualStackCluster();
  moved.v4->subnet = Net("10.5.7.0/24");
  std::string change = ApplyCommands(l, comment, PlanClusterRules(moved));
  EXPECT_NE(change.find("add rule inet netiface cluster_postrouting position 20 ip saddr 10.5.7.0/24"),
            std::string::npos)
      << change;
  EXPECT_NE(change.find("delete rule inet netiface cluster_postrouting handle 10\n"), std::string::npos) << change;
  EXPECT_EQ(change.find("cluster_forward"), std::string::npos) << change;

  // Remove takes both chains and the table; with an attachment's rule in postrouting, only ours go.
  std::string rm = RemoveCommands(l, {comment});
  EXPECT_NE(rm.find("delete table inet netiface"), std::string::npos) << rm;
  listed.push_back(MasqRule(99, "netiface:net1:ctr1:eth0"));
  Listing mixed = ParseListing(ListingJson({"postrouting", "cluster_postrouting", "cluster_forward"}, listed));
  rm = RemoveCommands(mixed, {comment});
  EXPECT_EQ(rm.find("delete table"), std::string::npos) << rm;
  EXPECT_EQ(rm.find("handle 99"), std::string::npos) << rm;
  EXPECT_NE(rm.find("delete chain inet netiface cluster_postrouting"), std::string::npos) << rm;
  EXPECT_NE(rm.find("delete chain inet netiface cluster_forward"), std::string::npos) << rm;
  EXPECT_EQ(rm.find("delete chain inet netiface postrouting\n"), std::string::npos) << rm;
  // And an attachment's Apply leaves the cluster rules alone.
  std::string att = ApplyCommands(mixed, "netiface:net1:ctr2:eth0", PlanRules(DualStack()));
  EXPECT_EQ(att.find("cluster_"), std::string::npos) << att;
  EXPECT_EQ(att.find("delete"), std::string::npos) << att;
}

TEST(NatClusterPlan, AttachmentRulesNeverLandInClusterChains) {
  for (const auto& r : PlanRules(DualStack())) EXPECT_FALSE(r.chain.starts_with("cluster_")) << r.chain;
  for (const auto& r : PlanClusterRules(DualStackCluster())) EXPECT_TRUE(r.chain.starts_with("cluster_")) << r.chain;
}

}  // namespace
}  // namespace netiface::nat
