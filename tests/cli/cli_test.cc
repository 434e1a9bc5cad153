// The netiface command line in-process: parsing, environment, exit codes and output, against fake
// plugins.
#include "netiface/cli/cli.h"

#include <sstream>

#include <gtest/gtest.h>

#include "fake_plugins.h"
#include "netiface/cni/build_info.h"
#include "netiface/cni/runtime/cache.h"
#include "testutil.h"

namespace netiface::cli {
namespace {

using nlohmann::json;

struct CliRun {
  int code;
  std::string out;
  std::string err;
};

class CliTest : public ::testing::Test {
 protected:
  CliTest() {
    for (const char* t : {"plug-a", "plug-b"}) fake_.Add(t);
    fake_.SetResult("plug-a", testing::SampleResult("1.1.0", "10.1.0.2/24"));
    fake_.SetResult("plug-b", testing::SampleResult("1.1.0", "10.1.0.3/24"));
    fake_.WriteConf("10-clinet.conflist", R"({"cniVersion":"1.1.0","name":"clinet","plugins":[{"type":"plug-a"},)"
                                          R"({"type":"plug-b","capabilities":{"mac":true}}]})");
    env_ = {{"PATH", "/usr/bin:/bin"}, {"NETCONFPATH", fake_.conf_dir()}, {"CNI_PATH", fake_.bin_dir()}};
  }

  CliRun Run(std::vector<std::string> args) {
    args.insert(args.begin(), "netiface");
    bool has_cache = false;
    for (const auto& a : args) has_cache |= a == "--cache-dir";
    if (!has_cache && args.size() > 1 && args[1] != "ipam" && args[1] != "status" && args[1] != "--help") {
      args.push_back("--cache-dir");
      args.push_back(fake_.cache_dir());
    }
    std::ostringstream out, err;
    CliContext ctx;
    ctx.env = env_;
    ctx.out = &out;
    ctx.err = &err;
    int code = RunCli(args, ctx);
    return {code, out.str(), err.str()};
  }

