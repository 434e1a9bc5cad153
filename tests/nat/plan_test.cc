// The pure half of the nat library: rules planned for a spec, comments, the JSON listing and the
// transactions computed from it. No root, no nftables.
#include "plan.h"

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
           {Match("ip", "saddr", "==", "10.22.0.5"), Match("ip", "daddr", "!=", Prefix("10.22.0.0", 24)),
            Match("ip", "daddr", "!=", Prefix("224.0.0.0", 4)), {{"masquerade", nullptr}}}}};
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
  nlohmann::json dnat = {Match("ip6", "daddr", "==", "2001:db8:0::7"), {{"dnat", {{"family", "ip6"}, {"addr", "fd00::5"}}}}};
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
  auto listing = ParseListing(ListingJson(
      {"postrouting"}, {MasqRule(7, TagComment(s.tag)), MasqRule(8, "netiface:net1:other:eth0")}));
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
  nlohmann::json dnat = {{"family", "inet"}, {"table", "netiface"}, {"chain", "prerouting"}, {"handle", 9},
                         {"comment", "netiface:net1:a:eth0"},
                         {"expr", {Match("ip", "daddr", "==", "203.0.113.7"),
                                   {{"dnat", {{"family", "ip"}, {"addr", "10.22.0.5"}}}}}}};
  auto listing = ParseListing(ListingJson({"postrouting", "prerouting"},
                                          {MasqRule(7, "netiface:net1:a:eth0"), MasqRule(8, "netiface:net2:a:eth0"), dnat}));
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
  auto listing = ParseListing(ListingJson({"postrouting"}, {MasqRule(1, "netiface:net1:a:eth0"),
                                                            MasqRule(2, "netiface:net1:b:eth0"),
                                                            MasqRule(3, "netiface:net10:c:eth0"),
                                                            MasqRule(4, "netiface:net2:d:eth0")}));
  auto stale = StaleComments(listing, "net1", {{"a", "eth0"}});
  EXPECT_EQ(stale, std::set<std::string>{"netiface:net1:b:eth0"});
  EXPECT_EQ(StaleComments(listing, "net1", {{"a", "eth0"}, {"b", "eth0"}}).size(), 0u);
  EXPECT_EQ(StaleComments(listing, "net3", {}).size(), 0u);
}

}  // namespace
}  // namespace netiface::nat
