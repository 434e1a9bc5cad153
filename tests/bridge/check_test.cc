// CHECK as observe then compare: CompareAttachment against every kind of damage, and Check's flow over
// FakeOps. No root needed.
#include <gtest/gtest.h>

#include "cni_helpers.h"
#include "fake_ops.h"
#include "netiface/bridge/bridge.h"

namespace netiface::bridge {
namespace {

using nlohmann::json;

Config Cfg(json extra = json::object()) {
  json j = {{"cniVersion", "1.1.0"}, {"name", "net1"},      {"type", "bridge"},
            {"bridge", "cni0"},      {"hairpinMode", true}, {"ipam", {{"type", "host-local"}}}};
  j.update(extra);
  return ParseConfig(cni::ParseNetConf(j.dump()));
}

const char* kPrev = R"({"cniVersion":"1.1.0",
  "interfaces":[{"name":"cni0","mac":"0a:00:00:00:00:01"},{"name":"veth0a0b0c0d","mac":"ee:00:00:00:00:01"},
                {"name":"eth0","mac":"0a:58:0a:01:00:05","sandbox":"/run/netns/pod"}],
  "ips":[{"address":"10.1.0.5/24","gateway":"10.1.0.1","interface":2}],
  "routes":[{"dst":"0.0.0.0/0","gw":"10.1.0.1"},{"dst":"10.9.0.0/16"}]})";

cni::Result Prev() { return cni::ParseResult(json::parse(kPrev), "1.1.0"); }

// What an intact attachment of kPrev looks like from Observe.
Observed Intact() {
  Observed o;
  o.bridge = nl::LinkInfo{.index = 3, .name = "cni0", .kind = "bridge", .mac = "0a:00:00:00:00:01"};
  o.container_link =
      nl::LinkInfo{.index = 2, .name = "eth0", .kind = "veth", .mac = "0a:58:0a:01:00:05", .peer_index = 7};
  o.host_peer = nl::LinkInfo{.index = 7,
                             .name = "veth0a0b0c0d",
                             .kind = "veth",
                             .mac = "ee:00:00:00:00:01",
                             .master_index = 3,
                             .hairpin = true};
  o.container_addresses = {*cni::IpNet::Parse("10.1.0.5/24"), *cni::IpNet::Parse("fe80::1/64")};
  o.container_routes = {{.dst = *cni::IpNet::Parse("0.0.0.0/0"), .gw = cni::IpAddr::Parse("10.1.0.1"), .ifindex = 2},
                        {.dst = *cni::IpNet::Parse("10.9.0.0/16"), .gw = cni::IpAddr::Parse("10.1.0.1"), .ifindex = 2},
                        {.dst = *cni::IpNet::Parse("10.1.0.0/24"), .ifindex = 2}};
  return o;
}

// One damage, and the one problem it must produce (a substring of it).
struct Damage {
  const char* name;
  std::function<void(Observed&)> apply;
  const char* expect;
};

TEST(CompareAttachmentTest, AnIntactAttachmentHasNoProblem) {
  EXPECT_TRUE(CompareAttachment(Cfg(), Prev(), "eth0", Intact()).empty());
}

TEST(CompareAttachmentTest, EveryKindOfDamageIsNamed) {
  const std::vector<Damage> damages = {
      {"no bridge", [](Observed& o) { o.bridge.reset(); }, "bridge \"cni0\" does not exist"},
      {"not a bridge", [](Observed& o) { o.bridge->kind = "veth"; }, "bridge \"cni0\" does not exist"},
      {"bridge MAC", [](Observed& o) { o.bridge->mac = "0a:00:00:00:00:99"; }, "bridge \"cni0\" has MAC"},
      {"no container link", [](Observed& o) { o.container_link.reset(); }, "is not in the sandbox"},
      {"not a veth", [](Observed& o) { o.container_link->kind = "dummy"; }, "is not a veth"},
      {"container MAC", [](Observed& o) { o.container_link->mac = "0a:58:0a:01:00:99"; }, "\"eth0\" has MAC"},
      {"no peer", [](Observed& o) { o.host_peer.reset(); }, "the host peer of \"eth0\" does not exist"},
      {"other peer", [](Observed& o) { o.host_peer->name = "vethffffffff"; }, "is vethffffffff, result says"},
      {"peer MAC", [](Observed& o) { o.host_peer->mac = "ee:00:00:00:00:99"; }, "host veth veth0a0b0c0d has MAC"},
      {"not enslaved", [](Observed& o) { o.host_peer->master_index = 0; }, "is not enslaved to \"cni0\""},
      {"hairpin off", [](Observed& o) { o.host_peer->hairpin = false; }, "hairpin mode is off"},
      {"address gone", [](Observed& o) { o.container_addresses.erase(o.container_addresses.begin()); }, "10.1.0.5/24"},
      {"default route gone", [](Observed& o) { o.container_routes.erase(o.container_routes.begin()); }, "0.0.0.0/0"},
      {"route via another gateway", [](Observed& o) { o.container_routes[1].gw = cni::IpAddr::Parse("10.1.0.9"); },
       "10.9.0.0/16"},
      {"masquerade", [](Observed& o) { o.nat_problem = "masquerade rule missing"; }, "masquerade rule missing"},
  };
  for (const auto& d : damages) {
    SCOPED_TRACE(d.name);
    Observed o = Intact();
    d.apply(o);
    std::vector<std::string> problems = CompareAttachment(Cfg(), Prev(), "eth0", o);
    ASSERT_EQ(problems.size(), 1u) << ::testing::PrintToString(problems);
    EXPECT_NE(problems[0].find(d.expect), std::string::npos) << problems[0];
  }
}

TEST(CompareAttachmentTest, ConfigDrivenExpectations) {
  Observed o = Intact();
  EXPECT_EQ(CompareAttachment(Cfg({{"promiscMode", true}, {"hairpinMode", false}}), Prev(), "eth0", o).size(), 2u);
  EXPECT_EQ(CompareAttachment(Cfg(), Prev(), "eth1", o).size(), 1u);  // no such sandbox interface
}

TEST(CheckTest, ObservesTheTablesOfTheResultAndVerifiesMasquerade) {
  test::FakeOps ops;
  ops.observed = Intact();
  json conf = json::parse(R"({"cniVersion":"1.1.0","name":"net1","type":"bridge","bridge":"cni0",
                              "hairpinMode":true,"ipMasq":true,"ipam":{"type":"host-local"}})");
  conf["prevResult"] = json::parse(kPrev);
  cni::CmdArgs args = testing::MakeCmdArgs(conf, {.command = "CHECK"});
  cni::Error e = testing::ThrownError([&] { Check(args, ops); });
  EXPECT_EQ(e.code(), cni::kInternal);
  EXPECT_NE(e.msg().find("masquerade rules missing"), std::string::npos) << e.msg();
  EXPECT_EQ(ops.faults.calls, (std::vector<std::string>{"IpamCheck", "Observe"}));
  EXPECT_EQ(ops.observed_tables, std::set<int>{0});
  ops.nat_rules.insert("ctr1");
  Check(args, ops);
  conf.erase("prevResult");
  EXPECT_EQ(testing::ThrownError([&] { Check(testing::MakeCmdArgs(conf, {.command = "CHECK"}), ops); }).code(),
            cni::kInvalidConfig);
}

}  // namespace
}  // namespace netiface::bridge
