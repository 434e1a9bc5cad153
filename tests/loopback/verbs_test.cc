// The loopback plugin without root: its result and CHECK's comparison as values, and the verbs over
// FakeOps with a failure injected at every step, before and after its effect.
#include <gtest/gtest.h>

#include "cni_helpers.h"
#include "fake_ops.h"
#include "netiface/loopback/loopback.h"

namespace netiface::loopback {
namespace {

using nlohmann::json;
using test::FakeOps;

const std::string kCid = "4f1c3e7a9b2d5f8e0a6c4b2e9d7f1a3c5e8b0d2f4a6c8e1b3d5f7a9c0e2b4d6f";
const std::string kNetns = "/run/netns/pod";

cni::IpNet Net(const char* s) { return *cni::IpNet::Parse(s); }

json Conf(const std::string& version = "1.1.0") {
  return {{"cniVersion", version}, {"name", "lo"}, {"type", "loopback"}};
}

cni::CmdArgs Args(const json& conf, const std::string& command = "ADD", const std::string& netns = kNetns) {
  return testing::MakeCmdArgs(conf, {.command = command, .container_id = kCid, .netns = netns, .ifname = "lo"});
}

TEST(LoopbackResult, IsTheReferencesShape) {
  Observed o{.up = true, .v4 = {Net("127.0.0.1/8")}, .v6 = {Net("::1/128")}};
  cni::Result r = MakeResult(o, kNetns);
  ASSERT_EQ(r.interfaces.size(), 1u);
  EXPECT_EQ(r.interfaces[0], (cni::Interface{.name = "lo", .mac = "00:00:00:00:00:00", .sandbox = kNetns}));
  ASSERT_EQ(r.ips.size(), 2u);
  EXPECT_EQ(r.ips[0], (cni::IpConfig{.interface = 0, .address = Net("127.0.0.1/8")}));
  EXPECT_EQ(r.ips[1], (cni::IpConfig{.interface = 0, .address = Net("::1/128")}));
}

TEST(LoopbackResult, FirstAddressOfEachFamilyOnly) {
  Observed o{.up = true, .v4 = {Net("127.0.0.1/8"), Net("127.1.0.1/32")}, .v6 = {}};
  cni::Result r = MakeResult(o, kNetns);
  ASSERT_EQ(r.ips.size(), 1u);
  EXPECT_EQ(r.ips[0].address, Net("127.0.0.1/8"));
}

TEST(LoopbackResult, NonLoopbackAddressIsAnError) {
  Observed o{.up = true, .v4 = {Net("127.0.0.1/8"), Net("10.0.0.1/24")}};
  EXPECT_EQ(testing::ThrownError([&] { MakeResult(o, kNetns); }).code(), cni::kInternal);
  Observed o6{.up = true, .v6 = {Net("fd00::1/64")}};
  EXPECT_EQ(testing::ThrownError([&] { MakeResult(o6, kNetns); }).code(), cni::kInternal);
}

TEST(LoopbackResult, IsLoopbackAsGo) {
  for (const char* s : {"127.0.0.1", "127.255.0.3", "::1", "::ffff:127.0.0.1"}) {
    EXPECT_TRUE(IsLoopback(*cni::IpAddr::Parse(s))) << s;
  }
  for (const char* s : {"128.0.0.1", "0.0.0.0", "::", "::2", "fe80::1", "::ffff:10.0.0.1", "1::1"}) {
    EXPECT_FALSE(IsLoopback(*cni::IpAddr::Parse(s))) << s;
  }
}

TEST(LoopbackCompare, IntactIsEmptyAndEveryMismatchIsNamed) {
  Observed ok{.up = true, .v4 = {Net("127.0.0.1/8")}, .v6 = {Net("::1/128")}};
  const cni::Result prev = MakeResult(ok, kNetns);
  EXPECT_TRUE(CompareLoopback(ok, prev, kNetns).empty());
  EXPECT_TRUE(CompareLoopback(ok, std::nullopt, kNetns).empty());

  Observed down = ok;
  down.up = false;
  EXPECT_EQ(CompareLoopback(down, prev, kNetns), std::vector<std::string>{"loopback interface is down"});

  Observed no_v6 = ok;
  no_v6.v6.clear();
  EXPECT_EQ(CompareLoopback(no_v6, prev, kNetns), std::vector<std::string>{"lo lacks ::1/128 of prevResult"});

  Observed foreign = ok;
  foreign.v4.push_back(Net("10.1.1.1/24"));
  EXPECT_EQ(CompareLoopback(foreign, prev, kNetns).size(), 1u);
}

TEST(LoopbackCompare, IgnoresPrevResultAddressesOfOtherInterfaces) {
  cni::Result prev;
  prev.interfaces = {cni::Interface{.name = "eth0", .sandbox = kNetns}};
  prev.ips = {cni::IpConfig{.interface = 0, .address = Net("10.0.0.2/24")}};
  Observed ok{.up = true, .v4 = {Net("127.0.0.1/8")}};
  EXPECT_TRUE(CompareLoopback(ok, prev, kNetns).empty());
}

TEST(LoopbackVerbs, AddBringsLoUpAndReportsIt) {
  FakeOps ops;
  cni::Result r = Add(Args(Conf()), ops);
  EXPECT_TRUE(ops.lo.up);
  EXPECT_EQ(ops.faults.calls, (std::vector<std::string>{"Observe", "SetUp", "Observe"}));
  EXPECT_EQ(r, MakeResult(ops.lo, kNetns));
}

TEST(LoopbackVerbs, AddPassesPrevResultThrough) {
  json conf = Conf();
  conf["prevResult"] = {{"cniVersion", "1.1.0"},
                        {"interfaces", {{{"name", "eth0"}, {"sandbox", kNetns}}}},
                        {"ips", {{{"interface", 0}, {"address", "10.0.0.2/24"}}}}};
  FakeOps ops;
  auto args = Args(conf);
  EXPECT_EQ(Add(args, ops), *args.conf.prev_result);
  EXPECT_TRUE(ops.lo.up);
}

TEST(LoopbackVerbs, RollbackAtEveryStep) {
  for (bool after : {false, true}) {
    for (const std::string step : {"Observe", "SetUp"}) {
      FakeOps ops;
      ops.faults.fail_at = step;
      ops.faults.fail_after = after;
      EXPECT_EQ(testing::ThrownError([&] { Add(Args(Conf()), ops); }).code(), cni::kNetlink) << step << after;
      EXPECT_FALSE(ops.lo.up) << step << " after=" << after;
    }
  }
}

TEST(LoopbackVerbs, FailedAddKeepsLoUpThatWasUpBefore) {
  FakeOps ops;
  ops.lo.up = true;
  ops.lo.v4.push_back(Net("10.0.0.1/8"));  // MakeResult refuses: the ADD fails after Observe
  EXPECT_EQ(testing::ThrownError([&] { Add(Args(Conf()), ops); }).code(), cni::kInternal);
  EXPECT_TRUE(ops.lo.up);
  EXPECT_EQ(ops.faults.Count("SetDown"), 0);
}

TEST(LoopbackVerbs, AddWithoutNetnsFails) {
  FakeOps ops;
  ops.netns_exists = false;
  EXPECT_EQ(testing::ThrownError([&] { Add(Args(Conf()), ops); }).code(), cni::kInvalidEnv);
}

TEST(LoopbackVerbs, DelSetsLoDownAndToleratesGoneOrEmptyNetns) {
  FakeOps ops;
  ops.lo.up = true;
  Del(Args(Conf(), "DEL"), ops);
  EXPECT_FALSE(ops.lo.up);
  Del(Args(Conf(), "DEL"), ops);  // again: idempotent
  EXPECT_FALSE(ops.lo.up);

  FakeOps gone;
  gone.netns_exists = false;
  Del(Args(Conf(), "DEL"), gone);
  FakeOps empty;
  empty.lo.up = true;
  Del(Args(Conf(), "DEL", ""), empty);
  EXPECT_TRUE(empty.faults.calls.empty());
  EXPECT_TRUE(empty.lo.up);
}

TEST(LoopbackVerbs, DelFailureIsReported) {
  FakeOps ops;
  ops.faults.fail_at = "SetDown";
  EXPECT_EQ(testing::ThrownError([&] { Del(Args(Conf(), "DEL"), ops); }).code(), cni::kNetlink);
}

TEST(LoopbackVerbs, CheckNoticesLoDown) {
  FakeOps ops;
  ops.lo.up = true;
  Check(Args(Conf(), "CHECK"), ops);
  ops.lo.up = false;
  cni::Error e = testing::ThrownError([&] { Check(Args(Conf(), "CHECK"), ops); });
  EXPECT_EQ(e.code(), cni::kInternal);
  EXPECT_NE(std::string(e.what()).find("down"), std::string::npos);
}

}  // namespace
}  // namespace netiface::loopback
