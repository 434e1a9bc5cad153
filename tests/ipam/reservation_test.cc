#include "netiface/ipam/reservation.h"

#include <gtest/gtest.h>

namespace netiface::ipam {
namespace {

TEST(Reservation, EncodeIsTheReferenceBytes) {
  EXPECT_EQ(EncodeOwner("ctr1", "eth0"), "ctr1\r\neth0");
  EXPECT_EQ(EncodeOwner("  ctr1 \n", "net1"), "ctr1\r\nnet1");
}

TEST(Reservation, TrimSpace) {
  EXPECT_EQ(TrimSpace(" \t\r\nab c\r\n\v\f"), "ab c");
  EXPECT_EQ(TrimSpace("   "), "");
}

TEST(Reservation, MatchOwner) {
  EXPECT_EQ(MatchOwner("ctr1\r\neth0", "ctr1", "eth0"), OwnerMatch::kExact);
  EXPECT_EQ(MatchOwner("ctr1\r\neth0", " ctr1 ", "eth0"), OwnerMatch::kExact);
  EXPECT_EQ(MatchOwner("ctr1\r\neth1", "ctr1", "eth0"), OwnerMatch::kNone);
  EXPECT_EQ(MatchOwner("ctr1", "ctr1", "eth0"), OwnerMatch::kLegacy);
  EXPECT_EQ(MatchOwner("ctr10\r\neth0", "ctr1", "eth0"), OwnerMatch::kNone);
  EXPECT_EQ(MatchOwner("ctr1\neth0", "ctr1", "eth0"), OwnerMatch::kNone);  // LF only: not the reference's format
  EXPECT_EQ(MatchOwner("", "", "eth0"), OwnerMatch::kNone);
}

TEST(Reservation, OwnerKey) {
  EXPECT_EQ(OwnerKey("ctr1\r\neth0"), "ctr1");
  EXPECT_EQ(OwnerKey("ctr1"), "ctr1");
  EXPECT_EQ(OwnerKey(""), "");
}

TEST(Reservation, OnlyCanonicalAddressNamesAreReservations) {
  EXPECT_TRUE(ReservationAddress("10.0.0.2"));
  EXPECT_TRUE(ReservationAddress("fd00::2"));
  EXPECT_FALSE(ReservationAddress("lock"));
  EXPECT_FALSE(ReservationAddress("last_reserved_ip.0"));
  EXPECT_FALSE(ReservationAddress(".netiface-tmp"));
  EXPECT_FALSE(ReservationAddress("fd00:0::2"));  // not canonical
  EXPECT_FALSE(ReservationAddress("010.0.0.2"));
  EXPECT_FALSE(ReservationAddress(""));
  EXPECT_EQ(LastReservedFileName(3), "last_reserved_ip.3");
}

}  // namespace
}  // namespace netiface::ipam
