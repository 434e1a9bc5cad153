// Rollback of a failed ADD over the real kernel, host-local and nftables: veth-workload's ADD runs
// in-process inside a throw-away "host" namespace through FaultyOps, which wraps KernelOps and fails
// one step before or after its effect. Every time, nothing may remain: no link, route, record, NAT
// rule or IP reservation.
#include <gtest/gtest.h>

#include "cni_helpers.h"
#include "netiface/cni/error.h"
#include "netiface/netlink/netns.h"
#include "netiface/veth_workload/kernel_ops.h"
#include "netiface/veth_workload/veth_workload.h"
#include "node_fixture.h"

namespace netiface::veth_workload::test {
namespace {

class FaultyOps : public Ops {
 public:
  FaultyOps(const cni::CmdArgs& args, std::string fail_at, bool after)
      : real_(args), fail_at_(std::move(fail_at)), after_(after) {}

  // The real background start. Failing "after" it leaves host-local running while the rollback
  // starts, and so do failures of the steps that overlap it (DeleteHostVeth, CreateVeth).
  void StartIpamAdd() override {
    Step("IpamAdd", [&] { real_.StartIpamAdd(); });
  }
  cni::Result WaitIpamAdd() override { return real_.WaitIpamAdd(); }
  void IpamDel() override {
    Step("IpamDel", [&] { real_.IpamDel(); });
  }
  void IpamCheck() override {
    Step("IpamCheck", [&] { real_.IpamCheck(); });
  }
  void IpamStatus() override {
    Step("IpamStatus", [&] { real_.IpamStatus(); });
  }
  void IpamGc() override {
    Step("IpamGc", [&] { real_.IpamGc(); });
  }
  void Prepare(const std::string& ifname) override {
    Step("Prepare", [&] { real_.Prepare(ifname); });
  }
  bool DeleteHostVeth(const std::string& name) override {
    return Step("DeleteHostVeth", [&] { return real_.DeleteHostVeth(name); });
  }
  std::string CreateVeth(const Plan& plan) override {
    return Step("CreateVeth", [&] { return real_.CreateVeth(plan); });
  }
  void ConfigureContainer(const Plan& plan) override {
    Step("ConfigureContainer", [&] { real_.ConfigureContainer(plan); });
  }
  void ConfigureHost(const Plan& plan) override {
    Step("ConfigureHost", [&] { real_.ConfigureHost(plan); });
  }
  bool DeleteContainerLink(const std::string& ifname) override {
    return Step("DeleteContainerLink", [&] { return real_.DeleteContainerLink(ifname); });
  }
  Observed Observe(const std::string& veth, const std::string& ifname, const std::vector<std::string>& keys) override {
    return Step("Observe", [&] { return real_.Observe(veth, ifname, keys); });
  }
  void NatApply(const nat::Spec& spec) override {
    Step("NatApply", [&] { real_.NatApply(spec); });
  }
  bool NatRemove(const nat::Tag& tag) override {
    return Step("NatRemove", [&] { return real_.NatRemove(tag); });
  }
  void NatVerify(const nat::Spec& spec) override {
    Step("NatVerify", [&] { real_.NatVerify(spec); });
  }
  void NatGc(const std::string& network, const std::vector<cni::Attachment>& valid) override {
    Step("NatGc", [&] { real_.NatGc(network, valid); });
  }
  // Not a step of its own (it never throws); forwarded so that a failure after it must remove the draft.
  void DraftRecord(const std::string& folder, const std::string& name) override { real_.DraftRecord(folder, name); }
  void WriteRecord(const EndpointRecord& r) override {
    Step("WriteRecord", [&] { real_.WriteRecord(r); });
  }
  std::optional<EndpointRecord> ReadRecord(const std::string& folder, const std::string& name) override {
    return Step("ReadRecord", [&] { return real_.ReadRecord(folder, name); });
  }
  std::optional<EndpointRecord> FindRecord(const std::string& cid, const std::string& ifname) override {
    return Step("FindRecord", [&] { return real_.FindRecord(cid, ifname); });
  }
  bool RemoveRecord(const std::string& folder, const std::string& name, const std::string& cid,
                    const std::string& ifname) override {
    return Step("RemoveRecord", [&] { return real_.RemoveRecord(folder, name, cid, ifname); });
  }
  std::vector<EndpointRecord> RemoveStaleRecords(const std::vector<cni::Attachment>& valid,
                                                 std::vector<std::string>& errors) override {
    return Step("RemoveStaleRecords", [&] { return real_.RemoveStaleRecords(valid, errors); });
  }

  bool fired() const { return fired_; }

