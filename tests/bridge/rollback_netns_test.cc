// ADD rollback, in-process: bridge::Add runs with the test thread inside a throw-away "host" namespace over
// the real Ops with one call failing, before or after its effect. Afterwards nothing of the attachment
// may remain: what the unit tests prove over FakeOps, proven on the kernel.
#include <filesystem>
#include <fstream>
#include <type_traits>

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "cni_helpers.h"
#include "fault_steps.h"
#include "netiface/bridge/bridge.h"
#include "netiface/bridge/kernel_ops.h"
#include "netiface/cni/error.h"
#include "netiface/netlink/netns.h"
#include "node.h"
#include "testutil.h"

namespace netiface::testing {
namespace {

using nlohmann::json;
using ::testing::IsEmpty;

// The real Ops with one call failing, before or after it took effect (testing::FaultSteps).
class FaultyOps : public bridge::Ops {
 public:
  FaultyOps(const cni::CmdArgs& args, std::string fail_at, bool after) : real_(args) {
    faults.fail_at = std::move(fail_at);
    faults.fail_after = after;
  }
  FaultSteps faults;

  void StartIpamAdd() override {
    Do("StartIpamAdd", [&] { real_.StartIpamAdd(); });
  }
  cni::Result WaitIpamAdd() override {
    return Do("WaitIpamAdd", [&] { return real_.WaitIpamAdd(); });
  }
  void IpamDel() override {
    Do("IpamDel", [&] { real_.IpamDel(); });
  }
  void StartIpamDel() override {
    Do("StartIpamDel", [&] { real_.StartIpamDel(); });
  }
  void WaitIpamDel() override {
    Do("WaitIpamDel", [&] { real_.WaitIpamDel(); });
  }
  void IpamCheck() override {
    Do("IpamCheck", [&] { real_.IpamCheck(); });
  }
  void IpamStatus() override {
    Do("IpamStatus", [&] { real_.IpamStatus(); });
  }
  void IpamGc() override {
    Do("IpamGc", [&] { real_.IpamGc(); });
  }
  void Prepare(const std::string& ifname) override {
    Do("Prepare", [&] { real_.Prepare(ifname); });
  }
  nl::LinkInfo EnsureBridge(const bridge::Config& c) override {
    return Do("EnsureBridge", [&] { return real_.EnsureBridge(c); });
  }
  std::string CreateVeth(const bridge::Config& c, const nl::LinkInfo& br, const std::string& ifname,
                         const std::string& mac) override {
    return Do("CreateVeth", [&] { return real_.CreateVeth(c, br, ifname, mac); });
  }
  bool DeleteHostVeth(const std::string& name) override {
    return Do("DeleteHostVeth", [&] { return real_.DeleteHostVeth(name); });
  }
  void ConfigureContainer(const bridge::Config& c, const std::string& ifname, const bridge::Plan& p) override {
    Do("ConfigureContainer", [&] { real_.ConfigureContainer(c, ifname, p); });
  }
  void ConfigureGateway(const bridge::Config& c, const nl::LinkInfo& br, const bridge::Plan& p) override {
    Do("ConfigureGateway", [&] { real_.ConfigureGateway(c, br, p); });
  }
  bridge::AttachedLinks WaitUp(const std::string& host_veth, const std::string& ifname) override {
    return Do("WaitUp", [&] { return real_.WaitUp(host_veth, ifname); });
  }
  bool DeleteContainerLink(const std::string& ifname) override {
    return Do("DeleteContainerLink", [&] { return real_.DeleteContainerLink(ifname); });
  }
  bridge::Observed Observe(const bridge::Config& c, const std::string& ifname, const std::set<int>& tables,
                           const std::optional<nat::Spec>& masq) override {
    return Do("Observe", [&] { return real_.Observe(c, ifname, tables, masq); });
  }
  void NatApply(const nat::Spec& spec) override {
    Do("NatApply", [&] { real_.NatApply(spec); });
  }
  bool NatRemove(const nat::Tag& tag) override {
    return Do("NatRemove", [&] { return real_.NatRemove(tag); });
  }
  void NatGc(const std::string& network, const std::vector<cni::Attachment>& valid) override {
    Do("NatGc", [&] { real_.NatGc(network, valid); });
  }

