// The pure half of the runtime: plugin stdin, environment, result conversion, conflist loading.
#include <gtest/gtest.h>

#include "fake_plugins.h"
#include "netiface/cni/error.h"
#include "netiface/cni/runtime/runtime.h"
#include "testutil.h"

namespace netiface::cni {
namespace {

using nlohmann::json;

TEST(BuildPluginConfigTest, InjectsOnlyDeclaredAndSuppliedCapabilities) {
  json plugin = {{"type", "portmap"},
                 {"capabilities", {{"portMappings", true}, {"bandwidth", false}, {"ips", true}}},
                 {"snat", true}};
  json caps = {{"portMappings", json::array({{{"hostPort", 8080}, {"containerPort", 80}}})},
               {"bandwidth", {{"ingressRate", 1000}}},
               {"mac", "0a:00:00:00:00:01"}};
  json conf = BuildPluginConfig(plugin, "net1", "1.0.0", nullptr, caps);
  EXPECT_EQ(conf["runtimeConfig"], json({{"portMappings", caps["portMappings"]}}));
  EXPECT_FALSE(conf.contains("capabilities"));
  EXPECT_EQ(conf["name"], "net1");
  EXPECT_EQ(conf["cniVersion"], "1.0.0");
  EXPECT_EQ(conf["snat"], true);
  EXPECT_FALSE(conf.contains("prevResult"));
}

TEST(BuildPluginConfigTest, NoMatchingCapabilityKeepsThePluginsOwnRuntimeConfig) {
  json plugin = {{"type", "x"}, {"runtimeConfig", {{"mine", 1}}}, {"capabilities", {{"ips", true}}}};
  json conf = BuildPluginConfig(plugin, "n", "0.4.0", nullptr, {{"mac", "x"}});
  EXPECT_EQ(conf["runtimeConfig"], json({{"mine", 1}}));
  json without = BuildPluginConfig({{"type", "x"}}, "n", "0.4.0", nullptr, {{"mac", "x"}});
  EXPECT_FALSE(without.contains("runtimeConfig"));
}

TEST(BuildPluginConfigTest, OverridesNameAndVersionAndAddsPrevResult) {
  json plugin = {{"type", "x"}, {"name", "other"}, {"cniVersion", "0.3.1"}};
  json prev = testing::SampleResult("1.1.0", "10.0.0.2/24");
  json conf = BuildPluginConfig(plugin, "n", "1.1.0", prev, json::object());
  EXPECT_EQ(conf["name"], "n");
  EXPECT_EQ(conf["cniVersion"], "1.1.0");
  EXPECT_EQ(conf["prevResult"], prev);
}

TEST(BuildPluginEnvTest, ReplacesInheritedCniVariables) {
  RuntimeConf rt;
  rt.container_id = "c1";
  rt.netns = "/run/netns/p";
  rt.ifname = "net1";
  rt.args = {{"IgnoreUnknown", "1"}, {"K8S_POD_NAME", "a"}};
  auto env = BuildPluginEnv("ADD", rt, "/a:/b", {{"PATH", "/bin"}, {"CNI_IFNAME", "stale"}, {"CNI_FOO", "x"}});
  EXPECT_EQ(env, (std::map<std::string, std::string>{{"PATH", "/bin"},
                                                     {"CNI_COMMAND", "ADD"},
                                                     {"CNI_CONTAINERID", "c1"},
                                                     {"CNI_NETNS", "/run/netns/p"},
                                                     {"CNI_IFNAME", "net1"},
                                                     {"CNI_ARGS", "IgnoreUnknown=1;K8S_POD_NAME=a"},
                                                     {"CNI_PATH", "/a:/b"}}));
  auto gc = BuildPluginEnv("GC", rt, "/a", {});
  EXPECT_EQ(gc["CNI_CONTAINERID"], "");
  EXPECT_EQ(gc["CNI_NETNS"], "");
  EXPECT_EQ(gc["CNI_IFNAME"], "");
  EXPECT_EQ(gc["CNI_ARGS"], "");
}

TEST(ArgPairsTest, ParsesLikeCnitool) {
  EXPECT_TRUE(ParseArgPairs("").empty());
  EXPECT_EQ(ParseArgPairs("A=1;B=two"), (ArgPairs{{"A", "1"}, {"B", "two"}}));
  for (const char* bad : {"A", "=1", "A=", "A=1;", "A=1=2", ";A=1"}) {
    EXPECT_THROW(ParseArgPairs(bad), Error) << bad;
  }
  EXPECT_EQ(JoinArgPairs({{"A", "1"}, {"B", "2"}}), "A=1;B=2");
}

TEST(ConvertResultTest, SameVersionPassesThroughUnchanged) {
  json r = testing::SampleResult("1.0.0", "10.0.0.2/24");
  r["x-extra"] = "kept";
  EXPECT_EQ(ConvertResult(r, "1.0.0"), r);
}

TEST(ConvertResultTest, ConvertsToTheListVersion) {
  json r031 = testing::SampleResult("0.3.1", "10.0.0.2/24");
  json r100 = ConvertResult(r031, "1.0.0");
  EXPECT_EQ(r100["cniVersion"], "1.0.0");
  EXPECT_FALSE(r100["ips"][0].contains("version"));
  EXPECT_EQ(r100, testing::SampleResult("1.0.0", "10.0.0.2/24"));
  json r020 = ConvertResult(r031, "0.2.0");
  EXPECT_EQ(r020["ip4"]["ip"], "10.0.0.2/24");
}

TEST(ConvertResultTest, AResultWithoutVersionIsTakenAsTheListVersion) {
  json r = testing::SampleResult("0.4.0", "10.0.0.2/24");
  r.erase("cniVersion");
  EXPECT_EQ(ConvertResult(r, "0.4.0")["cniVersion"], "0.4.0");
}

TEST(StaleAttachmentsTest, KeepsValidAndOtherNetworks) {
  auto entry = [](std::string net, std::string cid, std::string ifname) {
    CacheEntry e;
    e.network_name = std::move(net);
    e.container_id = std::move(cid);
    e.ifname = std::move(ifname);
    return e;
  };
  std::vector<CacheEntry> cached = {entry("n", "a", "eth0"), entry("n", "a", "eth1"), entry("n", "b", "eth0"),
                                    entry("m", "c", "eth0")};
  auto stale = StaleAttachments(cached, "n", {{"a", "eth0"}});
  ASSERT_EQ(stale.size(), 2u);
  EXPECT_EQ(stale[0].ifname, "eth1");
  EXPECT_EQ(stale[1].container_id, "b");
}

class LoadConfTest : public ::testing::Test {
 protected:
  testing::FakePlugins fake_;
};

TEST_F(LoadConfTest, ConflistWinsOverConfOfTheSameName) {
  fake_.WriteConf("10-a.conf", R"({"cniVersion":"0.4.0","name":"net","type":"from-conf"})");
  fake_.WriteConf("20-b.conflist", R"({"cniVersion":"1.0.0","name":"net","plugins":[{"type":"from-list"}]})");
  auto l = LoadNetworkConfigList(fake_.conf_dir(), "net");
  EXPECT_EQ(l.conf.plugins.at(0)["type"], "from-list");
  EXPECT_EQ(l.bytes, R"({"cniVersion":"1.0.0","name":"net","plugins":[{"type":"from-list"}]})");
}

TEST_F(LoadConfTest, SingleConfIsWrappedAsGoWouldMarshalIt) {
  fake_.WriteConf("10-a.json", R"({"type":"bridge","name":"single","cniVersion":"0.3.1","x":"<&>"})");
  auto l = LoadNetworkConfigList(fake_.conf_dir(), "single");
  EXPECT_EQ(l.conf.cni_version, "0.3.1");
  ASSERT_EQ(l.conf.plugins.size(), 1u);
  EXPECT_EQ(l.bytes, R"({"cniVersion":"0.3.1","name":"single","plugins":[{"cniVersion":"0.3.1","name":"single",)"
                     R"("type":"bridge","x":"\u003c\u0026\u003e"}]})");
}

TEST_F(LoadConfTest, PicksTheHighestSupportedVersion) {
  fake_.WriteConf(
      "a.conflist",
      R"({"cniVersion":"0.4.0","cniVersions":["1.0.0","1.1.0","9.0.0"],"name":"v","plugins":[{"type":"x"}]})");
  EXPECT_EQ(LoadNetworkConfigList(fake_.conf_dir(), "v").conf.cni_version, "1.1.0");
}

TEST_F(LoadConfTest, SkipsFilesThatAreNotJsonButReportsAMatchingInvalidOne) {
  fake_.WriteConf("00-junk.conflist", "not json");
  fake_.WriteConf("10-ok.conflist", R"({"cniVersion":"1.0.0","name":"ok","plugins":[{"type":"x"}]})");
  fake_.WriteConf("20-bad.conflist", R"({"cniVersion":"1.0.0","name":"bad","plugins":[]})");
  EXPECT_EQ(LoadNetworkConfigList(fake_.conf_dir(), "ok").conf.name, "ok");
  try {
    LoadNetworkConfigList(fake_.conf_dir(), "bad");
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), kInvalidConfig);
    EXPECT_NE(std::string(e.what()).find("20-bad.conflist"), std::string::npos) << e.what();
  }
}

TEST_F(LoadConfTest, UnknownNameIsInvalidConfig) {
  try {
    LoadNetworkConfigList(fake_.conf_dir(), "nope");
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), kInvalidConfig);
    EXPECT_NE(e.msg().find("no net configuration with name \"nope\""), std::string::npos);
  }
}

}  // namespace
}  // namespace netiface::cni
