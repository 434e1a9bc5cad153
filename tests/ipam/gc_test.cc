#include "netiface/ipam/gc.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace netiface::ipam {
namespace {

using cni::IpAddr;

std::vector<std::string> Released(const std::vector<IndexEntry>& r, const std::vector<cni::Attachment>& valid) {
  std::vector<std::string> out;
  for (const auto& e : PlanGc(r, valid)) out.push_back(e.ip.ToString());
  return out;
}

IndexEntry E(const char* ip, const char* owner) { return {*IpAddr::Parse(ip), owner}; }

TEST(PlanGc, KeepsValidReleasesTheRest) {
  std::vector<IndexEntry> r = {E("10.0.0.2", "a\r\neth0"), E("10.0.0.3", "a\r\neth1"), E("10.0.0.4", "b\r\neth0"),
                               E("fd00::2", "c\r\neth0")};
  EXPECT_THAT(Released(r, {{"a", "eth0"}, {"c", "eth0"}}), ::testing::ElementsAre("10.0.0.3", "10.0.0.4"));
}

TEST(PlanGc, EmptyValidListReleasesEverything) {
  std::vector<IndexEntry> r = {E("10.0.0.2", "a\r\neth0"), E("10.0.0.3", "b")};
  EXPECT_EQ(Released(r, {}).size(), 2u);
}

TEST(PlanGc, LegacyFilesStayWhileTheirContainerIsValid) {
  std::vector<IndexEntry> r = {E("10.0.0.2", "a"), E("10.0.0.3", "b"), E("10.0.0.4", "a\neth9")};
  EXPECT_THAT(Released(r, {{"a", "eth5"}}), ::testing::ElementsAre("10.0.0.3"));
}

TEST(PlanGc, EmptyFilesAreReleased) {
  EXPECT_THAT(Released({E("10.0.0.2", "")}, {{"a", "eth0"}}), ::testing::ElementsAre("10.0.0.2"));
}

}  // namespace
}  // namespace netiface::ipam
