#include "netiface/cni/log.h"

#include <sys/stat.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include "testutil.h"

namespace netiface::log {
namespace {

class LogTest : public ::testing::Test {
 protected:
  void TearDown() override { Configure(nlohmann::json::object()); }
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
  std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_NE(err.find("still logged"), std::string::npos) << err;
}

}  // namespace
}  // namespace netiface::log
