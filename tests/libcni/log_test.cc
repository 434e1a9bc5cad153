#include "netiface/cni/log.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <map>

#include <gtest/gtest.h>

#include "netiface/cni/log_file.h"
#include "testutil.h"

namespace netiface::log {
namespace {

// ctest names a log file for the plugins in the environment (NETIFACE_LOG_FILE), which overrides the
// config's: these tests run without it and put it back.
class LogTest : public ::testing::Test {
 protected:
  void SetUp() override {
    for (const char* name : {kFileEnv, kLevelEnv}) {
      if (const char* v = std::getenv(name)) saved_[name] = v;
      ::unsetenv(name);
    }
  }
  void TearDown() override {
    Configure(nlohmann::json::object());
    SetContext("");
    for (const char* name : {kFileEnv, kLevelEnv}) ::unsetenv(name);
    for (const auto& [name, value] : saved_) ::setenv(name.c_str(), value.c_str(), 1);
  }

 private:
  std::map<std::string, std::string> saved_;
};

TEST_F(LogTest, DefaultIsWarning) {
  Configure(nlohmann::json::object());
  EXPECT_FALSE(Enabled(Level::kDebug));
  EXPECT_FALSE(Enabled(Level::kInfo));
  EXPECT_TRUE(Enabled(Level::kWarn));
  EXPECT_TRUE(Enabled(Level::kError));
}

TEST_F(LogTest, Levels) {
  struct Case {
    const char* name;
    Level lowest_enabled;
  } cases[] = {{"debug", Level::kDebug}, {"INFO", Level::kInfo},   {"warning", Level::kWarn},
               {"Warn", Level::kWarn},   {"error", Level::kError}, {"panic", Level::kError},
               {"fatal", Level::kError}, {"none", Level::kOff},    {"bogus", Level::kWarn}};
  for (const auto& c : cases) {
    Configure({{"logLevel", c.name}});
    for (Level l : {Level::kDebug, Level::kInfo, Level::kWarn, Level::kError}) {
      EXPECT_EQ(Enabled(l), l >= c.lowest_enabled) << c.name << " " << static_cast<int>(l);
    }
  }
  SetLevel(Level::kDebug);
  EXPECT_TRUE(Enabled(Level::kDebug));
  SetLevel(Level::kOff);
  EXPECT_FALSE(Enabled(Level::kError));
}

TEST_F(LogTest, NeverWritesToStdout) {
  ::testing::internal::CaptureStdout();
  ::testing::internal::CaptureStderr();
  Configure({{"logLevel", "debug"}});
  Debug("debug line {}", 1);
  Error("error line {}", 2);
  std::string out = ::testing::internal::GetCapturedStdout();
  std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(out, "");
  EXPECT_NE(err.find("debug line 1"), std::string::npos) << err;
  EXPECT_NE(err.find("error line 2"), std::string::npos) << err;
  EXPECT_NE(err.find("[" + std::to_string(getpid()) + "]"), std::string::npos) << err;
}

TEST_F(LogTest, LogFileIsCreatedPrivateAndAppended) {
  netiface::testing::TempDir dir;
  std::string path = dir / "sub/dir/plugin.log";
  netiface::testing::WriteFile(dir / "keep", "");
  ::testing::internal::CaptureStdout();
  Configure({{"logFile", path}, {"logLevel", "info"}});
  Info("first {}", "message");
  Debug("hidden");
  Configure({{"logFile", path}, {"logLevel", "info"}});
  Warn("second");
  EXPECT_EQ(::testing::internal::GetCapturedStdout(), "");
  std::string text = netiface::testing::ReadFile(path);
  EXPECT_NE(text.find("first message"), std::string::npos) << text;
  EXPECT_NE(text.find("second"), std::string::npos) << text;
  EXPECT_LT(text.find("first message"), text.find("second"));
  EXPECT_EQ(text.find("hidden"), std::string::npos);
  EXPECT_NE(text.find("info"), std::string::npos);
  EXPECT_NE(text.find(std::to_string(getpid())), std::string::npos);
  EXPECT_NE(text.find(std::to_string(1900 +
                                     [] {
                                       time_t t = time(nullptr);
                                       struct tm tm {};
                                       gmtime_r(&t, &tm);
                                       return tm.tm_year;
                                     }())),
            std::string::npos);  // a timestamp
  struct stat st {};
  ASSERT_EQ(stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
}

TEST_F(LogTest, UnwritableLogFileFallsBackToStderr) {
  ::testing::internal::CaptureStderr();
  Configure({{"logFile", "/proc/netiface-no-such/dir/log"}});
  Error("still logged");
  Error("logged again");
  std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_NE(err.find("still logged"), std::string::npos) << err;
  EXPECT_NE(err.find("logged again"), std::string::npos) << err;
  // Said once, not at every line.
  EXPECT_NE(err.find("logging to stderr only"), std::string::npos) << err;
  EXPECT_EQ(err.find("logging to stderr only"), err.rfind("logging to stderr only")) << err;
}

TEST_F(LogTest, DefaultFileIsPrivateInAPrivateFolder) {
  netiface::testing::TempDir dir;
  std::string path = dir / "netiface/cni.log";
  Configure(nlohmann::json::object(), path);
  EXPECT_EQ(::access(path.c_str(), F_OK), -1) << "opened before the first line";
  Info("not at the default level");
  EXPECT_EQ(::access(path.c_str(), F_OK), -1);
  ::testing::internal::CaptureStderr();
  Warn("kept");
  ::testing::internal::GetCapturedStderr();
  EXPECT_NE(netiface::testing::ReadFile(path).find("kept"), std::string::npos);
  struct stat st {};
  ASSERT_EQ(stat((dir / "netiface").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0700u);
  ASSERT_EQ(stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  // "none" turns the file off, the config's own file wins over the default.
  Configure({{"logFile", "none"}}, dir / "netiface/other.log");
  ::testing::internal::CaptureStderr();
  Error("stderr only");
  ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(::access((dir / "netiface/other.log").c_str(), F_OK), -1);
}

TEST_F(LogTest, EnvironmentOverridesTheConfig) {
  netiface::testing::TempDir dir;
  ::setenv(kFileEnv, (dir / "env.log").c_str(), 1);
  ::setenv(kLevelEnv, "debug", 1);
  Configure({{"logFile", dir / "conf.log"}, {"logLevel", "error"}});
  EXPECT_TRUE(Enabled(Level::kDebug));
  Debug("debug line");
  EXPECT_NE(netiface::testing::ReadFile(dir / "env.log").find("debug line"), std::string::npos);
  EXPECT_EQ(::access((dir / "conf.log").c_str(), F_OK), -1);
}

TEST_F(LogTest, EveryLineNamesTheContext) {
  netiface::testing::TempDir dir;
  Configure({{"logFile", dir / "c.log"}, {"logLevel", "info"}});
  SetContext("bridge ADD container=abc ifname=eth0 network=net1");
  Info("one");
  Info("two");
  std::string text = netiface::testing::ReadFile(dir / "c.log");
  EXPECT_NE(text.find("bridge ADD container=abc ifname=eth0 network=net1: one\n"), std::string::npos) << text;
  EXPECT_NE(text.find("bridge ADD container=abc ifname=eth0 network=net1: two\n"), std::string::npos) << text;
}

TEST_F(LogTest, SymlinkedFileOrFolderIsNotFollowed) {
  netiface::testing::TempDir dir;
  netiface::testing::WriteFile(dir / "target", "precious\n");
  ASSERT_EQ(::symlink((dir / "target").c_str(), (dir / "link.log").c_str()), 0);
  LogFile file({dir / "link.log"});
  EXPECT_FALSE(file.Write("line\n"));
  EXPECT_NE(file.error().find("link.log"), std::string::npos) << file.error();
  EXPECT_EQ(netiface::testing::ReadFile(dir / "target"), "precious\n");
  ASSERT_EQ(::mkdir((dir / "real").c_str(), 0700), 0);
  ASSERT_EQ(::symlink((dir / "real").c_str(), (dir / "linkdir").c_str()), 0);
  LogFile in_linked_folder({dir / "linkdir/cni.log"});
  EXPECT_FALSE(in_linked_folder.Write("line\n"));
  EXPECT_EQ(::access((dir / "real/cni.log").c_str(), F_OK), -1);
}

TEST_F(LogTest, RotatesBySizeAndKeepsABoundedNumberOfFiles) {
  netiface::testing::TempDir dir;
  LogFileOptions options{dir / "r.log", 1000, 2};
  const std::string line(99, 'x');
  {
    LogFile file(options);
    for (int i = 0; i < 45; ++i) ASSERT_TRUE(file.Write(line + "\n")) << file.error();
  }
  // 45 lines of 100 bytes, a rotation at every 10th: r.log holds the last 5, r.log.1 and .2 ten each,
  // .3 never exists.
  EXPECT_EQ(netiface::testing::ReadFile(dir / "r.log").size(), 500u);
  EXPECT_EQ(netiface::testing::ReadFile(dir / "r.log.1").size(), 1000u);
  EXPECT_EQ(netiface::testing::ReadFile(dir / "r.log.2").size(), 1000u);
  EXPECT_EQ(::access((dir / "r.log.3").c_str(), F_OK), -1);
  // A second writer whose file was rotated under it goes on in the new one.
  LogFile a(options), b(options);
  ASSERT_TRUE(a.Write(line + "\n"));
  ASSERT_TRUE(b.Write(line + "\n"));                              // 700 bytes
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(a.Write(line + "\n"));  // 1000: a rotates
  ASSERT_TRUE(b.Write("after\n"));  // into the old file (now r.log.1): it is full, b sees it rotated
  ASSERT_TRUE(b.Write("new file\n"));
  EXPECT_EQ(netiface::testing::ReadFile(dir / "r.log"), "new file\n");
}

}  // namespace
}  // namespace netiface::log
