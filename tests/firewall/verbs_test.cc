// The firewall config, the spec an attachment gets, and the verbs over FakeOps: result pass-through,
// refusals before any change, CHECK, DEL by tag, GC by the valid list.
#include <gtest/gtest.h>

#include "cni_helpers.h"
#include "fake_ops.h"
#include "netiface/cni/error.h"
#include "netiface/firewall/config.h"
#include "netiface/firewall/firewall.h"

namespace netiface::firewall {
namespace {

constexpr const char* kId = "c0ffee00c0ffee00";

std::string Prev(const std::string& first = R"({"name":"cni-podman0","mac":"ee:00:00:00:00:01"})") {
  return R"("prevResult":{"cniVersion":"1.0.0","interfaces":[)" + first +
         R"(,{"name":"veth1","mac":"ee:00:00:00:00:02"},{"name":"eth0","mac":"0a:58:0a:58:00:05","sandbox":"/run/netns/c"}],)"
         R"("ips":[{"address":"10.88.0.5/16","interface":2},{"address":"fd00:88::5/64","interface":2}]})";
}

cni::CmdArgs Args(const std::string& command, const std::string& keys, const std::string& prev = Prev()) {
  cni::CmdArgs a;
  a.command = command;
  a.container_id = kId;
  a.netns = "/run/netns/c";
  a.ifname = "eth0";
  std::string conf = R"({"cniVersion":"1.0.0","name":"podman","type":"firewall")";
  if (!keys.empty()) conf += "," + keys;
  if (!prev.empty()) conf += "," + prev;
  a.conf = cni::ParseNetConf(conf + "}");
  return a;
}

TEST(FirewallConfig, ReferenceKeysAndRefusals) {
  EXPECT_FALSE(ParseConfig(Args("ADD", "").conf).same_bridge);
  EXPECT_FALSE(ParseConfig(Args("ADD", R"("backend":"iptables","ingressPolicy":"open")").conf).same_bridge);
  EXPECT_TRUE(ParseConfig(Args("ADD", R"("backend":"","ingressPolicy":"same-bridge")").conf).same_bridge);
  EXPECT_NO_THROW(ParseConfig(Args("ADD", R"("iptablesAdminChainName":"CNI-ADMIN","firewalldZone":"trusted")").conf));
  for (const char* keys :
       {R"("backend":"firewalld")", R"("backend":"nft")", R"("backend":1)", R"("ingressPolicy":"isolated")",
        R"("ingressPolicy":true)", R"("iptablesAdminChainName":5)"}) {
    SCOPED_TRACE(keys);
    EXPECT_EQ(testing::ThrownError([&] { ParseConfig(Args("ADD", keys).conf); }).code(), cni::kInvalidConfig);
  }
}

TEST(FirewallConfig, SpecTakesEveryAddressAndTheFirstInterfaceAsBridge) {
  cni::CmdArgs a = Args("ADD", R"("ingressPolicy":"same-bridge")");
  nat::FirewallSpec s = PlanSpec(ParseConfig(a.conf), kId, "eth0", *a.conf.prev_result);
  EXPECT_EQ(s.tag.network, "podman");
  ASSERT_EQ(s.addrs.size(), 2u);
  EXPECT_EQ(s.addrs[0].ToString(), "10.88.0.5");
  EXPECT_EQ(s.addrs[1].ToString(), "fd00:88::5");
  EXPECT_EQ(s.isolated_bridge, "cni-podman0");
  // A first interface in a sandbox is no bridge.
  cni::CmdArgs sandboxed =
      Args("ADD", R"("ingressPolicy":"same-bridge")", Prev(R"({"name":"eth1","sandbox":"/run/netns/x"})"));
  EXPECT_EQ(testing::ThrownError([&] {
              PlanSpec(ParseConfig(sandboxed.conf), kId, "eth0", *sandboxed.conf.prev_result);
            }).code(),
            cni::kInvalidConfig);
}

TEST(FirewallVerbs, AddPassesPrevResultThroughAndDelRemovesByTag) {
  test::FakeOps ops;
  cni::CmdArgs a = Args("ADD", "");
  EXPECT_EQ(Add(a, ops), *a.conf.prev_result);
  ASSERT_EQ(ops.installed.size(), 1u);
  EXPECT_NO_THROW(Check(Args("CHECK", ""), ops));
  EXPECT_EQ(testing::ThrownError([&] { Check(Args("CHECK", R"("ingressPolicy":"same-bridge")"), ops); }).code(),
            cni::kNatFailure);
  Del(Args("DEL", "", ""), ops);  // no prevResult needed
  EXPECT_TRUE(ops.installed.empty());
  Del(Args("DEL", "", ""), ops);  // idempotent
  EXPECT_EQ(testing::ThrownError([&] { Check(Args("CHECK", ""), ops); }).code(), cni::kNatFailure);
}

TEST(FirewallVerbs, RefusesBeforeAnyChange) {
  const std::string no_ips = R"("prevResult":{"cniVersion":"1.0.0","interfaces":[{"name":"br0"}],"ips":[]})";
  for (const auto& [keys, prev] : std::vector<std::pair<std::string, std::string>>{
           {"", ""}, {"", no_ips}, {R"("backend":"firewalld")", Prev()}, {R"("ingressPolicy":"x")", Prev()}}) {
    SCOPED_TRACE(keys + prev);
    test::FakeOps ops;
    EXPECT_EQ(testing::ThrownError([&] { Add(Args("ADD", keys, prev), ops); }).code(), cni::kInvalidConfig);
    EXPECT_TRUE(ops.faults.calls.empty());
  }
  test::FakeOps ops;
  ops.faults.fail_at = "Apply";
  EXPECT_NE(testing::ThrownError([&] { Add(Args("ADD", ""), ops); }).code(), 0);
  EXPECT_TRUE(ops.installed.empty());
}

TEST(FirewallVerbs, GcKeepsTheValidAttachmentsOnly) {
  test::FakeOps ops;
  Add(Args("ADD", ""), ops);
  cni::CmdArgs other = Args("ADD", "");
  other.container_id = "other";
  Add(other, ops);
  cni::CmdArgs gc = Args("GC", "", "");
  gc.conf = cni::ParseNetConf(
      R"({"cniVersion":"1.1.0","name":"podman","type":"firewall","cni.dev/valid-attachments":[{"containerID":"other","ifname":"eth0"}]})");
  Gc(gc, ops);
  ASSERT_EQ(ops.installed.size(), 1u);
  EXPECT_EQ(std::get<1>(ops.installed.begin()->first), "other");
  // Without a valid list nothing is stale.
  Gc(Args("GC", "", ""), ops);
  EXPECT_EQ(ops.installed.size(), 1u);
}

}  // namespace
}  // namespace netiface::firewall
