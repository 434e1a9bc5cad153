#include "netiface/ipam/range.h"

#include <sys/socket.h>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "netiface/cni/error.h"

namespace netiface::ipam {
namespace {

using cni::IpAddr;
using nlohmann::json;

IpAddr A(const char* s) { return *IpAddr::Parse(s); }

// The error code and message of parsing `j`, or code 0 when it parses.
std::pair<int, std::string> RangeError(const json& j) {
  try {
    ParseRange(j, "ipam.ranges[0][0]");
    return {0, ""};
  } catch (const cni::Error& e) {
    return {e.code(), e.msg()};
  }
}

std::vector<std::string> Walk(const RangeSet& set, std::optional<IpAddr> last, size_t max = 1000) {
  CandidateIter it(set, last);
  std::vector<std::string> out;
  while (auto c = it.Next()) {
    out.push_back(c->ip.ToString());
    if (out.size() > max) break;
  }
  return out;
}

TEST(Range, DefaultsV4) {
  Range r = ParseRange({{"subnet", "10.1.2.0/24"}}, "ipam");
  EXPECT_EQ(r.subnet.ToString(), "10.1.2.0/24");
  EXPECT_EQ(r.gateway, A("10.1.2.1"));
  EXPECT_EQ(r.range_start, A("10.1.2.1"));
  EXPECT_EQ(r.range_end, A("10.1.2.254"));
  EXPECT_EQ(r.Size(), 254u);
  EXPECT_EQ(r.ToString(), "10.1.2.1-10.1.2.254");
}

TEST(Range, DefaultsV6EndAtAllOnes) {
  Range r = ParseRange({{"subnet", "fd00:1::/120"}}, "ipam");
  EXPECT_EQ(r.gateway, A("fd00:1::1"));
  EXPECT_EQ(r.range_start, A("fd00:1::1"));
  EXPECT_EQ(r.range_end, A("fd00:1::ff"));
}

TEST(Range, ExplicitValues) {
  Range r = ParseRange(
      {{"subnet", "10.0.0.0/16"}, {"rangeStart", "10.0.5.10"}, {"rangeEnd", "10.0.5.20"}, {"gateway", "10.0.0.254"}},
      "ipam");
  EXPECT_EQ(r.range_start, A("10.0.5.10"));
  EXPECT_EQ(r.range_end, A("10.0.5.20"));
  EXPECT_EQ(r.gateway, A("10.0.0.254"));
  EXPECT_TRUE(r.Contains(A("10.0.5.10")));
  EXPECT_TRUE(r.Contains(A("10.0.5.20")));
  EXPECT_FALSE(r.Contains(A("10.0.5.21")));
  EXPECT_FALSE(r.Contains(A("10.0.5.9")));
  EXPECT_FALSE(r.Contains(A("fd00::1")));
  EXPECT_TRUE(r.Contains(A("::ffff:10.0.5.15")));  // v4-mapped is canonicalized
}

TEST(Range, RejectionsAreCode7NamingKeyAndValue) {
  struct Case {
    json conf;
    std::string key, value;
  };
  std::vector<Case> cases = {
      {json::object(), "ipam.ranges[0][0].subnet", "missing"},
      {{{"subnet", 5}}, "ipam.ranges[0][0].subnet", "5"},
      {{{"subnet", "10.0.0.0"}}, "ipam.ranges[0][0].subnet", "10.0.0.0"},
      {{{"subnet", "10.0.0.1/24"}}, "ipam.ranges[0][0].subnet", "10.0.0.1/24"},
      {{{"subnet", "10.0.0.0/31"}}, "ipam.ranges[0][0].subnet", "10.0.0.0/31"},
      {{{"subnet", "10.0.0.0/32"}}, "ipam.ranges[0][0].subnet", "10.0.0.0/32"},
      {{{"subnet", "fd00::/127"}}, "ipam.ranges[0][0].subnet", "fd00::/127"},
      {{{"subnet", "fd00::/128"}}, "ipam.ranges[0][0].subnet", "fd00::/128"},
      {{{"subnet", "10.0.0.0/24"}, {"rangeStart", "10.0.1.5"}}, "rangeStart", "10.0.1.5"},
      {{{"subnet", "10.0.0.0/24"}, {"rangeEnd", "10.0.1.5"}}, "rangeEnd", "10.0.1.5"},
      {{{"subnet", "10.0.0.0/24"}, {"rangeStart", "bogus"}}, "rangeStart", "bogus"},
      {{{"subnet", "10.0.0.0/24"}, {"gateway", "fd00::1"}}, "gateway", "fd00::1"},
      {{{"subnet", "10.0.0.0/24"}, {"rangeStart", "10.0.0.50"}, {"rangeEnd", "10.0.0.40"}}, "rangeEnd", "10.0.0.40"},
  };
  for (const auto& c : cases) {
    auto [code, msg] = RangeError(c.conf);
    EXPECT_EQ(code, cni::kInvalidConfig) << c.conf.dump();
    EXPECT_THAT(msg, ::testing::HasSubstr(c.key)) << c.conf.dump();
    EXPECT_THAT(msg, ::testing::HasSubstr(c.value)) << c.conf.dump();
  }
  EXPECT_EQ(RangeError({{"subnet", "10.0.0.0/30"}}).first, 0);  // the smallest allowed
}

TEST(RangeSet, ParseRejectsMixedFamiliesOverlapsAndEmpty) {
  EXPECT_THROW(ParseRangeSet(json::array(), "ipam.ranges[0]"), cni::Error);
  EXPECT_THROW(ParseRangeSet(json::object(), "ipam.ranges[0]"), cni::Error);
  EXPECT_THROW(ParseRangeSet(json::array({{{"subnet", "10.0.0.0/24"}}, {{"subnet", "fd00::/64"}}}), "s"), cni::Error);
  try {
    ParseRangeSet(json::array({{{"subnet", "10.0.0.0/24"}}, {{"subnet", "10.0.0.0/25"}}}), "ipam.ranges[3]");
    FAIL();
  } catch (const cni::Error& e) {
    EXPECT_EQ(e.code(), cni::kInvalidConfig);
    EXPECT_THAT(e.msg(), ::testing::HasSubstr("ipam.ranges[3]"));
    EXPECT_THAT(e.msg(), ::testing::HasSubstr("overlap"));
  }
  RangeSet ok = ParseRangeSet(json::array({{{"subnet", "10.0.0.0/24"}, {"rangeStart", "10.0.0.100"}},
                                           {{"subnet", "10.0.0.0/24"}, {"rangeEnd", "10.0.0.50"}}}),
                              "s");
  EXPECT_EQ(ok.ranges().size(), 2u);  // one subnet split into two non-overlapping ranges
  EXPECT_EQ(ok.ToString(), "10.0.0.100-10.0.0.254,10.0.0.1-10.0.0.50");
}

TEST(RangeSet, ContainsOverlapsCapacity) {
  RangeSet a = ParseRangeSet(json::array({{{"subnet", "10.0.0.0/29"}}, {{"subnet", "10.0.1.0/29"}}}), "a");
  RangeSet b = ParseRangeSet(json::array({{{"subnet", "10.0.1.0/24"}, {"rangeStart", "10.0.1.6"}}}), "b");
  RangeSet c = ParseRangeSet(json::array({{{"subnet", "10.0.1.0/24"}, {"rangeStart", "10.0.1.7"}}}), "c");
  EXPECT_TRUE(a.Contains(A("10.0.1.3")));
  EXPECT_FALSE(a.Contains(A("10.0.2.3")));
  EXPECT_EQ(a.RangeFor(A("10.0.1.3")), &a.ranges()[1]);
  EXPECT_TRUE(a.Overlaps(b));
  EXPECT_FALSE(a.Overlaps(c));
  EXPECT_EQ(a.Capacity(), 10u);  // 2 x (6 - gateway)
  EXPECT_EQ(a.family(), AF_INET);
}

TEST(CandidateIter, FromStartSkippingGateway) {
  RangeSet s = ParseRangeSet(json::array({{{"subnet", "10.0.0.0/29"}}}), "s");
  EXPECT_EQ(Walk(s, std::nullopt),
            (std::vector<std::string>{"10.0.0.2", "10.0.0.3", "10.0.0.4", "10.0.0.5", "10.0.0.6"}));
}

TEST(CandidateIter, RoundRobinAfterLastReservedAndWrap) {
  RangeSet s = ParseRangeSet(json::array({{{"subnet", "10.0.0.0/29"}}}), "s");
  EXPECT_EQ(Walk(s, A("10.0.0.4")),
            (std::vector<std::string>{"10.0.0.5", "10.0.0.6", "10.0.0.2", "10.0.0.3", "10.0.0.4"}));
  // The last one reserved is tried last; the gateway never.
  EXPECT_EQ(Walk(s, A("10.0.0.6")),
            (std::vector<std::string>{"10.0.0.2", "10.0.0.3", "10.0.0.4", "10.0.0.5", "10.0.0.6"}));
}

TEST(CandidateIter, WrapsAcrossRangesOfTheSet) {
  RangeSet s = ParseRangeSet(json::array({{{"subnet", "10.0.0.0/30"}},
                                          {{"subnet", "10.0.1.0/30"}},
                                          {{"subnet", "10.0.2.0/30"}, {"gateway", "10.0.2.9"}}}),
                             "s");
  EXPECT_EQ(Walk(s, A("10.0.1.2")), (std::vector<std::string>{"10.0.2.1", "10.0.2.2", "10.0.0.2", "10.0.1.2"}));
}

TEST(CandidateIter, LastReservedOutsideTheSetStartsAtTheBeginning) {
  RangeSet s = ParseRangeSet(json::array({{{"subnet", "10.0.0.0/30"}, {"gateway", "10.0.0.9"}}}), "s");
  EXPECT_EQ(Walk(s, A("192.168.0.1")), (std::vector<std::string>{"10.0.0.1", "10.0.0.2"}));
  EXPECT_EQ(Walk(s, A("fd00::1")), (std::vector<std::string>{"10.0.0.1", "10.0.0.2"}));
}

TEST(CandidateIter, OnlyTheGatewayYieldsNothing) {
  RangeSet s = ParseRangeSet(
      json::array({{{"subnet", "10.0.0.0/24"}, {"rangeStart", "10.0.0.1"}, {"rangeEnd", "10.0.0.1"}}}), "s");
  EXPECT_TRUE(Walk(s, std::nullopt).empty());
  EXPECT_TRUE(Walk(s, A("10.0.0.1")).empty());
}

TEST(CandidateIter, V6) {
  RangeSet s = ParseRangeSet(json::array({{{"subnet", "fd00::/126"}}}), "s");
  EXPECT_EQ(Walk(s, std::nullopt), (std::vector<std::string>{"fd00::2", "fd00::3"}));
}

}  // namespace
}  // namespace netiface::ipam
