// The pure half of `netiface gc` and `netiface ls`: which cached attachments are stale, as values.
#include "netiface/cli/attachments.h"

#include <gtest/gtest.h>

#include "fake_plugins.h"
#include "netiface/cni/error.h"

namespace netiface::cli {
namespace {

cni::CacheEntry Entry(const std::string& cid, const std::string& netns, const std::string& network = "n") {
  cni::CacheEntry e;
  e.container_id = cid;
  e.ifname = "eth0";
  e.network_name = network;
  e.netns = netns;
  return e;
}

std::vector<std::string> Deleted(const GcPlan& p) {
  std::vector<std::string> out;
  for (const auto& e : p.Stale()) out.push_back(e.container_id);
  return out;
}

const std::vector<cni::CacheEntry> kCached = {Entry("listed", "/ns/listed"), Entry("alive", "/ns/alive"),
                                              Entry("gone", "/ns/gone"), Entry("old", ""),
                                              Entry("elsewhere", "/ns/x", "other")};
bool Exists(const std::string& netns) { return netns != "/ns/gone"; }

TEST(PlanGcTest, NothingValidIsRefused) {
  try {
    PlanGc(kCached, "n", {}, Exists);
    FAIL() << "no error";
  } catch (const cni::Error& e) {
    EXPECT_EQ(e.code(), cni::kInvalidEnv);
  }
}

TEST(PlanGcTest, WhatEachSourceKeeps) {
  GcOptions listed{{{"listed", "eth0"}}, false, false};
  GcPlan p = PlanGc(kCached, "n", listed, Exists);
  EXPECT_EQ(Deleted(p), (std::vector<std::string>{"alive", "gone"}));  // "old": netns unknown, kept
  EXPECT_EQ(p.valid, (std::vector<cni::Attachment>{{"listed", "eth0"}, {"old", "eth0"}}));
  EXPECT_EQ(p.decisions.size(), 4u);  // the other network's entry is not this gc's

  GcOptions live{{}, true, false};
  p = PlanGc(kCached, "n", live, Exists);
  EXPECT_EQ(Deleted(p), std::vector<std::string>{"gone"});
  EXPECT_EQ(p.valid, (std::vector<cni::Attachment>{{"listed", "eth0"}, {"alive", "eth0"}, {"old", "eth0"}}));

  GcOptions all{{}, false, true};
  EXPECT_EQ(Deleted(PlanGc(kCached, "n", all, Exists)), (std::vector<std::string>{"listed", "alive", "gone", "old"}));
  GcOptions all_but_live{{}, true, true};
  EXPECT_EQ(Deleted(PlanGc(kCached, "n", all_but_live, Exists)), (std::vector<std::string>{"gone", "old"}));
}

TEST(PlanGcTest, DryRunTable) {
  GcPlan p = PlanGc(kCached, "n", {{{"listed", "eth0"}}, false, false}, Exists);
  const std::string text = FormatGcPlan(p, true);
  EXPECT_EQ(text.rfind("ACTION", 0), 0u);
  EXPECT_NE(text.find("del     alive"), std::string::npos) << text;
  EXPECT_NE(text.find("keep    old"), std::string::npos) << text;
  EXPECT_NE(text.find("2 valid attachment(s): listed/eth0, old/eth0"), std::string::npos) << text;
  EXPECT_EQ(FormatGcPlan(p, false).find("then GC"), std::string::npos);
}

TEST(ValidListTest, ParsesLinesAndNamesTheBadOne) {
  EXPECT_EQ(ParseValidList("# runtime list\n a \n\nb/net1\r\n", "eth0"),
            (std::vector<cni::Attachment>{{"a", "eth0"}, {"b", "net1"}}));
  try {
    ParseValidList("a\nb/c/d\n", "eth0");
    FAIL() << "no error";
  } catch (const cni::Error& e) {
    EXPECT_EQ(e.code(), cni::kInvalidEnv);
    EXPECT_NE(e.msg().find("line 2"), std::string::npos) << e.msg();
  }
}

TEST(CachedAddressesTest, EveryResultVersion) {
  for (const char* v : {"0.2.0", "0.4.0", "1.1.0"}) {
    cni::CacheEntry e = Entry("c", "/ns/c");
    e.result = testing::SampleResult(v, "10.1.0.7/24");
    EXPECT_EQ(CachedAddresses(e), std::vector<std::string>{"10.1.0.7/24"}) << v;
  }
  EXPECT_TRUE(CachedAddresses(Entry("c", "")).empty());
  cni::CacheEntry bad = Entry("c", "");
  bad.result = {{"cniVersion", "1.0.0"}, {"ips", "not a list"}};
  EXPECT_TRUE(CachedAddresses(bad).empty());
}

}  // namespace
}  // namespace netiface::cli
