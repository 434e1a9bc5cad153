#include "netiface/ipam/index.h"

#include <sys/stat.h>

#include <cstdio>
#include <filesystem>

#include <gtest/gtest.h>

#include "netiface/ipam/reservation.h"
#include "testutil.h"

namespace netiface::ipam {
namespace {

using cni::IpAddr;

IpAddr A(const char* s) { return *IpAddr::Parse(s); }

TEST(IndexFormat, StampRoundTripAndCorruption) {
  IndexStamp s{{2049, 1234567, 1795942636, 360064832, "0e83ec0d-47e5-4036-9c53-d2e2d0cf8ded"}, 16, 1000};
  std::string text = EncodeStamp(s);
  EXPECT_EQ(DecodeStamp(text), s);
  EXPECT_FALSE(DecodeStamp(text.substr(0, text.size() - 1)));  // truncated
  EXPECT_FALSE(DecodeStamp(""));
  std::string flipped = text;
  flipped[20] = flipped[20] == '1' ? '2' : '1';
  EXPECT_FALSE(DecodeStamp(flipped));
  // A shard count that no rebuild writes.
  for (uint32_t bad : {0u, 3u, 2 * kMaxShards}) EXPECT_FALSE(DecodeStamp(EncodeStamp({s.dir, bad, 0}))) << bad;
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
  snprintf(name, sizeof name, "shard-%02x", ShardOf("a", 1));
  std::string path = tmp / ("idx/" + std::string(name));
  std::string text = testing::ReadFile(path);
  testing::WriteFile(path, text.substr(0, text.size() - 2));
  OwnerIndex reread(tmp / "idx");
  EXPECT_FALSE(reread.Lookup("a"));  // no layout known yet
  ASSERT_TRUE(reread.Matches({1, 2, 3, 4, "boot"}));
  EXPECT_FALSE(reread.Lookup("a"));
  // A shard that is missing altogether is not taken for an empty one.
  ASSERT_EQ(::unlink(path.c_str()), 0);
  OwnerIndex again(tmp / "idx");
  ASSERT_TRUE(again.Matches({1, 2, 3, 4, "boot"}));
  EXPECT_FALSE(again.Lookup("a"));
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
  snprintf(name, sizeof name, "shard-%02x", ShardOf("a", 1));
  const std::string shard = tmp / ("idx/" + std::string(name)), stamp = tmp / "idx/stamp";
  const ino_t shard_ino = InodeOf(shard), stamp_ino = InodeOf(stamp);
  ASSERT_NE(shard_ino, 0u);
  ASSERT_NE(stamp_ino, 0u);
  // A rebuild writes every shard of its layout (one, for so few entries): none is created later.
  EXPECT_EQ(testing::ListDir(tmp / "idx"), (std::vector<std::string>{"shard-00", "stamp"}));

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

std::vector<IndexEntry> Entries(int n, const std::string& prefix = "ctr") {
  std::vector<IndexEntry> out;
  for (int i = 0; i < n; ++i) {
    out.push_back({IpAddr::V4(0x0a000000u + static_cast<uint32_t>(i)), prefix + std::to_string(i) + "\r\neth0"});
  }
  return out;
}

uint64_t BytesIn(const std::string& dir) {
  uint64_t total = 0;
  for (const auto& f : testing::ListDir(dir)) {
    struct stat st {};
    if (::stat((dir + "/" + f).c_str(), &st) == 0) total += static_cast<uint64_t>(st.st_size);
  }
  return total;
}

// Issue 17, case 3: the index costs files and bytes in proportion to what it holds (it used to be 257
// files for any network, about 1 MiB of blocks), and every entry is still found.
TEST(OwnerIndex, FilesAndBytesGrowWithTheEntries) {
  for (int n : {0, 1, 64, 65, 1000, 10000}) {
    SCOPED_TRACE(n);
    testing::TempDir tmp;
    const auto all = Entries(n);
    {
      OwnerIndex idx(tmp / "idx");
      idx.Reset(all);
      idx.Save({1, 2, 3, 4, "boot"});
    }
    const auto files = testing::ListDir(tmp / "idx");
    EXPECT_EQ(files.size(), ShardsFor(static_cast<uint64_t>(n)) + 1u);
    EXPECT_LE(files.size(), static_cast<size_t>(n) / 32 + 2);  // never more than a file per 32 entries
    EXPECT_LE(BytesIn(tmp / "idx"), 200u + 64u * files.size() + 48u * static_cast<uint64_t>(n));
    OwnerIndex reread(tmp / "idx");
    ASSERT_TRUE(reread.Matches({1, 2, 3, 4, "boot"}));
    for (int i : {0, n / 2, n - 1}) {
      if (i < 0 || i >= n) continue;
      auto found = reread.Lookup("ctr" + std::to_string(i));
      ASSERT_TRUE(found);
      EXPECT_EQ(*found, std::vector<IndexEntry>{all[static_cast<size_t>(i)]});
    }
  }
}

TEST(OwnerIndex, ShardCountFollowsTheEntries) {
  EXPECT_EQ(ShardsFor(0), 1u);
  EXPECT_EQ(ShardsFor(64), 1u);
  EXPECT_EQ(ShardsFor(65), 2u);
  EXPECT_EQ(ShardsFor(10000), 256u);
  EXPECT_EQ(ShardsFor(100000000), kMaxShards);
  testing::TempDir tmp;
  OwnerIndex idx(tmp / "idx");
  idx.Reset(Entries(10));
  EXPECT_FALSE(idx.NeedsRebuild());
  for (const auto& e : Entries(300, "more")) {
    ASSERT_TRUE(idx.Lookup(OwnerKey(e.owner)));
    idx.Add(e);
  }
  EXPECT_TRUE(idx.NeedsRebuild());  // 310 entries in one shard
  idx.Reset(Entries(10000));
  idx.Save({1, 2, 3, 4, "boot"});
  EXPECT_EQ(testing::ListDir(tmp / "idx").size(), 257u);
  for (const auto& e : Entries(9950)) idx.Remove(e.ip, e.owner);
  EXPECT_TRUE(idx.NeedsRebuild());  // 50 entries over 256 shards
  // A rebuild for fewer entries leaves no shard file of the larger layout behind.
  idx.Reset(Entries(50));
  idx.Save({1, 2, 3, 5, "boot"});
  EXPECT_EQ(testing::ListDir(tmp / "idx"), (std::vector<std::string>{"shard-00", "stamp"}));
  OwnerIndex reread(tmp / "idx");
  ASSERT_TRUE(reread.Matches({1, 2, 3, 5, "boot"}));
  EXPECT_EQ(reread.Lookup("ctr49")->size(), 1u);
}

TEST(OwnerIndex, DropGivesEverythingBack) {
  testing::TempDir tmp;
  OwnerIndex idx(tmp / "idx");
  EXPECT_FALSE(idx.Drop());  // nothing there
  idx.Reset(Entries(200));
  idx.Save({1, 2, 3, 4, "boot"});
  EXPECT_TRUE(idx.Drop());
  EXPECT_FALSE(std::filesystem::exists(tmp / "idx"));
  EXPECT_FALSE(idx.Lookup("ctr1"));
  OwnerIndex reread(tmp / "idx");
  EXPECT_FALSE(reread.Matches({1, 2, 3, 4, "boot"}));
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