  testing::FakePlugins fake_;
  std::map<std::string, std::string> env_;
};

TEST(ContainerIdTest, FollowsCnitoolsRule) {
  // python3: "cnitool-" + hashlib.sha512(b"/run/netns/test").hexdigest()[:20]
  EXPECT_EQ(ContainerIdFromNetns("/run/netns/test"), "cnitool-8ae22670664f2caaa6b3");
}

TEST(AbsolutePathTest, CleansLikeGo) {
  EXPECT_EQ(AbsolutePath("/run/netns/x/"), "/run/netns/x");
  EXPECT_EQ(AbsolutePath("/run//netns/../netns/./x"), "/run/netns/x");
  EXPECT_EQ(AbsolutePath("/"), "/");
  EXPECT_EQ(AbsolutePath("rel").front(), '/');
}

TEST_F(CliTest, HelpOnEveryCommandExitsZero) {
  for (auto args : std::vector<std::vector<std::string>>{{"--help"},
                                                         {"add", "--help"},
                                                         {"check", "--help"},
                                                         {"del", "--help"},
                                                         {"gc", "--help"},
                                                         {"ls", "--help"},
                                                         {"status", "--help"},
                                                         {"ipam", "--help"},
                                                         {"ipam", "ls", "--help"}}) {
    auto r = Run(args);
    EXPECT_EQ(r.code, kExitOk) << args[0];
    EXPECT_NE(r.out.find("Usage:"), std::string::npos) << args[0];
  }
  EXPECT_NE(Run({"add", "--help"}).out.find("NETNS"), std::string::npos);
}

TEST_F(CliTest, VersionNamesTheProjectVersionAndRevision) {
  auto r = Run({"--version"});
  EXPECT_EQ(r.code, kExitOk);
  EXPECT_EQ(r.out, cni::VersionLine("netiface") + "\n");
}

TEST_F(CliTest, UsageErrorsExitTwo) {
  EXPECT_EQ(Run({}).code, kExitUsage);
  EXPECT_EQ(Run({"frobnicate"}).code, kExitUsage);
  EXPECT_EQ(Run({"add", "clinet"}).code, kExitUsage);
  EXPECT_EQ(Run({"del", "clinet"}).code, kExitUsage);
  EXPECT_EQ(Run({"add", "clinet", "/run/netns/x", "--args", "A"}).code, kExitUsage);
  EXPECT_EQ(Run({"add", "clinet", "/run/netns/x", "--cap-args", "[1]"}).code, kExitUsage);
  EXPECT_EQ(Run({"add", "clinet", "/run/netns/x", "--ifname", "way-too-long-name0"}).code, kExitUsage);
  EXPECT_EQ(Run({"add", "clinet", "/run/netns/x", "--container-id", "bad/id"}).code, kExitUsage);
  EXPECT_TRUE(fake_.Calls().empty());
}

TEST_F(CliTest, AddPrintsTheResultAndUsesTheEnvironment) {
  env_["CNI_IFNAME"] = "net1";
  env_["CNI_ARGS"] = "IgnoreUnknown=1";
  env_["CAP_ARGS"] = R"({"mac":"0a:00:00:00:00:07","ips":["10.1.0.9"]})";
  auto r = Run({"add", "clinet", "/run/netns/test"});
  ASSERT_EQ(r.code, kExitOk) << r.err;
  EXPECT_EQ(json::parse(r.out), testing::SampleResult("1.1.0", "10.1.0.3/24"));
  auto calls = fake_.Calls();
  ASSERT_EQ(calls.size(), 2u);
  EXPECT_EQ(calls[0].env.at("CNI_CONTAINERID"), "cnitool-8ae22670664f2caaa6b3");
  EXPECT_EQ(calls[0].env.at("CNI_IFNAME"), "net1");
  EXPECT_EQ(calls[0].env.at("CNI_ARGS"), "IgnoreUnknown=1");
  EXPECT_EQ(calls[0].env.at("CNI_NETNS"), "/run/netns/test");
  EXPECT_FALSE(calls[0].stdin_json.contains("runtimeConfig"));
  EXPECT_EQ(calls[1].stdin_json["runtimeConfig"], json({{"mac", "0a:00:00:00:00:07"}}));
  EXPECT_TRUE(cni::ResultCache(fake_.cache_dir()).Read("clinet", "cnitool-8ae22670664f2caaa6b3", "net1"));
}

TEST_F(CliTest, CapabilityFlagsReachRuntimeConfig) {
  auto r = Run({"add", "clinet", "/run/netns/test", "--mac", "0a:00:00:00:00:08", "-p", "8080:80"});
  ASSERT_EQ(r.code, kExitOk) << r.err;
  auto calls = fake_.Calls();
  ASSERT_EQ(calls.size(), 2u);
  // Only the capabilities a plugin declares reach it: the second one declares mac, neither portMappings.
  EXPECT_EQ(calls[1].stdin_json["runtimeConfig"], json({{"mac", "0a:00:00:00:00:08"}}));
  // The flags' arguments are cached with the attachment, so that DEL passes them again.
  auto cached = cni::ResultCache(fake_.cache_dir()).Read("clinet", "cnitool-8ae22670664f2caaa6b3", "eth0");
  ASSERT_TRUE(cached);
  EXPECT_EQ(cached->capability_args["portMappings"][0]["hostPort"], 8080);
}

TEST_F(CliTest, CapabilityFlagAndCapArgsOnOneKeyIsUsage) {
  env_["CAP_ARGS"] = R"({"mac":"0a:00:00:00:00:07"})";
  EXPECT_EQ(Run({"add", "clinet", "/run/netns/test", "--mac", "0a:00:00:00:00:08"}).code, kExitUsage);
  EXPECT_EQ(Run({"add", "clinet", "/run/netns/test", "-p", "80"}).code, kExitUsage);
  EXPECT_TRUE(fake_.Calls().empty());
}

TEST_F(CliTest, FlagsOverrideTheEnvironment) {
  env_["CNI_IFNAME"] = "net1";
  env_["NETCONFPATH"] = "/nonexistent";
  auto r = Run({"add", "clinet", "/run/netns/test", "-i", "eth3", "--conf-dir", fake_.conf_dir(), "--container-id",
                "mine", "--args", "A=1;B=2"});
  ASSERT_EQ(r.code, kExitOk) << r.err;
  auto calls = fake_.Calls();
  ASSERT_FALSE(calls.empty());
  EXPECT_EQ(calls[0].env.at("CNI_IFNAME"), "eth3");
  EXPECT_EQ(calls[0].env.at("CNI_CONTAINERID"), "mine");
  EXPECT_EQ(calls[0].env.at("CNI_ARGS"), "A=1;B=2");
}

TEST_F(CliTest, PluginFailureExitsOneWithCodeAndMessage) {
  fake_.Fail("plug-b", "ADD", 11, "busy, try again");
  auto r = Run({"add", "clinet", "/run/netns/test"});
  EXPECT_EQ(r.code, kExitPluginError);
  EXPECT_TRUE(r.out.empty());
  EXPECT_NE(r.err.find("plugin type=\"plug-b\" failed (add): busy, try again"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("(code 11)"), std::string::npos) << r.err;
}

TEST_F(CliTest, ConfigurationProblemsExitThree) {
  EXPECT_EQ(Run({"add", "nonet", "/run/netns/test"}).code, kExitConfig);
  fake_.WriteConf("20-missing.conflist", R"({"cniVersion":"1.0.0","name":"missing","plugins":[{"type":"nope"}]})");
  EXPECT_EQ(Run({"add", "missing", "/run/netns/test"}).code, kExitConfig);
  EXPECT_EQ(Run({"check", "clinet", "/run/netns/test"}).code, kExitConfig);  // CHECK before ADD
  fake_.WriteConf("30-old.conflist", R"({"cniVersion":"0.3.1","name":"old","plugins":[{"type":"plug-a"}]})");
  EXPECT_EQ(Run({"check", "old", "/run/netns/test"}).code, kExitConfig);
}

TEST_F(CliTest, AddCheckDelRoundTrip) {
  ASSERT_EQ(Run({"add", "clinet", "/run/netns/test"}).code, kExitOk);
  fake_.ClearCalls();
  auto check = Run({"check", "clinet", "/run/netns/test"});
  ASSERT_EQ(check.code, kExitOk) << check.err;
  EXPECT_TRUE(check.out.empty());
  EXPECT_EQ(fake_.Calls().size(), 2u);
  fake_.ClearCalls();
  ASSERT_EQ(Run({"del", "clinet", "/run/netns/test"}).code, kExitOk);
  auto calls = fake_.Calls();
  ASSERT_EQ(calls.size(), 2u);
  EXPECT_EQ(calls[0].type, "plug-b");
  EXPECT_TRUE(calls[0].stdin_json.contains("prevResult"));
  EXPECT_TRUE(testing::ListDir(fake_.cache_dir() + "/results").empty());
}

TEST_F(CliTest, DelWithoutNetnsNeedsAContainerId) {
  auto r = Run({"del", "clinet", "--container-id", "c9"});
  ASSERT_EQ(r.code, kExitOk) << r.err;
  auto calls = fake_.Calls();
  ASSERT_EQ(calls.size(), 2u);
  EXPECT_EQ(calls[0].env.at("CNI_NETNS"), "");
  EXPECT_EQ(calls[0].env.at("CNI_CONTAINERID"), "c9");
}

TEST_F(CliTest, GcKeepsTheNamedAttachments) {
  ASSERT_EQ(Run({"add", "clinet", "/run/netns/a"}).code, kExitOk);
  ASSERT_EQ(Run({"add", "clinet", "/run/netns/b"}).code, kExitOk);
  ASSERT_EQ(Run({"add", "clinet", "/run/netns/c", "--container-id", "c3", "-i", "net2"}).code, kExitOk);
  fake_.ClearCalls();
  auto r = Run({"gc", "clinet", "/run/netns/a", "--valid", "c3/net2"});
  ASSERT_EQ(r.code, kExitOk) << r.err;
  auto calls = fake_.Calls();
  ASSERT_EQ(calls.size(), 4u);  // DEL b (2 plugins), GC (2 plugins)
  EXPECT_EQ(calls[0].env.at("CNI_CONTAINERID"), ContainerIdFromNetns("/run/netns/b"));
  json valid = json::array({{{"containerID", ContainerIdFromNetns("/run/netns/a")}, {"ifname", "eth0"}},
                            {{"containerID", "c3"}, {"ifname", "net2"}}});
  EXPECT_EQ(calls[2].command, "GC");
  EXPECT_EQ(calls[2].stdin_json["cni.dev/valid-attachments"], valid);
  EXPECT_EQ(testing::ListDir(fake_.cache_dir() + "/results").size(), 2u);
}

// Issue 17, case 5: `gc NET` with nothing said about which attachments are valid used to DEL every
// cached attachment of the network, live ones included. It is refused now, and changes nothing.
TEST_F(CliTest, GcWithoutValidAttachmentsIsRefused) {
  ASSERT_EQ(Run({"add", "clinet", "/run/netns/a"}).code, kExitOk);
  ASSERT_EQ(Run({"add", "clinet", "/run/netns/b"}).code, kExitOk);
  fake_.ClearCalls();
  auto r = Run({"gc", "clinet"});
  EXPECT_EQ(r.code, kExitUsage) << r.err;
  EXPECT_NE(r.err.find("--all-stale"), std::string::npos) << r.err;
  EXPECT_TRUE(fake_.Calls().empty());
  EXPECT_EQ(testing::ListDir(fake_.cache_dir() + "/results").size(), 2u);

  // Said explicitly, every cached attachment is stale, and the plugins keep nothing.
  r = Run({"gc", "clinet", "--all-stale"});
  ASSERT_EQ(r.code, kExitOk) << r.err;
  auto calls = fake_.Calls();
  ASSERT_EQ(calls.size(), 6u);  // DEL a and b (2 plugins each), GC (2 plugins)
  EXPECT_EQ(calls[4].command, "GC");
  EXPECT_EQ(calls[4].stdin_json["cni.dev/valid-attachments"], json::array());
  EXPECT_TRUE(testing::ListDir(fake_.cache_dir() + "/results").empty());
}

// An entry written by an older libcni records no netns: nothing tells whether it is live, so it is
// never DELeted as stale unless --all-stale says so, and the plugins' GC keeps what it holds.
TEST_F(CliTest, GcKeepsAnAttachmentWhoseNetnsIsUnknown) {
  cni::CacheEntry old;
  old.container_id = "old1";
  old.ifname = "eth0";
  old.network_name = "clinet";
  old.config = R"({"cniVersion":"1.1.0","name":"clinet","plugins":[{"type":"plug-a"},{"type":"plug-b"}]})";
  old.result = testing::SampleResult("1.1.0", "10.1.0.9/24");
  cni::ResultCache(fake_.cache_dir()).Write(old);
  ASSERT_EQ(Run({"add", "clinet", "/run/netns/gone"}).code, kExitOk);
  fake_.ClearCalls();

  auto r = Run({"gc", "clinet", "--valid", "other"});
  ASSERT_EQ(r.code, kExitOk) << r.err;
  auto calls = fake_.Calls();
  ASSERT_EQ(calls.size(), 4u);  // DEL of the gone netns' attachment, then GC
  EXPECT_EQ(calls[0].command, "DEL");
  EXPECT_EQ(calls[0].env.at("CNI_CONTAINERID"), ContainerIdFromNetns("/run/netns/gone"));
  EXPECT_EQ(calls[2].command, "GC");
  json valid =
      json::array({{{"containerID", "other"}, {"ifname", "eth0"}}, {{"containerID", "old1"}, {"ifname", "eth0"}}});
  EXPECT_EQ(calls[2].stdin_json["cni.dev/valid-attachments"], valid);
  EXPECT_EQ(testing::ListDir(fake_.cache_dir() + "/results"), std::vector<std::string>{"clinet-old1-eth0"});

  fake_.ClearCalls();
  r = Run({"gc", "clinet", "--valid", "other", "--all-stale"});
  ASSERT_EQ(r.code, kExitOk) << r.err;
  calls = fake_.Calls();
  ASSERT_EQ(calls.size(), 4u);
  EXPECT_EQ(calls[0].env.at("CNI_CONTAINERID"), "old1");
  EXPECT_EQ(calls[0].env.at("CNI_NETNS"), "");
  EXPECT_TRUE(testing::ListDir(fake_.cache_dir() + "/results").empty());
}

// --live: an attachment whose cached netns path still exists is valid; --valid-file adds a list;
// --dry-run says what would happen and calls nothing.
TEST_F(CliTest, GcLiveValidFileAndDryRun) {
  testing::TempDir ns;
  testing::WriteFile(ns / "live", "");
  ASSERT_EQ(Run({"add", "clinet", ns / "live"}).code, kExitOk);
  ASSERT_EQ(Run({"add", "clinet", ns / "gone"}).code, kExitOk);
  ASSERT_EQ(Run({"add", "clinet", ns / "listed", "--container-id", "listed"}).code, kExitOk);
  testing::WriteFile(ns / "valid.txt", "# from the runtime\nlisted\n\nextra/net1\n");
  fake_.ClearCalls();

  auto dry = Run({"gc", "clinet", "--live", "--valid-file", ns / "valid.txt", "--dry-run"});
  ASSERT_EQ(dry.code, kExitOk) << dry.err;
  EXPECT_TRUE(fake_.Calls().empty());
  EXPECT_EQ(testing::ListDir(fake_.cache_dir() + "/results").size(), 3u);
  const std::string gone_id = ContainerIdFromNetns(ns / "gone"), live_id = ContainerIdFromNetns(ns / "live");
  std::istringstream lines(dry.out);
  std::vector<std::string> rows;
  for (std::string l; std::getline(lines, l);) rows.push_back(l);
  ASSERT_GE(rows.size(), 4u) << dry.out;
  auto row_of = [&](const std::string& id) {
    for (const auto& l : rows) {
      if (l.find(id) != std::string::npos) return l;
    }
    return std::string();
  };
  EXPECT_EQ(row_of(gone_id).rfind("del", 0), 0u) << dry.out;
  EXPECT_EQ(row_of(live_id).rfind("keep", 0), 0u) << dry.out;
  EXPECT_EQ(row_of("listed").rfind("keep", 0), 0u) << dry.out;

  auto r = Run({"gc", "clinet", "--live", "--valid-file", ns / "valid.txt"});
  ASSERT_EQ(r.code, kExitOk) << r.err;
  auto calls = fake_.Calls();
  ASSERT_EQ(calls.size(), 4u);
  EXPECT_EQ(calls[0].env.at("CNI_CONTAINERID"), gone_id);
  json valid = json::array({{{"containerID", "listed"}, {"ifname", "eth0"}},
                            {{"containerID", "extra"}, {"ifname", "net1"}},
                            {{"containerID", live_id}, {"ifname", "eth0"}}});
  EXPECT_EQ(calls[2].stdin_json["cni.dev/valid-attachments"], valid);
  EXPECT_EQ(testing::ListDir(fake_.cache_dir() + "/results").size(), 2u);

  EXPECT_EQ(Run({"gc", "clinet", "--valid-file", ns / "missing.txt"}).code, kExitUsage);
  testing::WriteFile(ns / "bad.txt", "a/b/c\n");
  EXPECT_EQ(Run({"gc", "clinet", "--valid-file", ns / "bad.txt"}).code, kExitUsage);
}

TEST_F(CliTest, LsListsTheCachedAttachments) {
  ASSERT_EQ(Run({"add", "clinet", "/run/netns/a"}).code, kExitOk);
  cni::CacheEntry old;
  old.container_id = "old1";
  old.ifname = "eth0";
  old.network_name = "othernet";
  old.config = "{}";
  cni::ResultCache(fake_.cache_dir()).Write(old);

  auto table = Run({"ls", "--cache-dir", fake_.cache_dir()});
  ASSERT_EQ(table.code, kExitOk) << table.err;
  std::istringstream lines(table.out);
  std::vector<std::string> rows;
  for (std::string l; std::getline(lines, l);) rows.push_back(l);
  ASSERT_EQ(rows.size(), 3u) << table.out;
  EXPECT_EQ(rows[0].rfind("NETWORK", 0), 0u);
  EXPECT_NE(rows[1].find(ContainerIdFromNetns("/run/netns/a")), std::string::npos);
  EXPECT_NE(rows[1].find("/run/netns/a"), std::string::npos);
  EXPECT_NE(rows[1].find("10.1.0.3/24"), std::string::npos);  // the final result's address
  EXPECT_EQ(rows[2].rfind("othernet", 0), 0u);

  auto j = Run({"ls", "clinet", "--cache-dir", fake_.cache_dir(), "--json"});
  ASSERT_EQ(j.code, kExitOk) << j.err;
  json parsed = json::parse(j.out);
  ASSERT_EQ(parsed.size(), 1u);
  EXPECT_EQ(parsed[0], json({{"network", "clinet"},
                             {"containerId", ContainerIdFromNetns("/run/netns/a")},
                             {"ifname", "eth0"},
                             {"netns", "/run/netns/a"},
                             {"addresses", {"10.1.0.3/24"}}}));
  auto other = Run({"ls", "othernet", "--cache-dir", fake_.cache_dir(), "--json"});
  EXPECT_EQ(json::parse(other.out)[0]["netns"], "");
}

TEST_F(CliTest, StatusReportsThePluginsCode) {
  EXPECT_EQ(Run({"status", "clinet"}).code, kExitOk);
  fake_.Fail("plug-a", "STATUS", 50, "no addresses left");
  auto r = Run({"status", "clinet"});
  EXPECT_EQ(r.code, kExitPluginError);
  EXPECT_NE(r.err.find("no addresses left"), std::string::npos);
  EXPECT_NE(r.err.find("(code 50)"), std::string::npos);
}

TEST_F(CliTest, IpamLsTableAndJson) {
  testing::TempDir data;
  std::filesystem::create_directories(data / "netb");
  std::filesystem::create_directories(data / "neta");
  testing::WriteFile(data / "netb/10.0.0.10", "cid-10\r\neth1");
  testing::WriteFile(data / "netb/10.0.0.2", "cid-2\r\neth0");
  testing::WriteFile(data / "netb/10.0.0.3", "legacy-cid\n");
  testing::WriteFile(data / "netb/fd00::2", "cid-6\r\neth0");
  testing::WriteFile(data / "netb/lock", "");
  testing::WriteFile(data / "netb/last_reserved_ip.0", "10.0.0.10");
  testing::WriteFile(data / "netb/.index", "x");
  testing::WriteFile(data / "neta/192.168.1.5", "cid-a\r\neth0");

  auto all = Run({"ipam", "ls", "--data-dir", data.path()});
  ASSERT_EQ(all.code, kExitOk) << all.err;
  std::istringstream lines(all.out);
  std::vector<std::string> rows;
  for (std::string l; std::getline(lines, l);) rows.push_back(l);
  ASSERT_EQ(rows.size(), 6u) << all.out;
  EXPECT_EQ(rows[0].rfind("NETWORK", 0), 0u);
  EXPECT_NE(rows[1].find("192.168.1.5"), std::string::npos);
  EXPECT_NE(rows[2].find("10.0.0.2 "), std::string::npos);
  EXPECT_NE(rows[3].find("legacy-cid"), std::string::npos);
  EXPECT_NE(rows[4].find("10.0.0.10"), std::string::npos);
  EXPECT_NE(rows[5].find("fd00::2"), std::string::npos);

  auto j = Run({"ipam", "ls", "netb", "--data-dir", data.path(), "--json"});
  ASSERT_EQ(j.code, kExitOk);
  json parsed = json::parse(j.out)["reservations"];
  ASSERT_EQ(parsed.size(), 4u);
  EXPECT_EQ(parsed[0],
            json({{"network", "netb"}, {"address", "10.0.0.2"}, {"containerId", "cid-2"}, {"ifname", "eth0"}}));
  EXPECT_EQ(parsed[1]["ifname"], "");
  EXPECT_EQ(parsed[1]["containerId"], "legacy-cid");

  auto none = Run({"ipam", "ls", "nosuch", "--data-dir", data.path(), "--json"});
  EXPECT_EQ(none.code, kExitOk);
  EXPECT_EQ(json::parse(none.out), (json{{"reservations", json::array()}, {"ranges", json::array()}}));
}

}  // namespace
}  // namespace netiface::cli
