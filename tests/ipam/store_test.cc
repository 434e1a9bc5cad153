#include "netiface/ipam/store.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "netiface/cni/error.h"
#include "netiface/ipam/reservation.h"
#include "testutil.h"

namespace netiface::ipam {
namespace {

using cni::IpAddr;
using ::testing::ElementsAre;
using ::testing::IsEmpty;
using ::testing::UnorderedElementsAre;

IpAddr A(const char* s) { return *IpAddr::Parse(s); }

class StoreTest : public ::testing::Test {
 protected:
  StoreConfig Config() const { return {"net1", tmp_.path(), 1000}; }
  std::string Dir() const { return tmp_ / "net1"; }
  std::string File(const std::string& name) const { return Dir() + "/" + name; }
  Store Open() { return std::move(*Store::Open(Config(), true)); }

  testing::TempDir tmp_;
};

TEST_F(StoreTest, ReservationFileIsByteCompatible) {
  {
    Store s = Open();
    EXPECT_TRUE(s.Reserve(A("10.0.0.2"), "ctr1", "eth0"));
    EXPECT_FALSE(s.Reserve(A("10.0.0.2"), "ctr2", "eth0"));
    s.SetLastReserved(0, A("10.0.0.2"));
  }
  EXPECT_EQ(testing::ReadFile(File("10.0.0.2")), "ctr1\r\neth0");
  EXPECT_EQ(testing::ReadFile(File("last_reserved_ip.0")), "10.0.0.2");
  struct stat st {};
  ASSERT_EQ(::stat(File("10.0.0.2").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  // Nothing but the reservation, the cursor and the lock: no temporaries, no index in the folder.
  EXPECT_EQ(testing::ListDir(Dir()), (std::vector<std::string>{"10.0.0.2", "last_reserved_ip.0", "lock"}));
}

// Issue 17, case 4: a reservation that cannot be written names its folder. A file size limit of 0 makes
// the write fail (EFBIG) as a full disk does; the limit is set in a child process only.
TEST_F(StoreTest, AWriteFailureNamesTheFolder) {
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    ::close(fds[0]);
    ::signal(SIGXFSZ, SIG_IGN);
    rlimit none{0, 0};
    ::setrlimit(RLIMIT_FSIZE, &none);
    std::string msg = "no error";
    try {
      Store s = Open();
      s.Reserve(A("10.0.0.2"), "ctr1", "eth0");
    } catch (const cni::Error& e) {
      msg = e.msg();
    }
    (void)!::write(fds[1], msg.data(), msg.size());
    ::_exit(0);
  }
  ::close(fds[1]);
  std::string msg;
  char buf[512];
  for (ssize_t n; (n = ::read(fds[0], buf, sizeof buf)) > 0;) msg.append(buf, static_cast<size_t>(n));
  ::close(fds[0]);
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  EXPECT_EQ(msg, "cannot write a reservation in " + Dir());
}

TEST_F(StoreTest, OpenWithoutCreateOnMissingFolder) {
  EXPECT_FALSE(Store::Open(Config(), false).has_value());
  EXPECT_FALSE(std::filesystem::exists(Dir()));
}

TEST_F(StoreTest, FindExactAndLegacy) {
  std::filesystem::create_directories(Dir());
  testing::WriteFile(File("10.0.0.5"), "ctr1");              // legacy: container ID only
  testing::WriteFile(File("10.0.0.6"), "ctr1\r\neth1");      // other interface
  testing::WriteFile(File("10.0.0.7"), "  ctr1\r\neth0\n");  // whitespace around is trimmed
  Store s = Open();
  auto held = s.Find("ctr1", "eth0");
  EXPECT_THAT(held.exact, ElementsAre(A("10.0.0.7")));
  EXPECT_THAT(held.legacy, ElementsAre(A("10.0.0.5")));
  EXPECT_THAT(s.Find("ctr2", "eth0").exact, IsEmpty());
}

TEST_F(StoreTest, ReleaseAttachmentPrefersExactThenLegacy) {
  std::filesystem::create_directories(Dir());
  testing::WriteFile(File("10.0.0.5"), "ctr1");
  testing::WriteFile(File("10.0.0.7"), "ctr1\r\neth0");
  testing::WriteFile(File("10.0.0.8"), "ctr2\r\neth0");
  {
    Store s = Open();
    EXPECT_THAT(s.ReleaseAttachment("ctr1", "eth0"), ElementsAre(A("10.0.0.7")));
  }
  {
    Store s = Open();
    EXPECT_THAT(s.ReleaseAttachment("ctr1", "eth0"), ElementsAre(A("10.0.0.5")));  // as the reference: fallback
    EXPECT_THAT(s.ReleaseAttachment("ctr1", "eth0"), IsEmpty());
  }
  EXPECT_EQ(testing::ListDir(Dir()), (std::vector<std::string>{"10.0.0.8", "lock"}));
}

TEST_F(StoreTest, ReleaseIfOwnerLeavesOthersAlone) {
  Store s = Open();
  ASSERT_TRUE(s.Reserve(A("10.0.0.2"), "ctr1", "eth0"));
  EXPECT_FALSE(s.ReleaseIfOwner(A("10.0.0.2"), "ctr2\r\neth0"));
  EXPECT_TRUE(s.Exists(A("10.0.0.2")));
  EXPECT_TRUE(s.ReleaseIfOwner(A("10.0.0.2"), "ctr1\r\neth0"));
  EXPECT_FALSE(s.Exists(A("10.0.0.2")));
  EXPECT_FALSE(s.ReleaseIfOwner(A("10.0.0.2"), "ctr1\r\neth0"));
}

TEST_F(StoreTest, LastReservedToleratesGarbage) {
  Store s = Open();
  EXPECT_FALSE(s.LastReserved(0));
  testing::WriteFile(File("last_reserved_ip.0"), "not an ip");
  EXPECT_FALSE(s.LastReserved(0));
  testing::WriteFile(File("last_reserved_ip.1"), "10.0.0.9\n");
  EXPECT_EQ(s.LastReserved(1), A("10.0.0.9"));
}

TEST_F(StoreTest, ReserveFirstFollowsTheIterator) {
  RangeSet set = ParseRangeSet(nlohmann::json::array({{{"subnet", "10.0.0.0/29"}}}), "s");
  Store s = Open();
  ASSERT_TRUE(s.Reserve(A("10.0.0.5"), "other", "eth0"));
  CandidateIter it(set, A("10.0.0.4"));
  auto got = s.ReserveFirst(it, "ctr1", "eth0");
  ASSERT_TRUE(got);
  EXPECT_EQ(got->ip, A("10.0.0.6"));
  CandidateIter again(set, A("10.0.0.4"));
  EXPECT_EQ(s.ReserveFirst(again, "ctr2", "eth0")->ip, A("10.0.0.2"));  // wrapped
}

TEST_F(StoreTest, LockTimeoutIsCode11) {
  std::filesystem::create_directories(Dir());
  auto held = cni::FileLock::Acquire(File("lock"), 0);
  StoreConfig c = Config();
  c.lock_timeout_ms = 50;
  try {
    Store::Open(c, true);
    FAIL() << "no timeout";
  } catch (const cni::Error& e) {
    EXPECT_EQ(e.code(), cni::kTryAgainLater);
  }
}

TEST_F(StoreTest, StaleNamedTemporaryIsRemovedByAScan) {
  std::filesystem::create_directories(Dir());
  testing::WriteFile(File(".netiface-tmp"), "ctr9\r\neth0");
  Store s = Open();
  EXPECT_THAT(s.Scan(), IsEmpty());
  EXPECT_FALSE(std::filesystem::exists(File(".netiface-tmp")));
}

// --- the index ---

TEST_F(StoreTest, IndexIsTrustedAfterOurOwnChanges) {
  {
    Store s = Open();
    EXPECT_FALSE(s.index_was_trusted());
    ASSERT_TRUE(s.Reserve(A("10.0.0.2"), "ctr1", "eth0"));
  }
  for (int i = 3; i < 20; ++i) {
    Store s = Open();
    EXPECT_THAT(s.Find("ctr1", "eth0").exact, ElementsAre(A("10.0.0.2")));
    EXPECT_TRUE(s.index_was_trusted()) << i;
    EXPECT_FALSE(s.scanned()) << i;
    std::string ip = "10.0.0." + std::to_string(i);
    ASSERT_TRUE(s.Reserve(*IpAddr::Parse(ip), "c" + std::to_string(i), "eth0"));
  }
  Store s = Open();
  EXPECT_THAT(s.Find("c7", "eth0").exact, ElementsAre(A("10.0.0.7")));
  EXPECT_TRUE(s.index_was_trusted());
  // Our recorded folder time is strictly before the coarse clock: no later change can reproduce it.
  struct stat st {};
  ASSERT_EQ(::stat(Dir().c_str(), &st), 0);
  timespec now{};
  ::clock_gettime(CLOCK_REALTIME_COARSE, &now);
  EXPECT_TRUE(st.st_mtim.tv_sec < now.tv_sec || (st.st_mtim.tv_sec == now.tv_sec && st.st_mtim.tv_nsec < now.tv_nsec));
}

// The index's layout follows the folder: grown into more shards as reservations come, back to one as
// they go, and trusted throughout (issue 17, case 3: space in proportion to what it holds).
TEST_F(StoreTest, IndexLayoutFollowsTheFolder) {
  auto ip = [](int i) { return IpAddr::V4(0x0a010000u + static_cast<uint32_t>(i)); };
  for (int i = 0; i < 600; ++i) {
    Store s = Open();
    ASSERT_TRUE(s.Reserve(ip(i), "c" + std::to_string(i), "eth0"));
  }
  const size_t grown = testing::ListDir(IndexDir(Config())).size();
  EXPECT_GT(grown, 2u);
  EXPECT_LE(grown, 600u / 32 + 2);
  {
    Store s = Open();
    EXPECT_THAT(s.Find("c599", "eth0").exact, ElementsAre(ip(599)));
    EXPECT_TRUE(s.index_was_trusted());
  }
  for (int i = 0; i < 590; ++i) {
    Store s = Open();
    ASSERT_THAT(s.ReleaseAttachment("c" + std::to_string(i), "eth0"), ElementsAre(ip(i)));
  }
  EXPECT_EQ(testing::ListDir(IndexDir(Config())), (std::vector<std::string>{"shard-00", "stamp"}));
  Store s = Open();
  EXPECT_THAT(s.Find("c595", "eth0").exact, ElementsAre(ip(595)));
  EXPECT_TRUE(s.index_was_trusted());
}

TEST_F(StoreTest, ExternalCreateRightAfterOurChangeIsSeen) {
  // A writer that bypasses us (the reference) creates or removes a file immediately after we committed,
  // within the same clock tick: the index must not be trusted, and the new file must be found.
  for (int round = 0; round < 200; ++round) {
    std::string id = "ext" + std::to_string(round);
    std::string ip = "10.0." + std::to_string(round / 200) + "." + std::to_string(2 + round % 200);
    {
      Store s = Open();
      ASSERT_TRUE(s.Reserve(A("10.1.0.2"), "mine" + std::to_string(round), "eth0"));
    }
    testing::WriteFile(File(ip), id + "\r\neth0");  // external create, no lock courtesy needed for the test
    Store s = Open();
    EXPECT_THAT(s.Find(id, "eth0").exact, ElementsAre(*IpAddr::Parse(ip))) << round;
    EXPECT_FALSE(s.index_was_trusted()) << round;
    ASSERT_TRUE(s.ReleaseIfOwner(A("10.1.0.2"), "mine" + std::to_string(round) + "\r\neth0"));
  }
}

TEST_F(StoreTest, KilledBeforeCommitLeavesNoTrustedStamp) {
  // A process that changes the folder and dies before Commit (no destructors run): its stamp was removed
  // before the change, so the next call rescans and sees the change, whatever the clock did.
  for (int round = 0; round < 20; ++round) {
    {
      Store s = Open();  // commits a trusted stamp
      s.Find("x", "eth0");
    }
    std::string id = "killed" + std::to_string(round);
    pid_t pid = fork();
    if (pid == 0) {
      Store s = Open();
      bool ok = s.Reserve(*IpAddr::Parse("10.2.0." + std::to_string(round + 1)), id, "eth0");
      _exit(ok ? 0 : 1);
    }
    int status = 0;
    ASSERT_EQ(waitpid(pid, &status, 0), pid);
    ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    Store s = Open();
    EXPECT_FALSE(s.index_was_trusted()) << round;
    EXPECT_THAT(s.Find(id, "eth0").exact, ElementsAre(*IpAddr::Parse("10.2.0." + std::to_string(round + 1))));
  }
}

TEST_F(StoreTest, ExternalRemoveIsSeen) {
  {
    Store s = Open();
    ASSERT_TRUE(s.Reserve(A("10.0.0.2"), "ctr1", "eth0"));
    ASSERT_TRUE(s.Reserve(A("10.0.0.3"), "ctr2", "eth0"));
  }
  ASSERT_EQ(::unlink(File("10.0.0.2").c_str()), 0);
  Store s = Open();
  EXPECT_THAT(s.Find("ctr1", "eth0").exact, IsEmpty());
  EXPECT_FALSE(s.index_was_trusted());
  EXPECT_THAT(s.Find("ctr2", "eth0").exact, ElementsAre(A("10.0.0.3")));
}

TEST_F(StoreTest, ForgedStampStillNeverActsOnAStaleEntry) {
  // Even a trusted index entry is read back before use: a changed content makes us rescan.
  {
    Store s = Open();
    ASSERT_TRUE(s.Reserve(A("10.0.0.2"), "ctr1", "eth0"));
  }
  struct stat before {};
  ::stat(Dir().c_str(), &before);
  testing::WriteFile(File("10.0.0.2"), "ctr2\r\neth0");  // in-place rewrite: folder mtime unchanged
  struct stat after {};
  ::stat(Dir().c_str(), &after);
  ASSERT_EQ(before.st_mtim.tv_nsec, after.st_mtim.tv_nsec);
  Store s = Open();
  EXPECT_THAT(s.ReleaseAttachment("ctr1", "eth0"), IsEmpty());
  EXPECT_TRUE(std::filesystem::exists(File("10.0.0.2")));
  EXPECT_TRUE(s.scanned());
}

TEST_F(StoreTest, CorruptIndexFallsBackToAScan) {
  {
    Store s = Open();
    ASSERT_TRUE(s.Reserve(A("10.0.0.2"), "ctr1", "eth0"));
  }
  for (const auto& name : testing::ListDir(IndexDir(Config()))) {
    if (name.rfind("shard-", 0) == 0) testing::WriteFile(IndexDir(Config()) + "/" + name, "junk");
  }
  Store s = Open();
  EXPECT_THAT(s.Find("ctr1", "eth0").exact, ElementsAre(A("10.0.0.2")));
  EXPECT_TRUE(s.scanned());
}

TEST_F(StoreTest, ReplacedFolderIsNotTrusted) {
  {
    Store s = Open();
    ASSERT_TRUE(s.Reserve(A("10.0.0.2"), "ctr1", "eth0"));
  }
  std::filesystem::remove_all(Dir());
  std::filesystem::create_directories(Dir());
  testing::WriteFile(File("10.0.0.3"), "ctr1\r\neth0");
  Store s = Open();
  EXPECT_THAT(s.Find("ctr1", "eth0").exact, ElementsAre(A("10.0.0.3")));
  EXPECT_FALSE(s.index_was_trusted());
}

TEST_F(StoreTest, ScanListsEveryReservationOnly) {
  std::filesystem::create_directories(Dir());
  testing::WriteFile(File("10.0.0.5"), "a\r\neth0");
  testing::WriteFile(File("fd00::5"), "b");
  testing::WriteFile(File("10.0.0.6"), "");
  testing::WriteFile(File("last_reserved_ip.0"), "10.0.0.5");
  testing::WriteFile(File("README"), "x");
  Store s = Open();
  std::vector<std::string> got;
  for (const auto& e : s.Scan()) got.push_back(e.ip.ToString() + "=" + e.owner);
  EXPECT_THAT(got, UnorderedElementsAre("10.0.0.5=a\r\neth0", "fd00::5=b", "10.0.0.6="));
}

}  // namespace
}  // namespace netiface::ipam
