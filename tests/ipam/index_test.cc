#include "netiface/ipam/index.h"

#include <sys/stat.h>

#include <cstdio>

#include <gtest/gtest.h>

#include "testutil.h"

namespace netiface::ipam {
namespace {

using cni::IpAddr;

IpAddr A(const char* s) { return *IpAddr::Parse(s); }

TEST(IndexFormat, StampRoundTripAndCorruption) {
  DirStamp s{2049, 1234567, 1795942636, 360064832, "0e83ec0d-47e5-4036-9c53-d2e2d0cf8ded"};
  std::string text = EncodeStamp(s);
  EXPECT_EQ(DecodeStamp(text), s);
  EXPECT_FALSE(DecodeStamp(text.substr(0, text.size() - 1)));  // truncated
  EXPECT_FALSE(DecodeStamp(""));
  std::string flipped = text;
  flipped[20] = flipped[20] == '1' ? '2' : '1';
  EXPECT_FALSE(DecodeStamp(flipped));
}

TEST(IndexFormat, ShardRoundTripEscapesAnyContent) {
  std::vector<IndexEntry> e = {{A("10.0.0.2"), "ctr1\r\neth0"},
                               {A("fd00::3"), "legacy-only"},
                               {A("10.0.0.9"), ""},
                               {A("10.0.0.10"), "we ird%\n\x01\xff"}};
  std::string text = EncodeShard(e);
  EXPECT_EQ(DecodeShard(text), e);
  EXPECT_FALSE(DecodeShard(text.substr(0, text.size() - 3)));
  EXPECT_FALSE(DecodeShard("garbage"));
  EXPECT_EQ(DecodeShard(EncodeShard({})), std::vector<IndexEntry>{});
}

TEST(OwnerIndex, SaveLookupAndStampMatch) {
  testing::TempDir tmp;
  DirStamp s{1, 2, 3, 4, "boot"};
  {
    OwnerIndex idx(tmp / "idx");
    idx.Reset({{A("10.0.0.2"), "a\r\neth0"}, {A("10.0.0.3"), "b\r\neth0"}, {A("10.0.0.4"), "a"}});
    idx.Save(s);
  }
  OwnerIndex idx(tmp / "idx");
  EXPECT_TRUE(idx.Matches(s));
  EXPECT_FALSE(idx.Matches({1, 2, 3, 5, "boot"}));
  EXPECT_FALSE(idx.Matches({1, 2, 3, 4, "other-boot"}));
  EXPECT_FALSE(idx.Matches({1, 2, 3, 4, ""}));
  auto a = idx.Lookup("a");
  ASSERT_TRUE(a);
  EXPECT_EQ(a->size(), 2u);
  EXPECT_EQ(idx.Lookup("c")->size(), 0u);

  idx.Add({A("10.0.0.5"), "c\r\neth1"});
  idx.Remove(A("10.0.0.2"), "a\r\neth0");
  EXPECT_TRUE(idx.dirty());
  DirStamp s2{1, 2, 3, 6, "boot"};
  idx.Save(s2);
  OwnerIndex again(tmp / "idx");
  EXPECT_TRUE(again.Matches(s2));
  EXPECT_EQ(again.Lookup("a")->size(), 1u);
  EXPECT_EQ(again.Lookup("c")->size(), 1u);
}

TEST(OwnerIndex, CorruptShardIsReportedNotTrusted) {
  testing::TempDir tmp;
  OwnerIndex idx(tmp / "idx");
  idx.Reset({{A("10.0.0.2"), "a\r\neth0"}});
  idx.Save({1, 2, 3, 4, "boot"});
  char name[16];
  snprintf(name, sizeof name, "shard-%02x", ShardOf("a"));
  std::string path = tmp / ("idx/" + std::string(name));
  std::string text = testing::ReadFile(path);
  testing::WriteFile(path, text.substr(0, text.size() - 2));
  OwnerIndex reread(tmp / "idx");
  EXPECT_FALSE(reread.Lookup("a"));
}

ino_t InodeOf(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 ? st.st_ino : 0;
}

// Every save rewrites the same files: no unlink and create (a new inode per call is what costs on ext4).
TEST(OwnerIndex, SavesInPlaceAndKeepsEmptiedShards) {
  testing::TempDir tmp;
  OwnerIndex idx(tmp / "idx");
  idx.Reset({});
  ASSERT_TRUE(idx.Lookup("a"));
  idx.Add({A("10.0.0.2"), "a\r\neth0"});
  DirStamp s1{1, 2, 3, 4, "boot"};
  idx.Save(s1);
  char name[16];
  snprintf(name, sizeof name, "shard-%02x", ShardOf("a"));
  const std::string shard = tmp / ("idx/" + std::string(name)), stamp = tmp / "idx/stamp";
  const ino_t shard_ino = InodeOf(shard), stamp_ino = InodeOf(stamp);
  ASSERT_NE(shard_ino, 0u);
  ASSERT_NE(stamp_ino, 0u);
  EXPECT_EQ(testing::ListDir(tmp / "idx").size(), 257u);  // a rebuild writes every shard: none created later

  OwnerIndex again(tmp / "idx");
  ASSERT_TRUE(again.Matches(s1));
  ASSERT_TRUE(again.Lookup("a"));
  again.Remove(A("10.0.0.2"), "a\r\neth0");
  DirStamp s2{1, 2, 3, 5, "boot"};
  again.Save(s2);
  EXPECT_EQ(InodeOf(shard), shard_ino);  // emptied, kept
  EXPECT_EQ(InodeOf(stamp), stamp_ino);

  OwnerIndex third(tmp / "idx");
  EXPECT_TRUE(third.Matches(s2));
  EXPECT_FALSE(third.Matches(s1));
  ASSERT_TRUE(third.Lookup("a"));
  EXPECT_TRUE(third.Lookup("a")->empty());
  third.Invalidate();  // spoilt in place, not removed
  EXPECT_EQ(InodeOf(stamp), stamp_ino);
  EXPECT_FALSE(third.Matches(s2));
}

TEST(OwnerIndex, InvalidateRemovesTrust) {
  testing::TempDir tmp;
  OwnerIndex idx(tmp / "idx");
  idx.Reset({});
  DirStamp s{1, 2, 3, 4, "boot"};
  idx.Save(s);
  EXPECT_TRUE(idx.Matches(s));
  idx.Invalidate();
  EXPECT_FALSE(idx.Matches(s));
}

}  // namespace
}  // namespace netiface::ipam