 private:
  template <typename F>
  auto Do(const std::string& name, F&& call) -> decltype(call()) {
    if constexpr (std::is_void_v<decltype(call())>) {
      faults.Step(name, call);
    } else {
      decltype(call()) out{};
      faults.Step(name, [&] { out = call(); });
      return out;
    }
  }
  bridge::KernelOps real_;
};

cni::CmdArgs Args(const Node& node, const TempNetns& pod, const std::string& cid, const std::string& command) {
  json conf = {{"cniVersion", "1.1.0"},
               {"name", "testnet"},
               {"type", "bridge"},
               {"bridge", node.bridge()},
               {"isDefaultGateway", true},
               {"ipMasq", true},
               {"hairpinMode", true},
               {"ipam",
                {{"type", "host-local"},
                 {"dataDir", node.ipam_dir()},
                 {"ranges", json::parse(R"([[{"subnet":"10.78.0.0/24"}],[{"subnet":"fd78::/64"}]])")}}}};
  return MakeCmdArgs(conf, {.command = command, .container_id = cid, .netns = pod.path(), .path = BinDir()});
}

TEST(BridgeRollbackTest, EveryFailingStepLeavesNothing) {
  NETIFACE_REQUIRE_ROOT();
  Node node;
  auto host = nl::NetNs::Open(node.host().path());
  ASSERT_TRUE(host);
  nl::ScopedSetNs in_host(*host);
  int n = 0;
  // "EnsureBridge" and "CreateVeth" fail while host-local still allocates in the background.
  const std::vector<std::string> steps = {"StartIpamAdd",       "EnsureBridge",     "CreateVeth", "WaitIpamAdd",
                                          "ConfigureContainer", "ConfigureGateway", "NatApply",   "WaitUp"};
  for (bool after : {false, true}) {
    for (const auto& failing : steps) {
      // CreateVeth and NatApply leave nothing when they throw (their contract): the host name is random
      // and known to be ours only once the pair exists, and NAT rules go in as one transaction. Their undos
      // are pushed once they succeeded, so failing them after their effect is outside the contract.
      if (after && (failing == "CreateVeth" || failing == "NatApply")) continue;
      SCOPED_TRACE(failing + (after ? " (after its effect)" : " (before its effect)"));
      const TempNetns& pod = node.NewPod();
      // A real runtime's container ID (64 hex digits): longer than a std::string's inline buffer, so an
      // undo that reads a destroyed string is caught by ASan (a short ID hides it).
      std::string cid = std::string(60, 'c') + fmt::format("{:04x}", ++n);
      cni::CmdArgs args = Args(node, pod, cid, "ADD");
      FaultyOps ops(args, failing, after);
      EXPECT_EQ(ThrownError([&] { bridge::Add(args, ops); }).code(), cni::kNetlink);
      EXPECT_TRUE(ops.faults.fired);  // the step was reached: the test is not vacuous
      EXPECT_THAT(node.HostLinks("veth"), IsEmpty());
      EXPECT_THAT(Node::LinksOfKind(pod, "veth"), IsEmpty());
      EXPECT_THAT(node.Reserved("testnet"), IsEmpty());
      EXPECT_THAT(node.host().Sh("nft list ruleset").out, ::testing::Not(::testing::HasSubstr(":" + cid + ":")));
    }
  }
  // The same ADD without a failure works, and its DEL leaves the same nothing.
  const TempNetns& pod = node.NewPod();
  cni::CmdArgs args = Args(node, pod, "ok", "ADD");
  FaultyOps ops(args, "", false);
  cni::Result r = bridge::Add(args, ops);
  EXPECT_EQ(ops.faults.calls,
            (std::vector<std::string>{"Prepare", "StartIpamAdd", "EnsureBridge", "CreateVeth", "WaitIpamAdd",
                                      "ConfigureContainer", "ConfigureGateway", "NatApply", "WaitUp"}));
  EXPECT_EQ(r.interfaces.size(), 3u);
  EXPECT_EQ(node.Reserved("testnet").size(), 2u);
  EXPECT_THAT(node.host().Sh("nft list ruleset").out, ::testing::HasSubstr(":ok:eth0"));
  cni::CmdArgs del = Args(node, pod, "ok", "DEL");
  bridge::KernelOps del_ops(del);
  bridge::Del(del, del_ops);
  EXPECT_THAT(node.HostLinks("veth"), IsEmpty());
  EXPECT_THAT(node.Reserved("testnet"), IsEmpty());
  EXPECT_THAT(node.host().Sh("nft list ruleset").out, ::testing::Not(::testing::HasSubstr(":ok:")));
}

// The IPAM ADD runs in the background while the bridge and the pair are made. A failure there must let
// it finish before the rollback's DEL: a DEL that came first would find nothing, and the allocation
// landing after it would leak. An IPAM that takes 300 ms makes the order certain.
TEST(BridgeRollbackTest, RollbackWaitsForTheRunningIpamAdd) {
  NETIFACE_REQUIRE_ROOT();
  Node node;
  TempDir plugins;
  const std::string slow = plugins / "slow-ipam";
  {
    std::ofstream f(slow);
    f << "#!/bin/sh\n[ \"$CNI_COMMAND\" = ADD ] && /bin/sleep 0.3\nexec " << Bin("host-local") << "\n";
  }
  std::filesystem::permissions(slow, std::filesystem::perms::owner_all);
  auto host = nl::NetNs::Open(node.host().path());
  ASSERT_TRUE(host);
  nl::ScopedSetNs in_host(*host);
  const TempNetns& pod = node.NewPod();
  cni::CmdArgs args = Args(node, pod, "slow", "ADD");
  args.conf.raw["ipam"]["type"] = "slow-ipam";
  args.stdin_data = args.conf.raw.dump();
  args.conf = cni::ParseNetConf(args.stdin_data);
  args.path = plugins.path() + ":" + BinDir();
  FaultyOps ops(args, "CreateVeth", false);
  EXPECT_EQ(ThrownError([&] { bridge::Add(args, ops); }).code(), cni::kNetlink);
  EXPECT_THAT(node.Reserved("testnet"), IsEmpty());
  EXPECT_THAT(node.HostLinks("veth"), IsEmpty());
}

}  // namespace
}  // namespace netiface::testing
