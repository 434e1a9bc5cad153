// The port-mapping plan as values: rules per family, host IPs, conditions, snat, the comment, the
// kernel's JSON of the statements read back (listing taken from nft 1.0.6), GC's choice.
#include "portmap_plan.h"

#include <gtest/gtest.h>

#include "netiface/cni/error.h"

namespace netiface::nat {
namespace {

cni::IpNet Net(const char* s) { return *cni::IpNet::Parse(s); }
cni::IpAddr Addr(const char* s) { return *cni::IpAddr::Parse(s); }

const std::string kCid = "3f6a1c9e0b2d4a7f8e5c1b0a9d8e7f6a5b4c3d2e1f0a9b8c7d6e5f4a3b2c1d0e";

PortMapSpec DualStack() {
  PortMapSpec s;
  s.tag = {"net1", kCid, "eth0"};
  s.container_addrs = {Addr("10.22.0.5"), Addr("fd00:22::5")};
  s.mappings = {{8080, 80, "tcp", std::nullopt}, {5353, 53, "udp", std::nullopt}};
  return s;
}

std::vector<std::string> Bodies(const std::vector<Rule>& rules, const std::string& chain) {
  std::vector<std::string> out;
  for (const auto& r : rules) {
    if (r.chain == chain) out.push_back(r.body);
  }
  return out;
}

TEST(PortMapPlan, DnatBothHooksPerFamilyAndHairpinMasquerade) {
  auto rules = PlanPortMapRules(DualStack());
  const std::vector<std::string> dnat = {
      "meta nfproto ipv4 fib daddr type local tcp dport 8080 dnat ip to 10.22.0.5:80",
      "meta nfproto ipv4 fib daddr type local udp dport 5353 dnat ip to 10.22.0.5:53",
      "meta nfproto ipv6 fib daddr type local tcp dport 8080 dnat ip6 to [fd00:22::5]:80",
      "meta nfproto ipv6 fib daddr type local udp dport 5353 dnat ip6 to [fd00:22::5]:53",
  };
  EXPECT_EQ(Bodies(rules, "portmap_prerouting"), dnat);
  EXPECT_EQ(Bodies(rules, "portmap_output"), dnat);
  EXPECT_EQ(Bodies(rules, "portmap_postrouting"),
            (std::vector<std::string>{
                "ip saddr 10.22.0.5 ip daddr 10.22.0.5 tcp dport 80 masquerade",
                "ip saddr 127.0.0.0/8 ip daddr 10.22.0.5 tcp dport 80 masquerade",
                "ip saddr 10.22.0.5 ip daddr 10.22.0.5 udp dport 53 masquerade",
                "ip saddr 127.0.0.0/8 ip daddr 10.22.0.5 udp dport 53 masquerade",
                "ip6 saddr fd00:22::5 ip6 daddr fd00:22::5 tcp dport 80 masquerade",
                "ip6 saddr fd00:22::5 ip6 daddr fd00:22::5 udp dport 53 masquerade",
            }));
  // Chain order: prerouting, output, postrouting.
  EXPECT_EQ(rules.front().chain, "portmap_prerouting");
  EXPECT_EQ(rules.back().chain, "portmap_postrouting");
}

TEST(PortMapPlan, NoSnatNoMasquerade) {
  PortMapSpec s = DualStack();
  s.snat = false;
  EXPECT_TRUE(Bodies(PlanPortMapRules(s), "portmap_postrouting").empty());
  EXPECT_EQ(PlanPortMapRules(s).size(), 8u);
}

TEST(PortMapPlan, HostIpSelectsItsFamilyAndUnspecifiedMeansAnyLocal) {
  PortMapSpec s = DualStack();
  s.snat = false;
  s.mappings = {{8080, 80, "tcp", Addr("192.0.2.1")},
                {8443, 443, "sctp", Addr("2001:db8::1")},
                {9000, 90, "udp", Addr("0.0.0.0")},
                {9001, 91, "udp", Addr("::")}};
  EXPECT_EQ(Bodies(PlanPortMapRules(s), "portmap_prerouting"),
            (std::vector<std::string>{
                "ip daddr 192.0.2.1 tcp dport 8080 dnat ip to 10.22.0.5:80",
                "meta nfproto ipv4 fib daddr type local udp dport 9000 dnat ip to 10.22.0.5:90",
                "ip6 daddr 2001:db8::1 sctp dport 8443 dnat ip6 to [fd00:22::5]:443",
                "meta nfproto ipv6 fib daddr type local udp dport 9001 dnat ip6 to [fd00:22::5]:91",
            }));
}

TEST(PortMapPlan, ConditionsPrefixTheDnatRulesOfTheirFamily) {
  PortMapSpec s = DualStack();
  s.mappings = {{8080, 80, "tcp", std::nullopt}};
  s.snat = false;
  s.conditions_v4 = {{.source = true, .negate = true, .prefix = Net("192.0.2.0/24")},
                     {.source = false, .negate = false, .prefix = Net("198.51.100.7/32")}};
  EXPECT_EQ(Bodies(PlanPortMapRules(s), "portmap_output"),
            (std::vector<std::string>{
                "ip saddr != 192.0.2.0/24 ip daddr 198.51.100.7 fib daddr type local tcp dport 8080 dnat ip to "
                "10.22.0.5:80",
                "meta nfproto ipv6 fib daddr type local tcp dport 8080 dnat ip6 to [fd00:22::5]:80",
            }));
  s.conditions_v6 = {{.source = true, .negate = false, .prefix = Net("192.0.2.0/24")}};
  EXPECT_THROW(PlanPortMapRules(s), cni::Error);
}

TEST(PortMapPlan, RefusesWhatCannotBeWritten) {
  PortMapSpec s = DualStack();
  s.mappings = {{0, 80, "tcp", std::nullopt}};
  EXPECT_THROW(PlanPortMapRules(s), cni::Error);
  s.mappings = {{80, 80, "icmp", std::nullopt}};
  EXPECT_THROW(PlanPortMapRules(s), cni::Error);
  s = DualStack();
  s.container_addrs.push_back(Addr("10.22.0.6"));
  EXPECT_THROW(PlanPortMapRules(s), cni::Error);
  s = DualStack();
  s.tag.container_id = "a b";
  EXPECT_THROW(PlanPortMapRules(s), cni::Error);
  s = DualStack();
  s.container_addrs.clear();
  EXPECT_TRUE(PlanPortMapRules(s).empty());
}

TEST(PortMapPlan, CommentIsDistinctFromTheMasqueradeOfTheSameAttachment) {
  Tag t{"net1", kCid, "eth0"};
  EXPECT_NE(PortMapComment(t), TagComment(t));
  EXPECT_TRUE(PortMapComment(t).starts_with("netiface-portmap:net1:"));
  EXPECT_FALSE(PortMapComment(t).starts_with(NetworkCommentPrefix("net1")));
  EXPECT_LE(PortMapComment(t).size(), kMaxComment);
  Tag long_net{std::string(60, 'n'), kCid, "eth0"};
  EXPECT_LE(PortMapComment(long_net).size(), kMaxComment);
  EXPECT_NE(PortMapComment(long_net), PortMapComment(Tag{std::string(60, 'n'), kCid, "eth1"}));
}

nlohmann::json Payload(const char* proto, const char* field, const char* op, nlohmann::json right) {
  return {{"match", {{"op", op}, {"left", {{"payload", {{"protocol", proto}, {"field", field}}}}}, {"right", right}}}};
}

TEST(PortMapPlan, KernelJsonReadsBackAsThePlannedBody) {
  // The expressions of "meta nfproto ipv4 fib daddr type local tcp dport 8080 dnat ip to 10.22.0.5:80" and of
  // the IPv6 host-IP rule, as nft -j lists them.
  nlohmann::json v4 = nlohmann::json::array(
      {{{"match", {{"op", "=="}, {"left", {{"meta", {{"key", "nfproto"}}}}}, {"right", "ipv4"}}}},
       {{"match", {{"op", "=="}, {"left", {{"fib", {{"result", "type"}, {"flags", {"daddr"}}}}}}, {"right", "local"}}}},
       Payload("tcp", "dport", "==", 8080),
       {{"dnat", {{"family", "ip"}, {"addr", "10.22.0.5"}, {"port", 80}}}}});
  EXPECT_EQ(RuleBodyFromJson(v4), "meta nfproto ipv4 fib daddr type local tcp dport 8080 dnat ip to 10.22.0.5:80");
  nlohmann::json v6 = nlohmann::json::array({Payload("ip6", "daddr", "==", "2001:db8::1"),
                                             Payload("sctp", "dport", "==", 8443),
                                             {{"dnat", {{"family", "ip6"}, {"addr", "fd00:22::5"}, {"port", 443}}}}});
  EXPECT_EQ(RuleBodyFromJson(v6), "ip6 daddr 2001:db8::1 sctp dport 8443 dnat ip6 to [fd00:22::5]:443");
  nlohmann::json masq =
      nlohmann::json::array({Payload("ip", "saddr", "==", {{"prefix", {{"addr", "127.0.0.0"}, {"len", 8}}}}),
                             Payload("ip", "daddr", "==", "10.22.0.5"),
                             Payload("udp", "dport", "==", 53),
                             {{"masquerade", nullptr}}});
  EXPECT_EQ(RuleBodyFromJson(masq), "ip saddr 127.0.0.0/8 ip daddr 10.22.0.5 udp dport 53 masquerade");
  // What it does not know never equals a plan.
  EXPECT_EQ(PortMapStatementFromJson({{"dnat", {{"family", "ip6"}, {"addr", "10.22.0.5"}, {"port", 80}}}}),
            std::nullopt);
  EXPECT_EQ(
      PortMapStatementFromJson({{"match", {{"op", "=="}, {"left", {{"meta", {{"key", "iif"}}}}}, {"right", "lo"}}}}),
      std::nullopt);
}

TEST(PortMapPlan, GcPicksOnlyThisNetworksStalePortMappings) {
  Tag keep{"net1", kCid, "eth0"};
  Tag stale{"net1", "b" + kCid.substr(1), "eth0"};
  Tag other{"net2", "c" + kCid.substr(1), "eth0"};
  Listing l;
  l.table_exists = true;
  l.chains = {"portmap_prerouting", "postrouting"};
  l.rules = {{"portmap_prerouting", 2, PortMapComment(keep), "x"},
             {"portmap_prerouting", 3, PortMapComment(stale), "x"},
             {"portmap_prerouting", 4, PortMapComment(other), "x"},
             {"postrouting", 5, TagComment(stale), "masquerade"}};
  EXPECT_EQ(StalePortMapComments(l, "net1", {{keep.container_id, "eth0"}}),
            (std::set<std::string>{PortMapComment(stale)}));
}

}  // namespace
}  // namespace netiface::nat