 private:
  // Runs the real step; the first call named fail_at_ throws before it, or after it took effect.
  template <typename F>
  auto Step(const std::string& name, F&& f) -> decltype(f()) {
    bool fail = !fired_ && name == fail_at_;
    fired_ = fired_ || fail;
    if (fail && !after_) throw cni::Error(cni::kNetlink, "injected failure before " + name);
    if constexpr (std::is_void_v<decltype(f())>) {
      f();
      if (fail) throw cni::Error(cni::kNetlink, "injected failure after " + name);
    } else {
      auto out = f();
      if (fail) throw cni::Error(cni::kNetlink, "injected failure after " + name);
      return out;
    }
  }

  KernelOps real_;
  std::string fail_at_;
  bool after_;
  bool fired_ = false;
};

class RollbackTest : public NodeTest {
 protected:
  cni::CmdArgs Args(const json& conf, const t::TempNetns& pod, const std::string& cid) const {
    return t::MakeCmdArgs(conf, {.container_id = cid,
                                 .netns = pod.path(),
                                 .cni_args = "IgnoreUnknown=1;K8S_POD_NAMESPACE=default;K8S_POD_NAME=" + cid,
                                 .path = t::BinDir()});
  }
  // Our NAT rules in the host namespace ("" when none).
  std::string NatRules() const {
    auto r = host_->Sh("nft list table inet netiface 2>/dev/null");
    return r.out;
  }
};

TEST_F(RollbackTest, EveryStepBeforeAndAfterItsEffect) {
  json conf = Conf("1.1.0", kDualRange);
  conf["ipMasq"] = true;
  conf["featureControl"] = {{"floatingIps", true}};
  conf["args"] = {{"cni", {{"floatingIps", {"203.0.113.7"}}}}};
  auto host_ns = nl::NetNs::Open(host_->path());
  ASSERT_TRUE(host_ns);
  const std::vector<std::string> steps = {
      "Prepare",       "IpamAdd",  "DeleteHostVeth", "CreateVeth", "ConfigureContainer",
      "ConfigureHost", "NatApply", "WriteRecord"};
  int n = 0;
  for (bool after : {false, true}) {
    for (const auto& step : steps) {
      // NatApply is one nftables transaction that leaves nothing when it throws (see verbs_test).
      if (after && step == "NatApply") continue;
      SCOPED_TRACE(step + (after ? " fails after its effect" : " fails before its effect"));
      const t::TempNetns& pod = NewPod();
      const std::string cid = "rb" + std::to_string(n++);
      cni::CmdArgs args = Args(conf, pod, cid);
      {
        nl::ScopedSetNs in_host(*host_ns);
        FaultyOps ops(args, step, after);
        try {
          veth_workload::Add(args, ops);
          ADD_FAILURE() << "ADD succeeded";
        } catch (const cni::Error& e) {
          EXPECT_NE(std::string(e.what()).find("injected failure"), std::string::npos) << e.what();
        }
        EXPECT_TRUE(ops.fired());
      }
      EXPECT_TRUE(HostLinks().empty()) << ::testing::PrintToString(HostLinks());
      EXPECT_TRUE(HostPodRoutes().empty()) << ::testing::PrintToString(HostPodRoutes());
      EXPECT_TRUE(Reserved().empty()) << ::testing::PrintToString(Reserved());
      EXPECT_TRUE(Records().empty()) << ::testing::PrintToString(Records());
      EXPECT_TRUE(AttachmentLinks().empty()) << ::testing::PrintToString(AttachmentLinks());
      EXPECT_EQ(NatRules().find(cid), std::string::npos) << NatRules();
      EXPECT_NE(pod.Sh("ip link show eth0").exit_code, 0) << "container interface left";
    }
  }
  // And with nothing injected the same ADD works and DEL cleans up.
  const t::TempNetns& pod = NewPod();
  cni::CmdArgs args = Args(conf, pod, "rb-ok");
  cni::Result r;
  {
    nl::ScopedSetNs in_host(*host_ns);
    FaultyOps ops(args, "", false);
    r = veth_workload::Add(args, ops);
  }
  ASSERT_EQ(r.ips.size(), 2u);
  EXPECT_EQ(Reserved().size(), 2u);
  EXPECT_NE(NatRules().find("rb-ok"), std::string::npos) << NatRules();
  EXPECT_TRUE(host_->Ping(r.ips[0].address.addr().ToString()));
  Del(&pod, "rb-ok", conf, args.args);
  EXPECT_TRUE(HostLinks().empty());
  EXPECT_TRUE(Reserved().empty());
  EXPECT_TRUE(Records().empty());
  EXPECT_TRUE(AttachmentLinks().empty()) << ::testing::PrintToString(AttachmentLinks());
  EXPECT_EQ(NatRules().find("rb-ok"), std::string::npos) << NatRules();
}

}  // namespace
}  // namespace netiface::veth_workload::test
