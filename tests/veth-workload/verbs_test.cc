// The verbs against FakeOps: call order, rollback at every step, DEL's collect-everything rule, CHECK,
// STATUS and GC. No root needed.
#include <gtest/gtest.h>

#include "fake_ops.h"
#include "netiface/cni/error.h"
#include "netiface/veth_workload/veth_workload.h"
#include "test_helpers.h"
#include "testutil.h"

namespace netiface::veth_workload {
namespace {

using nlohmann::json;
using test::BaseConf;
using test::FakeOps;
using test::MakeArgs;

const std::string kVeth = "cali82111e10a96";
const std::string kRecordKey = "namespace/node1-k8s-podname-eth0";

cni::Result IpamResult() {
  cni::Result r;
  r.ips.push_back({.address = *cni::IpNet::Parse("10.0.0.2/24"), .gateway = *cni::IpAddr::Parse("10.0.0.1")});
  return r;
}

json MasqConf() {
  json conf = BaseConf();
  conf["ipMasq"] = true;
  return conf;
}

template <typename F>
cni::Error Throws(F&& f) {
  return testing::ThrownError(std::forward<F>(f));
}

class VerbsTest : public ::testing::Test {
 protected:
  void SetUp() override { ops_.ipam_result = IpamResult(); }
  // Nothing of an attachment is left.
  void ExpectClean() {
    EXPECT_FALSE(ops_.ip_reserved);
    EXPECT_TRUE(ops_.links.empty());
    EXPECT_TRUE(ops_.nat_rules.empty());
    EXPECT_TRUE(ops_.records.empty());
    EXPECT_TRUE(ops_.by_attachment.empty());
  }
  FakeOps ops_;
};

TEST_F(VerbsTest, AddOrderAndResult) {
  cni::Result r = Add(MakeArgs(MasqConf(), test::kPodArgs), ops_);
  // IPAM runs in the background while the pair is created.
  EXPECT_EQ(ops_.calls, (std::vector<std::string>{"Prepare", "IpamAdd", "DeleteHostVeth", "CreateVeth", "IpamAddWait",
                                                  "ConfigureContainer", "ConfigureHost", "NatApply", "WriteRecord"}));
  EXPECT_TRUE(ops_.ip_reserved);
  EXPECT_EQ(ops_.links.at(kVeth), "eth0");
  EXPECT_EQ(ops_.nat_rules, std::set<std::string>{"ctr1"});
  ASSERT_EQ(ops_.records.count(kRecordKey), 1u);
  EXPECT_EQ(ops_.records[kRecordKey].host_veth, kVeth);
  EXPECT_EQ(ops_.records[kRecordKey].container_mac, "0a:58:0a:00:00:02");
  ASSERT_EQ(r.interfaces.size(), 2u);
  EXPECT_EQ(r.interfaces[0].name, kVeth);
  EXPECT_EQ(r.interfaces[1].mac, "0a:58:0a:00:00:02");
  EXPECT_EQ(r.ips.at(0).address.ToString(), "10.0.0.2/32");
}

TEST_F(VerbsTest, AddTakesAnIpamResultThatIsInBeforeTheLinks) {
  ops_.ipam_in_process = true;  // IPAM ran in this process (in_process.h)
  Add(MakeArgs(MasqConf(), test::kPodArgs), ops_);
  EXPECT_EQ(ops_.calls, (std::vector<std::string>{"Prepare", "IpamAdd", "IpamAddWait", "DeleteHostVeth", "CreateVeth",
                                                  "ConfigureContainer", "ConfigureHost", "NatApply", "WriteRecord"}));
  EXPECT_TRUE(ops_.ip_reserved);
}

TEST_F(VerbsTest, AddWithoutNatSkipsIt) {
  Add(MakeArgs(BaseConf(), test::kPodArgs), ops_);
  EXPECT_EQ(ops_.Count("NatApply"), 0);
  EXPECT_TRUE(ops_.nat_rules.empty());
}

TEST_F(VerbsTest, AddReplacesStaleHostVeth) {
  ops_.links[kVeth] = "eth0-of-an-old-sandbox";
  Add(MakeArgs(BaseConf(), test::kPodArgs), ops_);
  EXPECT_EQ(ops_.deleted_host_veths, std::vector<std::string>{kVeth});
  EXPECT_EQ(ops_.links.at(kVeth), "eth0");
}

TEST_F(VerbsTest, AddUsesRequestedMac) {
  cni::Result r = Add(MakeArgs(BaseConf(), std::string(test::kPodArgs) + ";MAC=0a:00:00:00:00:09"), ops_);
  EXPECT_EQ(r.interfaces[1].mac, "0a:00:00:00:00:09");
}

// A failure at any step, before or after the step took effect, leaves nothing behind.
TEST_F(VerbsTest, RollbackAtEveryStep) {
  const std::vector<std::string> steps = {"IpamAdd",       "DeleteHostVeth", "CreateVeth", "ConfigureContainer",
                                          "ConfigureHost", "NatApply",       "WriteRecord"};
  for (bool after : {false, true}) {
    for (const auto& step : steps) {
      // NatApply is one nftables transaction that leaves nothing when it throws: failing it after its
      // effect is outside its contract (its undo is pushed once it succeeded).
      if (after && step == "NatApply") continue;
      SCOPED_TRACE(step + (after ? " (after its effect)" : " (before its effect)"));
      ops_ = FakeOps();
      ops_.ipam_result = IpamResult();
      ops_.fail_at = step;
      ops_.fail_after = after;
      cni::Error e = Throws([&] { Add(MakeArgs(MasqConf(), test::kPodArgs), ops_); });
      EXPECT_EQ(e.code(), cni::kNetlink);
      EXPECT_NE(std::string(e.what()).find(step), std::string::npos) << e.what();
      ExpectClean();
      EXPECT_EQ(ops_.Count("IpamDel"), 1);  // a failed delegated ADD is DELeted too
      // ... after it finished, also when the failure came while it was running.
      EXPECT_EQ(ops_.calls.back(), "IpamDel") << ::testing::PrintToString(ops_.calls);
      // A started IPAM ADD is waited for, also when its start reported a failure after the child began.
      EXPECT_EQ(ops_.Count("IpamAddWait"), step == "IpamAdd" && !after ? 0 : 1);
    }
  }
}

TEST_F(VerbsTest, InvalidInputChangesNothing) {
  json conf = BaseConf();
  conf["mtu"] = "big";
  EXPECT_EQ(Throws([&] { Add(MakeArgs(conf, test::kPodArgs), ops_); }).code(), cni::kInvalidConfig);
  conf = BaseConf();
  conf["args"] = {{"cni", {{"ipAddrsNoIpam", {"10.9.0.5"}}}}};
  EXPECT_EQ(Throws([&] { Add(MakeArgs(conf, test::kPodArgs), ops_); }).code(), cni::kInvalidConfig);
  EXPECT_EQ(Throws([&] { Add(MakeArgs(BaseConf(), "BOGUS=1"), ops_); }).code(), cni::kInvalidEnv);
  EXPECT_TRUE(ops_.calls.empty()) << ::testing::PrintToString(ops_.calls);
}

TEST_F(VerbsTest, PrepareFailureComesBeforeIpam) {
  ops_.fail_at = "Prepare";
  Throws([&] { Add(MakeArgs(BaseConf(), test::kPodArgs), ops_); });
  EXPECT_EQ(ops_.calls, std::vector<std::string>{"Prepare"});
}

TEST_F(VerbsTest, IpAddrsNoIpamBypassesIpam) {
  json conf = BaseConf();
  conf["featureControl"] = {{"ipAddrsNoIpam", true}};
  conf["args"] = {{"cni", {{"ipAddrsNoIpam", {"10.9.0.5"}}}}};
  cni::Result r = Add(MakeArgs(conf, test::kPodArgs), ops_);
  EXPECT_EQ(ops_.Count("IpamAdd"), 0);
  EXPECT_EQ(r.ips.at(0).address.ToString(), "10.9.0.5/32");
  ops_ = FakeOps();
  ops_.fail_at = "ConfigureHost";
  Throws([&] { Add(MakeArgs(conf, test::kPodArgs), ops_); });
  EXPECT_EQ(ops_.Count("IpamDel"), 0);
  EXPECT_TRUE(ops_.links.empty());
}

TEST_F(VerbsTest, AddFailsWhenIpamGivesNoAddress) {
  ops_.ipam_result = cni::Result{};
  EXPECT_EQ(Throws([&] { Add(MakeArgs(BaseConf(), test::kPodArgs), ops_); }).code(), cni::kInvalidConfig);
  EXPECT_EQ(ops_.Count("IpamDel"), 1);
  // The pair was created while IPAM ran; the rollback removed it.
  EXPECT_TRUE(ops_.links.empty());
}

TEST_F(VerbsTest, DelUndoesAdd) {
  Add(MakeArgs(MasqConf(), test::kPodArgs), ops_);
  ops_.calls.clear();
  Del(MakeArgs(MasqConf(), test::kPodArgs, "DEL"), ops_);
  // The record by attachment, then whether its name is still this attachment's.
  EXPECT_EQ(ops_.calls, (std::vector<std::string>{"FindRecord", "ReadRecord", "IpamDel", "DeleteContainerLink",
                                                  "NatRemove", "RemoveRecord"}));
  ops_.calls.clear();
  ExpectClean();
  // Idempotent.
  Del(MakeArgs(MasqConf(), test::kPodArgs, "DEL"), ops_);
  ExpectClean();
}

// An ADD killed before it wrote its record may have left a draft under the record's name: DEL tidies
// the name (RemoveRecord keeps another container's record) also when there is no record.
TEST_F(VerbsTest, DelWithoutARecordStillTidiesTheRecordsName) {
  Del(MakeArgs(BaseConf(), test::kPodArgs, "DEL"), ops_);
  EXPECT_EQ(ops_.Count("RemoveRecord"), 1);
  ExpectClean();
}

TEST_F(VerbsTest, DelWithoutNetnsUsesTheRecord) {
  Add(MakeArgs(BaseConf(), test::kPodArgs), ops_);
  Del(MakeArgs(BaseConf(), test::kPodArgs, "DEL", ""), ops_);
  EXPECT_EQ(ops_.Count("DeleteContainerLink"), 0);
  ExpectClean();
}

TEST_F(VerbsTest, DelOfAnOldSandboxKeepsTheNewOnes) {
  Add(MakeArgs(BaseConf(), test::kPodArgs, "ADD", "/run/netns/new", "new"), ops_);
  ops_.calls.clear();
  Del(MakeArgs(BaseConf(), test::kPodArgs, "DEL", "", "old"), ops_);
  EXPECT_EQ(ops_.Count("IpamDel"), 1);
  EXPECT_EQ(ops_.Count("DeleteHostVeth"), 0);
  EXPECT_EQ(ops_.links.count(kVeth), 1u);
  EXPECT_EQ(ops_.records.count(kRecordKey), 1u);
}

// Both sandboxes of a pod were ADDed; the newer one took over the record's name and the host veth name.
// The older one's DEL (no netns: its sandbox is gone) finds its own record by attachment, but must not
// touch the newer sandbox's veth or record.
TEST_F(VerbsTest, DelOfAReplacedSandboxLeavesTheNewerAlone) {
  Add(MakeArgs(BaseConf(), test::kPodArgs, "ADD", "/run/netns/old", "old"), ops_);
  ops_.ip_reserved = false;  // the fake IPAM holds one reservation; the newer sandbox takes it
  Add(MakeArgs(BaseConf(), test::kPodArgs, "ADD", "/run/netns/new", "new"), ops_);
  ops_.calls.clear();
  Del(MakeArgs(BaseConf(), test::kPodArgs, "DEL", "", "old"), ops_);
  EXPECT_EQ(ops_.Count("DeleteHostVeth"), 0);
  EXPECT_EQ(ops_.links.count(kVeth), 1u);
  ASSERT_EQ(ops_.records.count(kRecordKey), 1u);
  EXPECT_EQ(ops_.records.at(kRecordKey).container_id, "new");
  EXPECT_EQ(ops_.by_attachment.count("old:eth0"), 0u);
  EXPECT_EQ(ops_.by_attachment.count("new:eth0"), 1u);
  // The newer sandbox's DEL without netns removes its veth through the record.
  Del(MakeArgs(BaseConf(), test::kPodArgs, "DEL", "", "new"), ops_);
  EXPECT_EQ(ops_.links.count(kVeth), 0u);
  EXPECT_TRUE(ops_.records.empty());
  EXPECT_TRUE(ops_.by_attachment.empty());
}

TEST_F(VerbsTest, DelDoesEveryStepAndReportsAll) {
  Add(MakeArgs(MasqConf(), test::kPodArgs), ops_);
  ops_.fail_at = "DeleteContainerLink";
  cni::Error e = Throws([&] { Del(MakeArgs(MasqConf(), test::kPodArgs, "DEL"), ops_); });
  EXPECT_EQ(e.code(), cni::kNetlink);
  EXPECT_FALSE(ops_.ip_reserved);       // IPAM DEL still ran
  EXPECT_TRUE(ops_.nat_rules.empty());  // and NAT removal
  EXPECT_EQ(ops_.records.size(), 1u);   // the record stays for the retry
  // The retry finishes the job.
  Del(MakeArgs(MasqConf(), test::kPodArgs, "DEL"), ops_);
  ExpectClean();
}

TEST_F(VerbsTest, DelReportsEveryFailure) {
  struct TwoFailures : FakeOps {
    void IpamDel() override { throw cni::Error(cni::kIoFailure, "ipam is broken"); }
    bool NatRemove(const nat::Tag&) override { throw cni::Error(cni::kNatFailure, "nft is broken"); }
  } ops;
  cni::Error e = Throws([&] { Del(MakeArgs(MasqConf(), test::kPodArgs, "DEL"), ops); });
  EXPECT_EQ(e.code(), cni::kIoFailure);
  EXPECT_NE(std::string(e.what()).find("ipam is broken"), std::string::npos) << e.what();
  EXPECT_NE(std::string(e.what()).find("nft is broken"), std::string::npos) << e.what();
}

// DEL needs neither the node name nor the same CNI_ARGS as ADD: the record is found by attachment.
TEST_F(VerbsTest, DelFindsTheRecordWithoutTheIdentity) {
  testing::TempDir dir;
  testing::WriteFile(dir / "nodename", "node1");
  json conf = BaseConf();
  conf.erase("nodename");
  conf["nodenameFile"] = dir / "nodename";
  Add(MakeArgs(conf, test::kPodArgs), ops_);
  conf["nodenameFile"] = dir / "gone";
  Del(MakeArgs(conf, test::kPodArgs, "DEL", ""), ops_);
  ExpectClean();

  Add(MakeArgs(BaseConf(), test::kPodArgs), ops_);
  Del(MakeArgs(BaseConf(), "IgnoreUnknown=1", "DEL", ""), ops_);
  ExpectClean();
}

TEST_F(VerbsTest, CheckPassesOnItsOwnAdd) {
  for (std::string version : {"0.4.0", "1.0.0", "1.1.0"}) {
    SCOPED_TRACE(version);
    ops_ = FakeOps();
    ops_.ipam_result = IpamResult();
    json conf = MasqConf();
    conf["cniVersion"] = version;
    cni::Result r = Add(MakeArgs(conf, test::kPodArgs), ops_);
    Config c = ParseConfig(cni::ParseNetConf(conf.dump()));
    Identity id = ParseIdentity(MakeArgs(conf, test::kPodArgs), "node1");
    ops_.observed = test::ObservedFor(MakePlan(c, id, {}, IpamResult(), "/run/netns/pod"), r.interfaces[1].mac);
    conf["prevResult"] = cni::ResultToJson(r, version);
    ops_.calls.clear();
    Check(MakeArgs(conf, test::kPodArgs, "CHECK"), ops_);
    EXPECT_EQ(ops_.calls, (std::vector<std::string>{"IpamCheck", "Observe", "ReadRecord", "NatVerify"}));

    ops_.observed->container_routes.pop_back();
    cni::Error e = Throws([&] { Check(MakeArgs(conf, test::kPodArgs, "CHECK"), ops_); });
    EXPECT_EQ(e.code(), cni::kInternal);
    EXPECT_NE(std::string(e.what()).find("0.0.0.0/0"), std::string::npos) << e.what();

    ops_.observed->netns_exists = false;
    EXPECT_EQ(Throws([&] { Check(MakeArgs(conf, test::kPodArgs, "CHECK"), ops_); }).code(), cni::kUnknownContainer);
  }
}

TEST_F(VerbsTest, CheckNoticesMissingRecordAndNatRules) {
  json conf = MasqConf();
  cni::Result r = Add(MakeArgs(conf, test::kPodArgs), ops_);
  Config c = ParseConfig(cni::ParseNetConf(conf.dump()));
  Identity id = ParseIdentity(MakeArgs(conf, test::kPodArgs), "node1");
  ops_.observed = test::ObservedFor(MakePlan(c, id, {}, IpamResult(), "/run/netns/pod"), r.interfaces[1].mac);
  conf["prevResult"] = cni::ResultToJson(r, "1.1.0");
  ops_.nat_rules.clear();
  EXPECT_NE(std::string(Throws([&] { Check(MakeArgs(conf, test::kPodArgs, "CHECK"), ops_); }).what()).find("NAT"),
            std::string::npos);
  ops_.records.clear();
  EXPECT_NE(
      std::string(Throws([&] { Check(MakeArgs(conf, test::kPodArgs, "CHECK"), ops_); }).what()).find("endpoint record"),
      std::string::npos);
}

TEST_F(VerbsTest, CheckNeedsPrevResultAndPropagatesIpam) {
  EXPECT_EQ(Throws([&] { Check(MakeArgs(BaseConf(), test::kPodArgs, "CHECK"), ops_); }).code(), cni::kInvalidConfig);
  json conf = BaseConf();
  cni::Result r = Add(MakeArgs(conf, test::kPodArgs), ops_);
  conf["prevResult"] = cni::ResultToJson(r, "1.1.0");
  ops_.fail_at = "IpamCheck";
  EXPECT_EQ(Throws([&] { Check(MakeArgs(conf, test::kPodArgs, "CHECK"), ops_); }).code(), cni::kNetlink);
}

TEST_F(VerbsTest, StatusForwardsToIpam) {
  Status(MakeArgs(BaseConf(), "", "STATUS"), ops_);
  EXPECT_EQ(ops_.calls, std::vector<std::string>{"IpamStatus"});
  ops_.fail_at = "IpamStatus";
  Throws([&] { Status(MakeArgs(BaseConf(), "", "STATUS"), ops_); });
}

TEST_F(VerbsTest, GcRemovesStaleRecordsAndTheirNat) {
  Add(MakeArgs(MasqConf(), test::kPodArgs, "ADD", "/run/netns/a", "keep"), ops_);
  Add(MakeArgs(MasqConf(), "IgnoreUnknown=1", "ADD", "/run/netns/b", "stale"), ops_);
  EXPECT_EQ(ops_.records.size(), 2u);
  json conf = MasqConf();
  conf["cni.dev/valid-attachments"] = {{{"containerID", "keep"}, {"ifname", "eth0"}}};
  ops_.calls.clear();
  Gc(MakeArgs(conf, "", "GC", ""), ops_);
  EXPECT_EQ(ops_.calls, (std::vector<std::string>{"IpamGc", "RemoveStaleRecords", "NatRemove", "NatGc"}));
  ASSERT_EQ(ops_.records.size(), 1u);
  EXPECT_EQ(ops_.records.begin()->second.container_id, "keep");
  EXPECT_EQ(ops_.nat_rules, std::set<std::string>{"keep"});
}

TEST_F(VerbsTest, GcKeepsGoingAfterIpamFailure) {
  Add(MakeArgs(BaseConf(), "", "ADD", "/run/netns/b", "stale"), ops_);
  json conf = BaseConf();
  conf["cni.dev/attachments"] = json::array();
  ops_.fail_at = "IpamGc";
  cni::Error e = Throws([&] { Gc(MakeArgs(conf, "", "GC", ""), ops_); });
  EXPECT_NE(std::string(e.what()).find("IPAM GC"), std::string::npos);
  EXPECT_TRUE(ops_.records.empty());
}

TEST_F(VerbsTest, GcWithoutValidListKeepsRecords) {
  Add(MakeArgs(BaseConf(), test::kPodArgs), ops_);
  Gc(MakeArgs(BaseConf(), "", "GC", ""), ops_);
  EXPECT_EQ(ops_.Count("RemoveStaleRecords"), 0);
  EXPECT_EQ(ops_.records.size(), 1u);
}

}  // namespace
}  // namespace netiface::veth_workload
