// The verbs over FakeOps: the result passed through, CHECK noticing each missing piece, DEL idempotent,
// and a failed ADD leaving nothing, with the failure at every step before and after its effect.
#include <gtest/gtest.h>

#include "fake_ops.h"
#include "netiface/bandwidth/bandwidth.h"
#include "netiface/cni/error.h"

namespace netiface::bandwidth {
namespace {

constexpr const char* kId = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";

std::string Prev() {
  return R"("prevResult":{"cniVersion":"1.0.0","interfaces":[{"name":"veth1234abcd","mac":"ee:00:00:00:00:01"},)"
         R"({"name":"eth0","mac":"0a:58:0a:00:00:02","sandbox":"/run/netns/c"}],)"
         R"("ips":[{"address":"10.0.0.2/24","interface":1}]})";
}

cni::CmdArgs Args(const std::string& command, const std::string& keys, bool prev = true) {
  cni::CmdArgs a;
  a.command = command;
  a.container_id = kId;
  a.netns = "/run/netns/c";
  a.ifname = "eth0";
  std::string conf = R"({"cniVersion":"1.0.0","name":"bwnet","type":"bandwidth")";
  if (!keys.empty()) conf += "," + keys;
  if (prev) conf += "," + Prev();
  a.conf = cni::ParseNetConf(conf + "}");
  return a;
}

const std::string kBoth = R"("ingressRate":8000000,"ingressBurst":80000,"egressRate":16000000,"egressBurst":160000)";
const std::string kIfb = IfbName("bwnet", kId);

int CodeOf(const std::function<void()>& f) {
  try {
    f();
  } catch (const cni::Error& e) {
    return e.code();
  }
  return 0;
}

TEST(BandwidthAdd, ShapesBothDirectionsAndAppendsTheIfb) {
  test::FakeOps ops;
  cni::CmdArgs a = Args("ADD", kBoth);
  cni::Result r = Add(a, ops);
  ASSERT_EQ(r.interfaces.size(), 3u);
  EXPECT_EQ(r.interfaces[2], (cni::Interface{kIfb, "06:00:00:00:00:01"}));
  EXPECT_EQ(r.ips, a.conf.prev_result->ips);
  EXPECT_EQ(ops.links[4].root_tbf, (nl::TbfParams{1000000, 156250, 35000}));
  EXPECT_TRUE(ops.links[4].ingress);
  const auto* ifb = ops.Find(kIfb);
  ASSERT_NE(ifb, nullptr);
  EXPECT_EQ(ifb->info.mtu, 1450);  // the host end's
  EXPECT_EQ(ifb->root_tbf, (nl::TbfParams{2000000, 156250, 70000}));
  EXPECT_EQ(ops.links[4].redirects, std::vector<int>{ifb->info.index});
  EXPECT_NO_THROW(Check(Args("CHECK", kBoth), ops));
}

TEST(BandwidthAdd, IngressOnlyMakesNoIfb) {
  test::FakeOps ops;
  cni::Result r = Add(Args("ADD", R"("ingressRate":8000,"ingressBurst":800)"), ops);
  EXPECT_EQ(r.interfaces.size(), 2u);
  EXPECT_EQ(ops.links.size(), 1u);
  EXPECT_FALSE(ops.links[4].ingress);
  EXPECT_TRUE(ops.links[4].root_tbf);
}

TEST(BandwidthAdd, NothingToShapePassesPrevResultThrough) {
  test::FakeOps ops;
  cni::CmdArgs a = Args("ADD", "");
  EXPECT_EQ(Add(a, ops), *a.conf.prev_result);
  EXPECT_TRUE(ops.faults.calls.empty());
}

TEST(BandwidthAdd, RefusesWithoutPrevResultOrPeer) {
  test::FakeOps ops;
  EXPECT_EQ(CodeOf([&] { Add(Args("ADD", kBoth, false), ops); }), cni::kInvalidConfig);
  ops.peer_present = false;
  EXPECT_EQ(CodeOf([&] { Add(Args("ADD", kBoth), ops); }), cni::kInvalidEnv);
  ops.peer_present = true;
  ops.links[4].info.name = "vethother";  // the peer is not the prevResult's host interface
  EXPECT_EQ(CodeOf([&] { Add(Args("ADD", kBoth), ops); }), cni::kInvalidConfig);
  EXPECT_EQ(ops.links.size(), 1u);
  EXPECT_FALSE(ops.links[4].root_tbf);
}

TEST(BandwidthAdd, FailureAtEveryStepLeavesNothing) {
  test::FakeOps probe;
  Add(Args("ADD", kBoth), probe);
  const std::vector<std::string> steps = probe.faults.calls;
  ASSERT_GE(steps.size(), 7u);
  for (bool after : {false, true}) {
    for (const std::string& step : steps) {
      SCOPED_TRACE(step + (after ? " (after)" : " (before)"));
      test::FakeOps ops;
      ops.faults.fail_at = step;
      ops.faults.fail_after = after;
      EXPECT_THROW(Add(Args("ADD", kBoth), ops), cni::Error);
      EXPECT_EQ(ops.links.size(), 1u);
      EXPECT_FALSE(ops.links[4].root_tbf);
      EXPECT_FALSE(ops.links[4].ingress);
      EXPECT_TRUE(ops.links[4].redirects.empty());
    }
  }
}

TEST(BandwidthAdd, AnExistingRootQdiscIsNotTakenAway) {
  test::FakeOps ops;
  ops.links[4].root_tbf = nl::TbfParams{1, 2, 3};
  EXPECT_THROW(Add(Args("ADD", kBoth), ops), cni::Error);
  EXPECT_EQ(ops.links[4].root_tbf, (nl::TbfParams{1, 2, 3}));
}

TEST(BandwidthCheck, NoticesEachMissingPiece) {
  auto added = [] {
    test::FakeOps ops;
    Add(Args("ADD", kBoth), ops);
    return ops;
  };
  {
    test::FakeOps ops = added();
    ops.links[4].root_tbf.reset();
    EXPECT_THROW(Check(Args("CHECK", kBoth), ops), cni::Error);
  }
  {
    test::FakeOps ops = added();
    ops.links[4].redirects.clear();
    EXPECT_THROW(Check(Args("CHECK", kBoth), ops), cni::Error);
  }
  {
    test::FakeOps ops = added();
    ops.DeleteLink(kIfb);
    EXPECT_THROW(Check(Args("CHECK", kBoth), ops), cni::Error);
  }
  {
    test::FakeOps ops = added();
    ops.links[4].ingress = false;
    EXPECT_THROW(Check(Args("CHECK", kBoth), ops), cni::Error);
  }
  {
    test::FakeOps ops = added();  // another rate than configured
    EXPECT_THROW(Check(Args("CHECK", R"("ingressRate":8000000,"ingressBurst":80000,"egressRate":8000000,)"
                                     R"("egressBurst":160000)"),
                       ops),
                 cni::Error);
  }
}

TEST(BandwidthDel, RemovesEverythingAndIsIdempotent) {
  test::FakeOps ops;
  Add(Args("ADD", kBoth), ops);
  Del(Args("DEL", kBoth), ops);
  EXPECT_EQ(ops.links.size(), 1u);
  EXPECT_FALSE(ops.links[4].root_tbf);
  EXPECT_FALSE(ops.links[4].ingress);
  EXPECT_NO_THROW(Del(Args("DEL", kBoth), ops));
  EXPECT_NO_THROW(Del(Args("DEL", kBoth, false), ops));
}

TEST(BandwidthDel, ToleratesAGonePeerOrNetns) {
  test::FakeOps ops;
  Add(Args("ADD", kBoth), ops);
  ops.peer_present = false;
  cni::CmdArgs a = Args("DEL", kBoth);
  a.netns.clear();
  EXPECT_NO_THROW(Del(a, ops));
  EXPECT_EQ(ops.Find(kIfb), nullptr);
}

TEST(BandwidthCompare, PureOnObserved) {
  Config c = ParseConfig(cni::ParseNetConf(R"({"cniVersion":"1.0.0","name":"n","type":"bandwidth",)" + kBoth + "}"));
  EXPECT_EQ(Compare(c, 15.625, "bwpx", Observed{}).size(), 4u);  // tbf, ifb, ingress qdisc, redirect
}

}  // namespace
}  // namespace netiface::bandwidth
