#include "netiface/cni/file.h"

#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <set>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "netiface/cni/error.h"
#include "testutil.h"

namespace netiface::cni {
namespace {

int ModeOf(const std::string& path) {
  struct stat st {};
  EXPECT_EQ(stat(path.c_str(), &st), 0) << path;
  return static_cast<int>(st.st_mode & 07777);
}

TEST(FileLockTest, SecondAcquireTimesOutUntilTheFirstIsReleased) {
  testing::TempDir dir;
  std::string path = dir / "lock";
  {
    FileLock first = FileLock::Acquire(path, 100);
    EXPECT_EQ(ModeOf(path), 0600);
    try {
      FileLock second = FileLock::Acquire(path, 30);
      FAIL() << "second lock acquired";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), kTryAgainLater);
      EXPECT_EQ(e.msg(), "timed out waiting for lock " + path);
    }
    // Another process sees the same lock (the reference plugins' go-filemutex uses flock too).
    EXPECT_NE(testing::Sh("flock -n " + path + " true").exit_code, 0);
  }
  FileLock again = FileLock::Acquire(path, 0);
  EXPECT_NE(testing::Sh("flock -n " + path + " true").exit_code, 0);
}

TEST(FileLockTest, MoveKeepsTheLock) {
  testing::TempDir dir;
  std::string path = dir / "lock";
  FileLock a = FileLock::Acquire(path, 10);
  {
    FileLock b = std::move(a);
    FileLock c = FileLock::Acquire(dir / "other", 10);
    c = std::move(b);  // releases "other", takes over "lock"
    EXPECT_THROW(FileLock::Acquire(path, 0), Error);
    FileLock d = FileLock::Acquire(dir / "other", 0);
  }
  FileLock e = FileLock::Acquire(path, 0);  // released with c
}

TEST(FileLockTest, WaitsForAHolderThatLetsGo) {
  testing::TempDir dir;
  std::string path = dir / "lock";
  // A child holds the lock for a moment; we wait long enough to get it.
  testing::Sh("(flock " + path + " sleep 0.3 &) ; sleep 0.1");
  FileLock l = FileLock::Acquire(path, 10000);
  SUCCEED();
}

TEST(FileLockTest, UnopenablePathIsIoFailure) {
  try {
    FileLock::Acquire("/nonexistent-dir-netiface/lock", 10);
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), kIoFailure);
  }
}

TEST(WriteFileAtomicTest, CreatesAndReplaces) {
  testing::TempDir dir;
  std::string path = dir / "f";
  WriteFileAtomic(path, "one");
  EXPECT_EQ(testing::ReadFile(path), "one");
  EXPECT_EQ(ModeOf(path), 0600);
  WriteFileAtomic(path, std::string("two\0bytes", 9), 0644);
  EXPECT_EQ(testing::ReadFile(path), std::string("two\0bytes", 9));
  EXPECT_EQ(ModeOf(path), 0644);
  WriteFileAtomic(path, "");
  EXPECT_EQ(testing::ReadFile(path), "");
  EXPECT_EQ(testing::ListDir(dir.path()), std::vector<std::string>{"f"});  // no temporaries left
}

TEST(WriteFileAtomicTest, FailureLeavesNothing) {
  testing::TempDir dir;
  try {
    WriteFileAtomic(dir / "missing/f", "x");
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), kIoFailure);
  }
  mkdir((dir / "d").c_str(), 0755);
  EXPECT_THROW(WriteFileAtomic(dir / "d", "x"), Error);  // cannot replace a folder
  EXPECT_EQ(testing::ListDir(dir.path()), std::vector<std::string>{"d"});
}

TEST(ReadFileIfExistsTest, Basics) {
  testing::TempDir dir;
  EXPECT_FALSE(ReadFileIfExists(dir / "none"));
  testing::WriteFile(dir / "f", std::string("a\r\nb\0c", 6));
  EXPECT_EQ(ReadFileIfExists(dir / "f"), std::string("a\r\nb\0c", 6));
  testing::WriteFile(dir / "empty", "");
  EXPECT_EQ(ReadFileIfExists(dir / "empty"), "");
  EXPECT_THROW(ReadFileIfExists(dir.path()), Error);  // a folder
}

TEST(AtomicFileTest, CreatedFirstCommittedLater) {
  testing::TempDir dir;
  const std::string f = dir / "record.json";
  testing::WriteFile(f, "old");
  {
    AtomicFile draft(f, 0640);
    ASSERT_EQ(testing::ListDir(dir.path()).size(), 2u);  // the old file and the temporary
    EXPECT_EQ(testing::ReadFile(f), "old");              // untouched until Commit
    draft.Commit("new", Sync::kProcessCrash);
    EXPECT_THROW(draft.Commit("again"), Error);
  }
  EXPECT_EQ(testing::ReadFile(f), "new");
  EXPECT_EQ(ModeOf(f), 0640);
  EXPECT_EQ(testing::ListDir(dir.path()), std::vector<std::string>{"record.json"});
  { AtomicFile abandoned(dir / "other.json"); }
  EXPECT_EQ(testing::ListDir(dir.path()), std::vector<std::string>{"record.json"});  // temporary removed
  EXPECT_THROW(AtomicFile(dir / "missing/x.json"), Error);
}

