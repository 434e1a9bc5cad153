#include "netiface/cni/version.h"

#include <gtest/gtest.h>

#include "testutil.h"

namespace netiface::cni {
namespace {

TEST(SpecVersionTest, ParsesThreeAndTwoComponents) {
  auto v = SpecVersion::Parse("1.1.0");
  ASSERT_TRUE(v);
  EXPECT_EQ(v->major, 1);
  EXPECT_EQ(v->minor, 1);
  EXPECT_EQ(v->patch, 0);
  auto w = SpecVersion::Parse("0.4");
  ASSERT_TRUE(w);
  EXPECT_EQ(w->ToString(), "0.4.0");
  EXPECT_EQ(SpecVersion::Parse("10.20.30")->ToString(), "10.20.30");
}

TEST(SpecVersionTest, RejectsGarbage) {
  for (const char* bad : {"", "1", "1.", ".1", "1..0", "1.0.0.0", "a.b.c", "1.0.x", "-1.0.0", "+1.0.0", " 1.0.0",
                          "1.0.0 ", "1.0.0-rc1", "v1.0.0", "99999999999.0.0"}) {
    EXPECT_FALSE(SpecVersion::Parse(bad)) << bad;
  }
}

TEST(SpecVersionTest, OrdersNumericallyNotLexically) {
  EXPECT_LT(*SpecVersion::Parse("0.4.0"), *SpecVersion::Parse("0.10.0"));
  EXPECT_LT(*SpecVersion::Parse("0.3.1"), *SpecVersion::Parse("0.4.0"));
  EXPECT_EQ(*SpecVersion::Parse("1.0"), *SpecVersion::Parse("1.0.0"));
}

TEST(VersionTest, SupportedIsExactlyTheSpecList) {
  for (const auto& v : testing::AllVersions()) EXPECT_TRUE(IsSupportedVersion(v)) << v;
  for (const char* v : {"", "0.3.2", "1.2.0", "2.0.0", "1.0", "0.1", "1.1.0 "}) {
    EXPECT_FALSE(IsSupportedVersion(v)) << v;
  }
  EXPECT_EQ(kSupportedVersions.back(), kCurrentVersion);
}

TEST(VersionTest, CompareVersions) {
  EXPECT_EQ(CompareVersions("1.0.0", "1.0.0"), 0);
  EXPECT_EQ(CompareVersions("1.0", "1.0.0"), 0);
  EXPECT_LT(CompareVersions("0.3.1", "0.4.0"), 0);
  EXPECT_GT(CompareVersions("1.1.0", "1.0.0"), 0);
  EXPECT_GT(CompareVersions("0.10.0", "0.9.0"), 0);
  EXPECT_LT(CompareVersions("junk", "0.1.0"), 0);
  EXPECT_GT(CompareVersions("0.1.0", "junk"), 0);
  EXPECT_EQ(CompareVersions("junk", "other"), 0);
}

TEST(VersionTest, GatesOfTheSkel) {
  for (const auto& v : testing::AllVersions()) {
    bool check_ok = v == "0.4.0" || v == "1.0.0" || v == "1.1.0";
    EXPECT_EQ(VersionAtLeast(v, "0.4.0"), check_ok) << v;
    EXPECT_EQ(VersionAtLeast(v, "1.1.0"), v == "1.1.0") << v;
  }
}

}  // namespace
}  // namespace netiface::cni
