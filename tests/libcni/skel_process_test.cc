// skel through a real process: ProcessEnv's stdin/stdout/stderr and the exit code, and the same garbage
// fed to the reference bridge plugin for comparison of error codes.
#include <filesystem>

#include <gtest/gtest.h>

#include "netiface/cni/build_info.h"
#include "netiface/cni/result.h"
#include "testutil.h"

namespace netiface::cni {
namespace {

using nlohmann::json;

std::map<std::string, std::string> CniEnv(const std::string& command) {
  return {{"CNI_COMMAND", command},
          {"CNI_CONTAINERID", "ctr1"},
          {"CNI_NETNS", "/run/netns/none"},
          {"CNI_IFNAME", "eth0"},
          {"CNI_PATH", "/nonexistent"}};
}

std::string Conf(const std::string& version) {
  return json{{"cniVersion", version}, {"name", "n"}, {"type", "fake"}}.dump();
}

TEST(SkelProcessTest, AddPrintsExactBytesForEveryVersion) {
  for (const auto& v : testing::AllVersions()) {
    SCOPED_TRACE(v);
    auto r = testing::Run({NETIFACE_FAKE_PLUGIN}, CniEnv("ADD"), Conf(v));
    ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
    Result want;
    want.interfaces = {{"eth0", "0a:00:00:00:00:01", "/run/netns/none", std::nullopt, "", ""}};
    want.ips = {{0, *IpNet::Parse("10.9.0.2/24"), IpAddr::Parse("10.9.0.1")}};
    want.routes = {{*IpNet::Parse("0.0.0.0/0"), std::nullopt}};
    EXPECT_EQ(r.out, PrintJson(ResultToJson(want, v)));
    EXPECT_EQ(r.err, "");
  }
}

TEST(SkelProcessTest, SuccessfulVerbsPrintNothing) {
  for (const char* verb : {"DEL", "STATUS", "GC"}) {
    auto r = testing::Run({NETIFACE_FAKE_PLUGIN}, CniEnv(verb), Conf("1.1.0"));
    EXPECT_EQ(r.exit_code, 0) << verb << r.out << r.err;
    EXPECT_EQ(r.out, "") << verb;
  }
}

TEST(SkelProcessTest, ErrorsGoToStdoutAsJsonAndAreLogged) {
  auto r = testing::Run({NETIFACE_FAKE_PLUGIN}, CniEnv("CHECK"), Conf("1.0.0"));
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.Json(), (json{{"cniVersion", "1.0.0"}, {"code", 3}, {"msg", "no such container"}, {"details", "ctr1"}}));
  EXPECT_NE(r.err.find("no such container"), std::string::npos) << r.err;
  auto garbage = testing::Run({NETIFACE_FAKE_PLUGIN}, CniEnv("ADD"), "not json");
  EXPECT_EQ(garbage.exit_code, 1);
  EXPECT_EQ(garbage.Json()["code"], 6);
}

TEST(SkelProcessTest, VersionAndAbout) {
  auto v = testing::Run({NETIFACE_FAKE_PLUGIN}, {{"CNI_COMMAND", "VERSION"}}, "");
  EXPECT_EQ(v.exit_code, 0);
  EXPECT_EQ(v.Json()["supportedVersions"], json(testing::AllVersions()));
  auto about = testing::Run({NETIFACE_FAKE_PLUGIN}, {}, "");
  EXPECT_EQ(about.exit_code, 0);
  EXPECT_EQ(about.out, "");
  EXPECT_NE(about.err.find("CNI fake plugin"), std::string::npos);
  EXPECT_NE(about.err.find("CNI protocol versions supported: 0.1.0"), std::string::npos);
  // The banner and --version carry the project version and the source revision, from one place.
  const std::string version = VersionLine("x").substr(2);  // "0.1.0 (<revision>)"
  EXPECT_NE(about.err.find("version " + version), std::string::npos) << about.err;
  auto flag = testing::Run({NETIFACE_FAKE_PLUGIN, "--version"}, {}, "");
  EXPECT_EQ(flag.exit_code, 0);
  EXPECT_EQ(flag.out, std::string(std::filesystem::path(NETIFACE_FAKE_PLUGIN).filename()) + " " + version + "\n");
  EXPECT_EQ(ProjectVersion(), NETIFACE_PROJECT_VERSION);
  EXPECT_FALSE(SourceRevision().empty());
}

// The same bad inputs give the reference's error code. The reference never writes cniVersion in an
// error; we write the request's own, and leave it out as the reference does when there is none to tell.
TEST(SkelProcessTest, ErrorCodesMatchTheReference) {
  if (!testing::HaveReference()) GTEST_SKIP() << "reference plugins not installed";
  struct Case {
    std::string name;
    std::map<std::string, std::string> env;
    std::string stdin_data;
    bool names_version = false;  // our error carries the request's cniVersion
  };
  auto without = [](const std::string& var) {
    auto env = CniEnv("ADD");
    env.erase(var);
    return env;
  };
  auto with = [](const std::string& var, const std::string& value) {
    auto env = CniEnv("ADD");
    env[var] = value;
    return env;
  };
  std::vector<Case> cases = {
      {"no netns", without("CNI_NETNS"), Conf("1.0.0")},
      {"no path", without("CNI_PATH"), Conf("1.0.0")},
      {"long ifname", with("CNI_IFNAME", "0123456789abcdef"), Conf("1.0.0")},
      {"ifname with slash", with("CNI_IFNAME", "a/b"), Conf("1.0.0")},
      {"container id traversal", with("CNI_CONTAINERID", "../x"), Conf("1.0.0")},
      {"empty stdin", CniEnv("ADD"), ""},
      {"invalid json", CniEnv("ADD"), "{"},
      {"name traversal", CniEnv("ADD"), R"({"cniVersion":"1.0.0","name":"../x","type":"bridge"})", true},
      {"unknown version", CniEnv("ADD"), Conf("0.5.0")},
      {"check at 0.3.1", CniEnv("CHECK"), Conf("0.3.1"), true},
  };
  for (const auto& c : cases) {
    auto ours = testing::Run({NETIFACE_FAKE_PLUGIN}, c.env, c.stdin_data);
    auto ref = testing::Run({testing::RefDir() + "/bridge"}, c.env, c.stdin_data);
    EXPECT_EQ(ours.exit_code, 1) << c.name;
    EXPECT_EQ(ref.exit_code, 1) << c.name;
    EXPECT_EQ(ours.Json()["code"], ref.Json()["code"]) << c.name << "\nours: " << ours.out << "\nref: " << ref.out;
    EXPECT_FALSE(ref.Json().contains("cniVersion")) << c.name;
    EXPECT_EQ(ours.Json().contains("cniVersion"), c.names_version) << c.name << "\nours: " << ours.out;
  }
}

}  // namespace
}  // namespace netiface::cni