// A writer killed before Commit leaves its temporary; the cleaner tells it from one being written by the
// writer's lock, which dies with the writer (issue 17, case 2).
TEST(AtomicFileTest, AbandonedTemporariesAreRemovedLiveOnesKept) {
  testing::TempDir dir;
  const std::string f = dir / "ep.json";
  // A leftover of a killed writer: a real one, SIGKILLed with its temporary open.
  int ready[2];
  ASSERT_EQ(::pipe(ready), 0);
  pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    AtomicFile draft(f);
    (void)!::write(ready[1], "x", 1);
    ::pause();
    ::_exit(0);
  }
  char c;
  ASSERT_EQ(::read(ready[0], &c, 1), 1);
  ::close(ready[0]);
  ::close(ready[1]);
  ::kill(pid, SIGKILL);
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  ASSERT_EQ(testing::ListDir(dir.path()).size(), 1u);
  // One written by an older binary (no lock at all), and names that are not this file's temporaries.
  testing::WriteFile(dir / "ep.json.tmp-0123456789ab", "");
  for (const char* other :
       {"ep.json.tmp-0123456789", "ep.json.tmp-0123456789aZ", "other.json.tmp-0123456789ab", "ep.json"}) {
    testing::WriteFile(dir / other, "");
  }
  {
    AtomicFile live(f);  // being written: kept, and still commits
    EXPECT_EQ(RemoveAbandonedTemporaries(f), 2);
    std::set<std::string> left;
    for (const auto& n : testing::ListDir(dir.path())) left.insert(n);
    for (const char* kept :
         {"ep.json", "ep.json.tmp-0123456789", "ep.json.tmp-0123456789aZ", "other.json.tmp-0123456789ab"}) {
      EXPECT_EQ(left.erase(kept), 1u) << kept;
    }
    ASSERT_EQ(left.size(), 1u);  // the live one
    EXPECT_TRUE(left.begin()->starts_with("ep.json.tmp-")) << *left.begin();
    live.Commit("new", Sync::kProcessCrash);
  }
  EXPECT_EQ(testing::ReadFile(f), "new");
  EXPECT_EQ(RemoveAbandonedTemporaries(f), 0);
  // The folder-wide sweep takes every abandoned AtomicFile temporary, whatever file it was for.
  EXPECT_EQ(RemoveAbandonedTemporariesIn(dir.path()), 1);
  EXPECT_EQ(testing::ListDir(dir.path()),
            (std::vector<std::string>{"ep.json", "ep.json.tmp-0123456789", "ep.json.tmp-0123456789aZ"}));
  EXPECT_EQ(RemoveAbandonedTemporariesIn(dir / "missing"), 0);
}

TEST(WriteFileDurableTest, WritesTruncatesAndSetsTheMode) {
  testing::TempDir dir;
  const std::string f = dir / "saved";
  WriteFileDurable(f, "a longer first version");
  EXPECT_EQ(testing::ReadFile(f), "a longer first version");
  EXPECT_EQ(ModeOf(f), 0600);
  ::chmod(f.c_str(), 0644);
  WriteFileDurable(f, "short", 0600);
  EXPECT_EQ(testing::ReadFile(f), "short");
  EXPECT_EQ(ModeOf(f), 0600);  // whatever the file had before
  EXPECT_THROW(WriteFileDurable(dir / "missing/saved", "x"), Error);
}

TEST(MakeDirsTest, CreatesParentsWithMode) {
  testing::TempDir dir;
  std::string deep = dir / "a/b/c";
  MakeDirs(deep, 0700);
  EXPECT_EQ(ModeOf(dir / "a"), 0700);
  EXPECT_EQ(ModeOf(deep), 0700);
  MakeDirs(deep);  // exists: fine
  MakeDirs(deep + "/");
  testing::WriteFile(dir / "file", "x");
  EXPECT_THROW(MakeDirs(dir / "file/sub"), Error);
  EXPECT_THROW(MakeDirs(dir / "file"), Error);
}

// Plugins of parallel ADDs create the same folders at once: every one of them succeeds.
TEST(MakeDirsTest, ConcurrentCallsAllSucceed) {
  for (int round = 0; round < 20; ++round) {
    testing::TempDir dir;
    const std::string deep = dir / "x/y/z/w";
    std::atomic<int> failures{0};
    std::vector<std::thread> threads;
    for (int i = 0; i < 8; ++i) {
      threads.emplace_back([&] {
        try {
          MakeDirs(deep, 0750);
        } catch (const Error&) {
          ++failures;
        }
      });
    }
    for (auto& t : threads) t.join();
    EXPECT_EQ(failures, 0);
    EXPECT_EQ(ModeOf(deep), 0750);
  }
}

}  // namespace
}  // namespace netiface::cni
