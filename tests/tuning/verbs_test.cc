// The verbs over FakeOps: ADD's changes and backup, DEL putting every value back, CHECK, and a failed
// ADD leaving nothing, with the failure at every step before and after its effect.
#include <gtest/gtest.h>

#include "cni_helpers.h"
#include "fake_ops.h"
#include "netiface/cni/error.h"
#include "netiface/tuning/tuning.h"

namespace netiface::tuning {
namespace {

constexpr const char* kId = "0123456789abcdef";
constexpr const char* kFile = "/run/cni/tuning/0123456789abcdef_eth0.json";

cni::CmdArgs Args(const std::string& command, const std::string& keys, bool prev = true) {
  cni::CmdArgs a;
  a.command = command;
  a.container_id = kId;
  a.netns = "/run/netns/c";
  a.ifname = "eth0";
  std::string conf = R"({"cniVersion":"1.0.0","name":"tnet","type":"tuning")";
  if (!keys.empty()) conf += "," + keys;
  if (prev) {
    conf += R"(,"prevResult":{"cniVersion":"1.0.0","interfaces":[{"name":"veth1","mac":"ee:00:00:00:00:01"},)"
            R"({"name":"eth0","mac":"0a:58:0a:00:00:02","sandbox":"/run/netns/c"}],)"
            R"("ips":[{"address":"10.0.0.2/24","interface":1}]})";
  }
  a.conf = cni::ParseNetConf(conf + "}");
  return a;
}

const std::string kAll = R"("sysctl":{"net.core.somaxconn":"500","net.ipv4.conf.IFNAME.arp_filter":"1"},)"
                         R"("mac":"c2:11:22:33:44:55","promisc":true,"mtu":9000,"allmulti":true,"txQLen":64)";

TEST(TuningAdd, ChangesEverythingAndSavesTheOriginals) {
  test::FakeOps ops;
  const test::FakeOps before = ops;
  cni::Result r = Add(Args("ADD", kAll), ops);
  EXPECT_EQ(r.interfaces[1].mac, "c2:11:22:33:44:55");  // the container's interface only
  EXPECT_EQ(r.interfaces[0].mac, "ee:00:00:00:00:01");
  EXPECT_EQ(ops.links["eth0"],
            (LinkState{.mac = "c2:11:22:33:44:55", .mtu = 9000, .promisc = true, .allmulti = true, .txqlen = 64}));
  EXPECT_EQ(ops.sysctls["net/core/somaxconn"], "500");
  EXPECT_EQ(ops.sysctls["net/ipv4/conf/eth0/arp_filter"], "1");
  ASSERT_TRUE(ops.files.count(kFile));
  EXPECT_EQ(BackupFromJson(ops.files[kFile]),
            (Backup{.mac = "0a:58:0a:00:00:02",
                    .promisc = false,
                    .mtu = 1500,
                    .allmulti = false,
                    .txqlen = 1000,
                    .sysctls = {{"net/core/somaxconn", "4096"}, {"net/ipv4/conf/eth0/arp_filter", "0"}}}));
  EXPECT_NO_THROW(Check(Args("CHECK", kAll), ops));

  // A repeated ADD keeps the first originals, so one DEL restores the state before both.
  Add(Args("ADD", kAll), ops);
  Del(Args("DEL", kAll), ops);
  EXPECT_EQ(ops.links, before.links);
  EXPECT_EQ(ops.sysctls, before.sysctls);
  EXPECT_TRUE(ops.files.empty());
  // Idempotent.
  Del(Args("DEL", kAll), ops);
  EXPECT_EQ(ops.faults.Count("ReadFile"), 4);
}

TEST(TuningAdd, NothingToTunePassesPrevResultThrough) {
  test::FakeOps ops;
  cni::CmdArgs a = Args("ADD", "");
  EXPECT_EQ(Add(a, ops), *a.conf.prev_result);
  EXPECT_TRUE(ops.faults.calls.empty());
}

TEST(TuningAdd, RefusesBeforeAnyChange) {
  struct Case {
    const char* name;
    std::function<void(test::FakeOps&)> setup;
    std::string keys;
    bool prev;
    int code;
  };
  const std::vector<Case> cases = {
      {"no prevResult", nullptr, kAll, false, cni::kInvalidConfig},
      {"no netns", [](test::FakeOps& o) { o.netns = false; }, kAll, true, cni::kInvalidEnv},
      {"no link", [](test::FakeOps& o) { o.links.clear(); }, kAll, true, cni::kInvalidEnv},
      {"no such sysctl", nullptr, R"("sysctl":{"net.ipv4.nope":"1"})", true, cni::kInvalidConfig},
      {"outside net", nullptr, R"("sysctl":{"kernel.panic":"1"})", true, cni::kInvalidConfig},
  };
  for (const Case& k : cases) {
    SCOPED_TRACE(k.name);
    test::FakeOps ops;
    if (k.setup) k.setup(ops);
    const test::FakeOps before = ops;
    EXPECT_EQ(testing::ThrownError([&] { Add(Args("ADD", k.keys, k.prev), ops); }).code(), k.code);
    EXPECT_EQ(ops.links, before.links);
    EXPECT_EQ(ops.sysctls, before.sysctls);
    EXPECT_TRUE(ops.files.empty());
  }
}

// Every step of a full ADD, failing before and after its effect: the namespace and the files are as
// they were, including an earlier backup of the same attachment.
TEST(TuningAdd, AFailureAtEveryStepUndoesEverything) {
  test::FakeOps probe;
  Add(Args("ADD", kAll), probe);
  const std::vector<std::string> steps = probe.faults.calls;
  ASSERT_GE(steps.size(), 12u);
  for (bool earlier : {false, true}) {
    for (const std::string& step : steps) {
      for (bool after : {false, true}) {
        SCOPED_TRACE(step + (after ? " (after)" : " (before)") + (earlier ? ", with an earlier backup" : ""));
        test::FakeOps ops;
        if (earlier) ops.files[kFile] = R"({"mtu": 1400})";
        const test::FakeOps before = ops;
        ops.faults.fail_at = step;
        ops.faults.fail_after = after;
        EXPECT_NE(testing::ThrownError([&] { Add(Args("ADD", kAll), ops); }).code(), 0);
        EXPECT_EQ(ops.links, before.links);
        EXPECT_EQ(ops.sysctls, before.sysctls);
        EXPECT_EQ(ops.files, before.files);
      }
    }
  }
}

TEST(TuningDel, AGoneNamespaceOrLinkDropsTheBackup) {
  for (bool gone_ns : {true, false}) {
    test::FakeOps ops;
    Add(Args("ADD", kAll), ops);
    if (gone_ns) {
      ops.netns = false;
    } else {
      ops.links.clear();
    }
    EXPECT_NO_THROW(Del(Args("DEL", kAll), ops));
    EXPECT_TRUE(ops.files.empty());
  }
  test::FakeOps ops;
  Add(Args("ADD", kAll), ops);
  cni::CmdArgs no_netns = Args("DEL", kAll);
  no_netns.netns.clear();
  EXPECT_NO_THROW(Del(no_netns, ops));
  EXPECT_TRUE(ops.files.empty());
}

TEST(TuningDel, AFailedRestoreKeepsTheBackupForTheNextDel) {
  test::FakeOps ops;
  const test::FakeOps before = ops;
  Add(Args("ADD", kAll), ops);
  ops.faults.fail_at = "SetMtu";
  EXPECT_NE(testing::ThrownError([&] { Del(Args("DEL", kAll), ops); }).code(), 0);
  EXPECT_TRUE(ops.files.count(kFile));
  EXPECT_EQ(ops.links["eth0"].mac, before.links.at("eth0").mac);  // the other values were restored
  Del(Args("DEL", kAll), ops);
  EXPECT_EQ(ops.links, before.links);
  EXPECT_EQ(ops.sysctls, before.sysctls);
  EXPECT_TRUE(ops.files.empty());
}

TEST(TuningDel, ABackupCannotWriteOutsideNet) {
  test::FakeOps ops;
  ops.sysctls["kernel/panic"] = "0";
  ops.files[kFile] = R"({"sysctl":{"kernel/panic":"1","net/core/somaxconn":"7"}})";
  EXPECT_NE(testing::ThrownError([&] { Del(Args("DEL", ""), ops); }).code(), 0);
  EXPECT_EQ(ops.sysctls["kernel/panic"], "0");
  EXPECT_EQ(ops.sysctls["net/core/somaxconn"], "7");
  ops.files[kFile] = "not json";
  EXPECT_NO_THROW(Del(Args("DEL", ""), ops));
  EXPECT_TRUE(ops.files.empty());
}

TEST(TuningCheck, NoticesEachChange) {
  test::FakeOps ops;
  Add(Args("ADD", kAll), ops);
  EXPECT_NO_THROW(Check(Args("CHECK", kAll), ops));
  ops.sysctls["net/core/somaxconn"] = "4096";
  EXPECT_EQ(testing::ThrownError([&] { Check(Args("CHECK", kAll), ops); }).code(), cni::kInternal);
  ops.sysctls["net/core/somaxconn"] = "500";
  ops.links["eth0"].txqlen = 1;
  EXPECT_EQ(testing::ThrownError([&] { Check(Args("CHECK", kAll), ops); }).code(), cni::kInternal);
  // promisc false means "must be off", as in the reference.
  test::FakeOps plain;
  plain.links["eth0"].promisc = true;
  EXPECT_EQ(testing::ThrownError([&] { Check(Args("CHECK", ""), plain); }).code(), cni::kInternal);
  EXPECT_EQ(testing::ThrownError([&] { Check(Args("CHECK", "", false), plain); }).code(), cni::kInvalidConfig);
}

}  // namespace
}  // namespace netiface::tuning
