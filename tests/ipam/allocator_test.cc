// The allocator over a real store in a temporary folder: which address it picks, the last-reserved
// pointer of each range set, requested addresses, and the reference's errors.
#include "netiface/ipam/allocator.h"

#include <gtest/gtest.h>

#include "netiface/cni/error.h"
#include "testutil.h"

namespace netiface::ipam {
namespace {

using cni::IpAddr;
using nlohmann::json;

IpAddr A(const char* s) { return *IpAddr::Parse(s); }

constexpr char kIdA[] = "0a1b2c3d4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f60718293a4b5c6d7e8f9";
constexpr char kIdB[] = "f9e8d7c6b5a4938271605f4e3d2c1b0af9e8d7c6b5a4938271605f4e3d2c1b0a";

class AllocatorTest : public ::testing::Test {
 protected:
  Store Open() { return std::move(*Store::Open({"net1", tmp_.path(), 1000}, true)); }
  std::string File(const std::string& name) const { return tmp_ / ("net1/" + name); }
  // 10.0.0.2-10.0.0.4 (gateway 10.0.0.1, outside the range).
  RangeSet Small() const {
    return ParseRangeSet(
        json::array({{{"subnet", "10.0.0.0/24"}, {"rangeStart", "10.0.0.2"}, {"rangeEnd", "10.0.0.4"}}}),
        "ipam.ranges[0]");
  }
  // Throws the allocator's error for `want` (or the next free address) and returns it.
  cni::Error GetError(Store& s, const RangeSet& set, const char* id, std::optional<IpAddr> want = std::nullopt) {
    try {
      Allocator(set, 0).Get(s, {}, id, "eth0", want);
    } catch (const cni::Error& e) {
      return e;
    }
    ADD_FAILURE() << "no error";
    return cni::Error(cni::kInternal, "none");
  }

  testing::TempDir tmp_;
};

TEST_F(AllocatorTest, NextAddressAfterThePointerWithThePrefixOfItsRange) {
  RangeSet set = Small();
  Store s = Open();
  Allocation a = Allocator(set, 0).Get(s, {}, kIdA, "eth0", std::nullopt);
  EXPECT_EQ(a.ip, A("10.0.0.2"));
  EXPECT_EQ(a.Address().ToString(), "10.0.0.2/24");
  EXPECT_EQ(a.range->gateway, A("10.0.0.1"));
  EXPECT_EQ(testing::ReadFile(File("10.0.0.2")), std::string(kIdA) + "\r\neth0");
  EXPECT_EQ(testing::ReadFile(File("last_reserved_ip.0")), "10.0.0.2");
  EXPECT_EQ(Allocator(set, 0).Get(s, {}, kIdB, "eth0", std::nullopt).ip, A("10.0.0.3"));
  EXPECT_EQ(testing::ReadFile(File("last_reserved_ip.0")), "10.0.0.3");
}

TEST_F(AllocatorTest, WrapsAroundToRangeStartAndSkipsTakenAddresses) {
  RangeSet set = Small();
  Store s = Open();
  s.SetLastReserved(0, A("10.0.0.4"));
  ASSERT_TRUE(s.Reserve(A("10.0.0.2"), kIdB, "eth0"));
  EXPECT_EQ(Allocator(set, 0).Get(s, {}, kIdA, "eth0", std::nullopt).ip, A("10.0.0.3"));
  EXPECT_EQ(testing::ReadFile(File("last_reserved_ip.0")), "10.0.0.3");
}

TEST_F(AllocatorTest, EachRangeSetHasItsOwnPointer) {
  RangeSet v4 = Small();
  RangeSet v6 = ParseRangeSet(json::array({{{"subnet", "fd00::/120"}}}), "ipam.ranges[1]");
  Store s = Open();
  s.SetLastReserved(1, A("fd00::9"));
  EXPECT_EQ(Allocator(v4, 0).Get(s, {}, kIdA, "eth0", std::nullopt).ip, A("10.0.0.2"));
  EXPECT_EQ(Allocator(v6, 1).Get(s, {}, kIdA, "eth0", std::nullopt).ip, A("fd00::a"));
  EXPECT_EQ(testing::ReadFile(File("last_reserved_ip.0")), "10.0.0.2");
  EXPECT_EQ(testing::ReadFile(File("last_reserved_ip.1")), "fd00::a");
}

TEST_F(AllocatorTest, RequestedAddressIsTakenAsItIsAndMovesThePointer) {
  RangeSet set = Small();
  Store s = Open();
  EXPECT_EQ(Allocator(set, 0).Get(s, {}, kIdA, "eth0", A("10.0.0.4")).ip, A("10.0.0.4"));
  EXPECT_EQ(testing::ReadFile(File("last_reserved_ip.0")), "10.0.0.4");
}

TEST_F(AllocatorTest, RequestedAddressHeldOrOutsideTheSetIsRefused) {
  RangeSet set = Small();
  Store s = Open();
  ASSERT_TRUE(s.Reserve(A("10.0.0.3"), kIdB, "net1"));
  cni::Error held = GetError(s, set, kIdA, A("10.0.0.3"));
  EXPECT_EQ(held.code(), cni::kInternal);
  EXPECT_EQ(held.msg(),
            "failed to allocate for range 0: requested IP address 10.0.0.3 is not available in range set "
            "10.0.0.2-10.0.0.4: it is held by container " +
                std::string(kIdB) + " (ifname net1)");
  cni::Error outside = GetError(s, set, kIdA, A("10.0.1.5"));
  EXPECT_EQ(outside.code(), cni::kInternal);
  EXPECT_EQ(outside.msg(), "failed to allocate for range 0: 10.0.1.5 not in range set 10.0.0.2-10.0.0.4");
  EXPECT_FALSE(s.Exists(A("10.0.1.5")));
  EXPECT_FALSE(s.LastReserved(0));
}

TEST_F(AllocatorTest, ExhaustionIsTryAgainLaterWithTheReferenceMessage) {
  RangeSet set = Small();
  Store s = Open();
  for (const char* ip : {"10.0.0.2", "10.0.0.3", "10.0.0.4"}) ASSERT_TRUE(s.Reserve(A(ip), kIdB, ip));
  cni::Error e = GetError(s, set, kIdA);
  EXPECT_EQ(e.code(), cni::kTryAgainLater);
  EXPECT_EQ(e.msg(), "failed to allocate for range 0: no IP addresses available in range set: 10.0.0.2-10.0.0.4");
  EXPECT_FALSE(s.LastReserved(0));
}

TEST_F(AllocatorTest, AnAttachmentGetsOneAddressPerSet) {
  RangeSet set = Small();
  Store s = Open();
  Store::Held held{{A("10.0.0.4")}, {}};
  try {
    Allocator(set, 0).Get(s, held, kIdA, "eth0", std::nullopt);
    FAIL() << "no error";
  } catch (const cni::Error& e) {
    EXPECT_EQ(e.code(), cni::kInternal);
    EXPECT_EQ(e.msg(), "failed to allocate for range 0: 10.0.0.4 has been allocated to " + std::string(kIdA) +
                           " (ifname eth0), duplicate allocation is not allowed");
  }
  EXPECT_FALSE(s.Exists(A("10.0.0.2")));
}

}  // namespace
}  // namespace netiface::ipam
