// The bridge verbs against FakeOps: call order, rollback at every step (before and after its effect),
// DEL's do-every-step rule, STATUS and GC. No root needed; bridge_netns_test proves the kernel side.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include "cni_helpers.h"
#include "fake_ops.h"
#include "netiface/bridge/bridge.h"

namespace netiface::bridge {
namespace {

using nlohmann::json;
using test::FakeOps;

// A runtime's container ID: 64 hex digits, longer than a std::string's inline buffer, so that an undo
// reading a destroyed string is caught by ASan.
const std::string kCid = std::string(56, 'c') + "0123abcd";

json Conf(json extra = json::object()) {
  json j = {{"cniVersion", "1.1.0"},
            {"name", "net1"},
            {"type", "bridge"},
            {"bridge", "cni0"},
            {"isDefaultGateway", true},
            {"ipMasq", true},
            {"ipam", {{"type", "host-local"}}}};
  j.update(extra);
  return j;
}

cni::CmdArgs Args(const json& conf, const std::string& command = "ADD") {
  return testing::MakeCmdArgs(conf, {.command = command, .container_id = kCid});
}

cni::Result IpamResult() {
  return cni::ParseResult(json::parse(R"({"cniVersion":"1.1.0","ips":[{"address":"10.1.0.5/24"}]})"), "1.1.0");
}

class BridgeVerbsTest : public ::testing::Test {
 protected:
  void SetUp() override { ops_.ipam_result = IpamResult(); }
  void ExpectNothingLeft() {
    EXPECT_TRUE(ops_.veths.empty());
    EXPECT_FALSE(ops_.ip_reserved);
    EXPECT_FALSE(ops_.ipam_running);
    EXPECT_TRUE(ops_.nat_rules.empty());
  }
  FakeOps ops_;
};

TEST_F(BridgeVerbsTest, AddRunsItsStepsInOrderAndReportsBothEnds) {
  cni::Result r = Add(Args(Conf()), ops_);
  EXPECT_EQ(ops_.faults.calls,
            (std::vector<std::string>{"Prepare", "StartIpamAdd", "EnsureBridge", "CreateVeth", "WaitIpamAdd",
                                      "ConfigureContainer", "ConfigureGateway", "NatApply", "WaitUp"}));
  ASSERT_EQ(r.interfaces.size(), 3u);
  EXPECT_EQ(r.interfaces[0].name, "cni0");
  EXPECT_EQ(r.interfaces[0].mac, ops_.bridge_mac);
  EXPECT_EQ(r.interfaces[1].name, ops_.host_veth);
  EXPECT_EQ(r.interfaces[1].mac, ops_.host_mac);
  EXPECT_EQ(r.interfaces[2].mac, ops_.container_mac);
  EXPECT_EQ(r.interfaces[2].sandbox, "/run/netns/pod");
  ASSERT_EQ(r.ips.size(), 1u);
  EXPECT_EQ(r.ips[0].gateway, cni::IpAddr::Parse("10.1.0.1"));
  EXPECT_TRUE(ops_.ip_reserved);
  EXPECT_EQ(ops_.veths.size(), 1u);
  EXPECT_EQ(ops_.nat_rules.count(kCid), 1u);
}

// A failure at any step, before or after the step took effect, leaves nothing of the attachment (the
// bridge stays: it is shared), and IPAM DEL runs last, after the ADD it undoes has finished.
TEST_F(BridgeVerbsTest, RollbackAtEveryStep) {
  const std::vector<std::string> steps = {"StartIpamAdd",       "EnsureBridge",     "CreateVeth", "WaitIpamAdd",
                                          "ConfigureContainer", "ConfigureGateway", "NatApply",   "WaitUp"};
  for (bool after : {false, true}) {
    for (const auto& step : steps) {
      // CreateVeth and NatApply leave nothing when they throw (their contract): the host name is random
      // and known to be ours only once the pair exists, and NAT rules go in as one transaction. Their undos
      // are pushed once they succeeded, so failing them after their effect is outside the contract.
      if (after && (step == "CreateVeth" || step == "NatApply")) continue;
      SCOPED_TRACE(step + (after ? " (after its effect)" : " (before its effect)"));
      ops_ = FakeOps();
      ops_.ipam_result = IpamResult();
      ops_.faults.fail_at = step;
      ops_.faults.fail_after = after;
      cni::Error e = testing::ThrownError([&] { Add(Args(Conf()), ops_); });
      EXPECT_EQ(e.code(), cni::kNetlink);
      EXPECT_NE(e.msg().find(step), std::string::npos) << e.msg();
      EXPECT_TRUE(ops_.faults.fired);
      ExpectNothingLeft();
      EXPECT_EQ(ops_.faults.Count("IpamDel"), 1);
      EXPECT_EQ(ops_.faults.calls.back(), "IpamDel") << ::testing::PrintToString(ops_.faults.calls);
    }
  }
}

// The answer step: a result the request's version cannot express fails the ADD before skel prints it,
// and is undone like any other failure (a 0.2.0 result needs an address; this IPAM gave none).
TEST_F(BridgeVerbsTest, AResultTheVersionCannotExpressIsUndone) {
  ops_.ipam_result = cni::Result{};
  cni::Error e = testing::ThrownError([&] { Add(Args(Conf({{"cniVersion", "0.2.0"}})), ops_); });
  EXPECT_EQ(e.code(), cni::kIncompatibleVersion) << e.msg();
  EXPECT_EQ(ops_.faults.Count("WaitUp"), 1);  // it got as far as the answer
  ExpectNothingLeft();
}

TEST_F(BridgeVerbsTest, InvalidInputChangesNothing) {
  EXPECT_EQ(testing::ThrownError([&] { Add(Args(Conf({{"mtu", "big"}})), ops_); }).code(), cni::kInvalidConfig);
  EXPECT_EQ(testing::ThrownError([&] {
              Add(Args(Conf({{"hairpinMode", true}, {"promiscMode", true}})), ops_);
            }).code(),
            cni::kInvalidConfig);
  EXPECT_EQ(testing::ThrownError([&] {
              Add(Args(Conf({{"args", {{"cni", {{"mac", "zz"}}}}}})), ops_);
            }).code(),
            cni::kInvalidConfig);
  EXPECT_TRUE(ops_.faults.calls.empty()) << ::testing::PrintToString(ops_.faults.calls);
  ops_.faults.fail_at = "Prepare";
  testing::ThrownError([&] { Add(Args(Conf()), ops_); });
  EXPECT_EQ(ops_.faults.calls, std::vector<std::string>{"Prepare"});
}

TEST_F(BridgeVerbsTest, WithoutIpamNoIpamCall) {
  json conf = Conf();
  conf.erase("ipam");
  conf.erase("isDefaultGateway");
  cni::Result r = Add(Args(conf), ops_);
  EXPECT_TRUE(r.ips.empty());
  EXPECT_EQ(ops_.faults.Count("StartIpamAdd") + ops_.faults.Count("WaitIpamAdd"), 0);
  EXPECT_EQ(ops_.faults.Count("NatApply"), 0);  // nothing to masquerade
}

TEST_F(BridgeVerbsTest, DelDoesEveryStepAndReportsEveryFailure) {
  Add(Args(Conf()), ops_);
  ops_.faults = {};
  ops_.faults.fail_at = "DeleteContainerLink";
  cni::Error e = testing::ThrownError([&] { Del(Args(Conf(), "DEL"), ops_); });
  EXPECT_NE(e.msg().find("deleting the container interface"), std::string::npos) << e.msg();
  EXPECT_EQ(ops_.faults.calls,
            (std::vector<std::string>{"StartIpamDel", "DeleteContainerLink", "WaitIpamDel", "NatRemove"}));
  EXPECT_FALSE(ops_.ip_reserved);
  EXPECT_TRUE(ops_.nat_rules.empty());
  // Again, with everything gone: DEL is idempotent.
  ops_.faults = {};
  Del(Args(Conf(), "DEL"), ops_);
  ExpectNothingLeft();
}

TEST_F(BridgeVerbsTest, DelWithoutNetnsStillReleases) {
  Add(Args(Conf()), ops_);
  cni::CmdArgs args = Args(Conf(), "DEL");
  args.netns.clear();
  ops_.faults = {};
  Del(args, ops_);
  EXPECT_EQ(ops_.faults.Count("DeleteContainerLink"), 0);
  EXPECT_FALSE(ops_.ip_reserved);
}

TEST_F(BridgeVerbsTest, StatusAndGcGoToIpamAndGcKeepsRulesWithoutAValidList) {
  Status(Args(Conf(), "STATUS"), ops_);
  EXPECT_EQ(ops_.faults.calls, std::vector<std::string>{"IpamStatus"});
  ops_.nat_rules = {kCid, "other"};
  ops_.faults = {};
  Gc(Args(Conf(), "GC"), ops_);
  EXPECT_EQ(ops_.faults.calls, std::vector<std::string>{"IpamGc"});
  EXPECT_EQ(ops_.nat_rules.size(), 2u);

  json conf = Conf({{"cni.dev/valid-attachments", {{{"containerID", kCid}, {"ifname", "eth0"}}}}});
  Gc(Args(conf, "GC"), ops_);
  EXPECT_EQ(ops_.nat_rules, std::set<std::string>{kCid});
  // With ipMasq off a failing NAT GC (no nftables) does not fail GC; with it on it does.
  conf["ipMasq"] = false;
  ops_.faults = {};
  ops_.faults.fail_at = "NatGc";
  Gc(Args(conf, "GC"), ops_);
  conf["ipMasq"] = true;
  ops_.faults = {};
  ops_.faults.fail_at = "NatGc";
  EXPECT_NE(testing::ThrownError([&] { Gc(Args(conf, "GC"), ops_); }).msg().find("masquerade GC"), std::string::npos);
}

}  // namespace
}  // namespace netiface::bridge
