// Config and plan as values: the reference's validation, its tbf formulas, its ifb name.
#include "netiface/bandwidth/plan.h"

#include <gtest/gtest.h>

#include "netiface/cni/error.h"

namespace netiface::bandwidth {
namespace {

cni::NetConf Conf(const std::string& extra) {
  return cni::ParseNetConf(R"({"cniVersion":"1.0.0","name":"bwnet","type":"bandwidth")" + extra + "}");
}

int CodeOf(const std::string& extra) {
  try {
    ParseConfig(Conf(extra));
  } catch (const cni::Error& e) {
    return e.code();
  }
  return 0;
}

TEST(BandwidthConfig, TopLevelKeys) {
  Config c = ParseConfig(Conf(R"(,"ingressRate":8000,"ingressBurst":800,"egressRate":16000,"egressBurst":1600)"));
  EXPECT_EQ(c.network, "bwnet");
  EXPECT_EQ(c.ingress, (Limit{8000, 800}));
  EXPECT_EQ(c.egress, (Limit{16000, 1600}));
}

TEST(BandwidthConfig, RuntimeConfigWhenTheTopLevelHasNone) {
  Config c = ParseConfig(Conf(R"(,"runtimeConfig":{"bandwidth":{"ingressRate":8000,"ingressBurst":800}})"));
  EXPECT_EQ(c.ingress, (Limit{8000, 800}));
  EXPECT_FALSE(c.egress.active());
}

TEST(BandwidthConfig, TopLevelShadowsRuntimeConfigAsTheReference) {
  Config c = ParseConfig(Conf(R"(,"egressRate":16000,"egressBurst":1600,)"
                              R"("runtimeConfig":{"bandwidth":{"ingressRate":8000,"ingressBurst":800}})"));
  EXPECT_FALSE(c.ingress.active());
  EXPECT_EQ(c.egress, (Limit{16000, 1600}));
}

TEST(BandwidthConfig, NothingToShape) {
  Config c = ParseConfig(Conf(""));
  EXPECT_FALSE(c.ingress.active());
  EXPECT_FALSE(c.egress.active());
}

TEST(BandwidthConfig, RefusesWhatTheReferenceRefusesAndMore) {
  EXPECT_EQ(CodeOf(R"(,"ingressRate":8000)"), cni::kInvalidConfig);                             // rate without burst
  EXPECT_EQ(CodeOf(R"(,"egressBurst":8000)"), cni::kInvalidConfig);                             // burst without rate
  EXPECT_EQ(CodeOf(R"(,"ingressRate":8000,"ingressBurst":34359738360)"), cni::kInvalidConfig);  // burst/8 = 2^32-1
  EXPECT_EQ(CodeOf(R"(,"ingressRate":4294967296,"ingressBurst":800)"), cni::kInvalidConfig);    // rate 2^32
  EXPECT_EQ(CodeOf(R"(,"ingressRate":-1,"ingressBurst":800)"), cni::kInvalidConfig);
  EXPECT_EQ(CodeOf(R"(,"ingressRate":1.5,"ingressBurst":800)"), cni::kInvalidConfig);
  EXPECT_EQ(CodeOf(R"(,"ingressRate":"8000","ingressBurst":800)"), cni::kInvalidConfig);
  EXPECT_EQ(CodeOf(R"(,"ingressRate":7,"ingressBurst":800)"), cni::kInvalidConfig);
  EXPECT_EQ(CodeOf(R"(,"runtimeConfig":{"bandwidth":{"egressRate":8000}})"), cni::kInvalidConfig);
  EXPECT_EQ(CodeOf(R"(,"runtimeConfig":{"bandwidth":7})"), cni::kInvalidConfig);
  EXPECT_EQ(CodeOf(R"(,"ingressRate":8000,"ingressBurst":800,"unshapedSubnets":["10.0.0.0/8"])"), cni::kInvalidConfig);
  EXPECT_EQ(CodeOf(R"(,"runtimeConfig":{"bandwidth":{"shapedSubnets":["10.0.0.0/8"]}})"), cni::kInvalidConfig);
  EXPECT_EQ(CodeOf(R"(,"ingressRate":8000,"ingressBurst":34359738352,"unshapedSubnets":[])"), 0);  // burst/8 < 2^32-1
  EXPECT_EQ(CodeOf(R"(,"ingressRate":4294967295,"ingressBurst":800)"), 0);
}

TEST(BandwidthPlan, PschedClock) {
  EXPECT_DOUBLE_EQ(TicksPerUsec("000003e8 00000040 000f4240 3b9aca00\n"), 15.625);
  EXPECT_DOUBLE_EQ(TicksPerUsec("000003e8 00000400 000f4240 3b9aca00\n"), 1000.0 / 1024);
  EXPECT_THROW(TicksPerUsec("garbage"), cni::Error);
}

// Expected values: the reference's formulas (buffer = ticks(uint32(burst_bytes * 1e6 / rate_bytes)),
// limit = uint32(rate_bytes * 25000 / 1e6) + burst_bytes) worked out by hand for 15.625 ticks/us, and
// for the first two as `tc qdisc show` reports the reference plugin's qdiscs (rate 1000000, burst 10000;
// rate 1543209, burst 123453).
TEST(BandwidthPlan, TbfAsTheReferenceComputesIt) {
  EXPECT_EQ(PlanTbf({8000000, 80000}, 15.625), (nl::TbfParams{1000000, 156250, 35000}));
  EXPECT_EQ(PlanTbf({12345678, 987654}, 15.625), (nl::TbfParams{1543209, 1249984, 162036}));
  EXPECT_EQ(PlanTbf({1000, 8}, 15.625), (nl::TbfParams{125, 125000, 4}));
  EXPECT_EQ(PlanTbf({1000000000, 4000000000}, 15.625), (nl::TbfParams{125000000, 62500000, 503125000}));
}

TEST(BandwidthPlan, RefusesABucketBeyond32Bits) {
  // 4 GB at 1 byte/s: 2^32 s of bucket.
  EXPECT_THROW(PlanTbf({8, 34359738352}, 15.625), cni::Error);
}

TEST(BandwidthPlan, IfbNameAsTheReference) {
  // The reference plugin named this network's ifb so for this container (run side by side).
  EXPECT_EQ(IfbName("bwnet", "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"), "bwp44cd9095abd1");
  EXPECT_EQ(IfbName("bwnet", "x").size(), 15u);
  EXPECT_NE(IfbName("bwnet", "a"), IfbName("bwnet", "b"));
}

}  // namespace
}  // namespace netiface::bandwidth
