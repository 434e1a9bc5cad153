#include "netiface/cni/process.h"

#include <signal.h>
#include <sys/wait.h>

#include <chrono>
#include <filesystem>
#include <thread>

#include <gtest/gtest.h>

#include "netiface/cni/error.h"
#include "testutil.h"

namespace netiface::cni {
namespace {

const std::map<std::string, std::string> kPath = {{"PATH", "/usr/bin:/bin"}};

SpawnSpec Sh(const std::string& script, std::string stdin_data = "") {
  SpawnSpec spec;
  spec.argv = {"/bin/sh", "-c", script, "sh", "second arg"};
  spec.env = kPath;
  spec.stdin_data = std::move(stdin_data);
  return spec;
}

TEST(ProcessTest, ArgvEnvironmentStdinAndStdout) {
  SpawnSpec spec = Sh("printf '%s|%s|' \"$1\" \"$ONLY\"; cat");
  spec.env["ONLY"] = "this";
  spec.stdin_data = "from stdin";
  ProcessOutput out = Process::Spawn(spec).Wait();
  EXPECT_EQ(out.exit_code, 0);
  EXPECT_EQ(out.stdout_data, "second arg|this|from stdin");
  EXPECT_EQ(out.stderr_data, "");  // passed through, not captured
  EXPECT_GT(out.max_rss_kb, 0);
}

// Megabytes each way at once: stdin fed while stdout and stderr are drained, so nothing blocks.
TEST(ProcessTest, CapturedStderrAndLargeStreamsDoNotDeadlock) {
  std::string big(3 << 20, 'x');
  SpawnSpec spec = Sh("cat | tee /dev/stderr", big);
  spec.stderr_mode = Stderr::kCapture;
  ProcessOutput out = Process::Spawn(spec).Wait();
  EXPECT_EQ(out.exit_code, 0);
  EXPECT_EQ(out.stdout_data.size(), big.size());
  EXPECT_EQ(out.stderr_data.size(), big.size());
}

TEST(ProcessTest, DiscardedStderr) {
  SpawnSpec spec = Sh("echo visible; echo hidden >&2; exit 3");
  spec.stderr_mode = Stderr::kDiscard;
  ProcessOutput out = Process::Spawn(spec).Wait();
  EXPECT_EQ(out.exit_code, 3);
  EXPECT_EQ(out.stdout_data, "visible\n");
}

TEST(ProcessTest, HeldStdinGoesOverAtReleaseOrNeverAtAll) {
  testing::TempDir dir;
  SpawnSpec spec = Sh("cat > \"$0.tmp\"; mv \"$0.tmp\" \"$0\"", "config");
  spec.argv[3] = dir / "in";  // $0
  spec.stdin_mode = Stdin::kOnRelease;
  Process held = Process::Spawn(spec);
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  EXPECT_FALSE(std::filesystem::exists(dir / "in")) << "the child read its stdin before Release()";
  held.Release();
  held.Release();  // once only
  EXPECT_EQ(held.Wait().exit_code, 0);
  EXPECT_EQ(testing::ReadFile(dir / "in"), "config");

  spec.argv[3] = dir / "never";
  EXPECT_EQ(Process::Spawn(spec).Wait().exit_code, 0);
  EXPECT_EQ(testing::ReadFile(dir / "never"), "");
}

// A Process dropped without Wait() (a caller unwinding from an exception) still reaps its child.
TEST(ProcessTest, DestructorReapsTheChild) {
  pid_t pid = -1;
  {
    Process p = Process::Spawn(Sh("exit 0"));
    pid = p.pid();
    Process moved = std::move(p);  // the moved-from one owns nothing
  }
  EXPECT_EQ(::waitpid(pid, nullptr, WNOHANG), -1);
  EXPECT_EQ(errno, ECHILD);
}

TEST(ProcessTest, SignalledChildAndUnstartableChild) {
  EXPECT_EQ(Process::Spawn(Sh("kill -9 $$")).Wait().exit_code, 128 + SIGKILL);
  SpawnSpec missing;
  missing.argv = {"/nonexistent/plugin"};
  try {
    Process::Spawn(missing);
    ADD_FAILURE() << "spawned a missing executable";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), kIoFailure);
    EXPECT_EQ(e.msg(), "failed to execute /nonexistent/plugin");
  }
}

}  // namespace
}  // namespace netiface::cni
