// The runtime against fake plugins (/bin/sh scripts that record their calls): chaining, caching,
// reverse DEL, rollback, CHECK, GC and STATUS semantics, over every applicable spec version.
#include "netiface/cni/runtime/runtime.h"

#include <gtest/gtest.h>

#include "fake_plugins.h"
#include "netiface/cni/error.h"
#include "testutil.h"

namespace netiface::cni {
namespace {

using nlohmann::json;
using testing::FakeCall;
using testing::SampleResult;

class RuntimeTest : public ::testing::Test {
 protected:
  RuntimeTest() {
    for (const char* t : {"plug-a", "plug-b", "plug-c"}) fake_.Add(t);
    rt_.container_id = "ctr1";
    rt_.netns = "/run/netns/pod1";
    rt_.ifname = "eth0";
  }

  Runtime MakeRuntime() {
    RuntimeOptions o;
    o.cni_path = "/nonexistent:" + fake_.bin_dir();
    o.cache_dir = fake_.cache_dir();
    o.base_env = {{"PATH", "/usr/bin:/bin"}};
    return Runtime(o);
  }

  static NetworkConfigList List(const std::string& version, json plugins, json extra = json::object()) {
    json l = {{"cniVersion", version}, {"name", "testnet"}, {"plugins", std::move(plugins)}};
    l.update(extra);
    return NetworkConfigListFromBytes(l.dump());
  }
  static json Chain() { return json::array({{{"type", "plug-a"}}, {{"type", "plug-b"}}, {{"type", "plug-c"}}}); }

  // The results of plug-a/b/c at `version`: distinct addresses so that threading is visible.
  void SetResults(const std::string& version) {
    fake_.SetResult("plug-a", SampleResult(version, "10.0.0.2/24"));
    fake_.SetResult("plug-b", SampleResult(version, "10.0.0.3/24"));
    fake_.SetResult("plug-c", SampleResult(version, "10.0.0.4/24"));
  }

  static std::vector<std::string> Sequence(const std::vector<FakeCall>& calls) {
    std::vector<std::string> out;
    for (const auto& c : calls) out.push_back(c.command + " " + c.type);
    return out;
  }

  testing::FakePlugins fake_;
  RuntimeConf rt_;
};

TEST_F(RuntimeTest, AddThreadsEachResultIntoTheNextPluginAtEveryVersion) {
  int n = 0;
  for (const auto& v : testing::AllVersions()) {
    SCOPED_TRACE(v);
    fake_.ClearCalls();
    SetResults(v);
    Runtime runtime = MakeRuntime();
    rt_.container_id = "ctr-" + std::to_string(n++);
    json result = runtime.AddNetworkList(List(v, Chain()), rt_);
    EXPECT_EQ(result, SampleResult(v, "10.0.0.4/24"));
    auto calls = fake_.Calls();
    ASSERT_EQ(Sequence(calls), (std::vector<std::string>{"ADD plug-a", "ADD plug-b", "ADD plug-c"}));
    EXPECT_FALSE(calls[0].stdin_json.contains("prevResult"));
    EXPECT_EQ(calls[1].stdin_json["prevResult"], SampleResult(v, "10.0.0.2/24"));
    EXPECT_EQ(calls[2].stdin_json["prevResult"], SampleResult(v, "10.0.0.3/24"));
    for (const auto& c : calls) {
      EXPECT_EQ(c.stdin_json["cniVersion"], v);
      EXPECT_EQ(c.stdin_json["name"], "testnet");
      EXPECT_EQ(c.env.at("CNI_COMMAND"), "ADD");
      EXPECT_EQ(c.env.at("CNI_CONTAINERID"), rt_.container_id);
      EXPECT_EQ(c.env.at("CNI_NETNS"), "/run/netns/pod1");
      EXPECT_EQ(c.env.at("CNI_IFNAME"), "eth0");
      EXPECT_EQ(c.env.at("CNI_PATH"), "/nonexistent:" + fake_.bin_dir());
    }
  }
}

TEST_F(RuntimeTest, APreviousResultOfAnotherVersionIsConvertedToTheListVersion) {
  fake_.SetResult("plug-a", SampleResult("0.3.1", "10.0.0.2/24"));
  fake_.SetResult("plug-b", SampleResult("1.0.0", "10.0.0.3/24"));
  Runtime runtime = MakeRuntime();
  runtime.AddNetworkList(List("1.0.0", json::array({{{"type", "plug-a"}}, {{"type", "plug-b"}}})), rt_);
  auto calls = fake_.Calls();
  ASSERT_EQ(calls.size(), 2u);
  EXPECT_EQ(calls[1].stdin_json["prevResult"], SampleResult("1.0.0", "10.0.0.2/24"));
}

TEST_F(RuntimeTest, CapabilityArgumentsReachOnlyPluginsThatDeclareThem) {
  SetResults("1.0.0");
  rt_.capability_args = {{"portMappings", json::array({{{"hostPort", 80}}})}, {"mac", "0a:00:00:00:00:09"}};
  rt_.args = {{"IgnoreUnknown", "1"}, {"K8S_POD_NAME", "p"}};
  json plugins = json::array({{{"type", "plug-a"}, {"capabilities", {{"mac", true}, {"portMappings", false}}}},
                              {{"type", "plug-b"}},
                              {{"type", "plug-c"}, {"capabilities", {{"portMappings", true}, {"ips", true}}}}});
  Runtime runtime = MakeRuntime();
  runtime.AddNetworkList(List("1.0.0", plugins), rt_);
  auto calls = fake_.Calls();
  ASSERT_EQ(calls.size(), 3u);
  EXPECT_EQ(calls[0].stdin_json["runtimeConfig"], json({{"mac", "0a:00:00:00:00:09"}}));
  EXPECT_FALSE(calls[1].stdin_json.contains("runtimeConfig"));
  EXPECT_EQ(calls[2].stdin_json["runtimeConfig"], json({{"portMappings", rt_.capability_args["portMappings"]}}));
  for (const auto& c : calls) {
    EXPECT_FALSE(c.stdin_json.contains("capabilities"));
    EXPECT_EQ(c.env.at("CNI_ARGS"), "IgnoreUnknown=1;K8S_POD_NAME=p");
  }
}

TEST_F(RuntimeTest, AddCachesTheFinalResultWithTheListBytes) {
  SetResults("1.1.0");
  rt_.args = {{"IgnoreUnknown", "1"}};
  rt_.capability_args = {{"mac", "x"}};
  NetworkConfigList list = List("1.1.0", Chain());
  Runtime runtime = MakeRuntime();
  json result = runtime.AddNetworkList(list, rt_);
  auto entry = runtime.cache().Read("testnet", "ctr1", "eth0");
  ASSERT_TRUE(entry);
  EXPECT_EQ(entry->config, list.bytes);
  EXPECT_EQ(entry->result, result);
  EXPECT_EQ(entry->netns, "/run/netns/pod1");
  EXPECT_EQ(entry->cni_args, rt_.args);
  EXPECT_EQ(entry->capability_args, rt_.capability_args);
  EXPECT_EQ(testing::ListDir(fake_.cache_dir() + "/results"), std::vector<std::string>{"testnet-ctr1-eth0"});
}

TEST_F(RuntimeTest, MissingPluginFailsBeforeAnyCall) {
  SetResults("1.0.0");
  Runtime runtime = MakeRuntime();
  json plugins = json::array({{{"type", "plug-a"}}, {{"type", "not-there"}}});
  try {
    runtime.AddNetworkList(List("1.0.0", plugins), rt_);
    FAIL() << "no error";
  } catch (const PluginError&) {
    FAIL() << "a missing plugin is a configuration error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), kInvalidConfig);
  }
  EXPECT_TRUE(fake_.Calls().empty());
}

TEST_F(RuntimeTest, FailedAddDeletesWhatWasAddedNewestFirst) {
  for (const auto& v : testing::AllVersions()) {
    SCOPED_TRACE(v);
    fake_.ClearCalls();
    SetResults(v);
    fake_.Fail("plug-b", "ADD", 11, "try later");
    Runtime runtime = MakeRuntime();
    try {
      runtime.AddNetworkList(List(v, Chain()), rt_);
      FAIL() << "no error";
    } catch (const PluginError& e) {
      EXPECT_EQ(e.code(), 11);
      EXPECT_EQ(e.type(), "plug-b");
      EXPECT_NE(std::string(e.what()).find("plugin type=\"plug-b\" failed (add): try later"), std::string::npos);
    }
    auto calls = fake_.Calls();
    ASSERT_EQ(Sequence(calls), (std::vector<std::string>{"ADD plug-a", "ADD plug-b", "DEL plug-b", "DEL plug-a"}));
    if (VersionAtLeast(v, "0.4.0")) {
      EXPECT_EQ(calls[2].stdin_json["prevResult"], SampleResult(v, "10.0.0.2/24"));
    } else {
      EXPECT_FALSE(calls[2].stdin_json.contains("prevResult"));
    }
    EXPECT_TRUE(testing::ListDir(fake_.cache_dir() + "/results").empty());
  }
}

TEST_F(RuntimeTest, DelRunsInReverseWithTheCachedResultAtEveryVersion) {
  for (const auto& v : testing::AllVersions()) {
    SCOPED_TRACE(v);
    fake_.ClearCalls();
    SetResults(v);
    Runtime runtime = MakeRuntime();
    auto list = List(v, Chain());
    json result = runtime.AddNetworkList(list, rt_);
    fake_.ClearCalls();
    runtime.DelNetworkList(list, rt_);
    auto calls = fake_.Calls();
    ASSERT_EQ(Sequence(calls), (std::vector<std::string>{"DEL plug-c", "DEL plug-b", "DEL plug-a"}));
    for (const auto& c : calls) {
      if (VersionAtLeast(v, "0.4.0")) {
        EXPECT_EQ(c.stdin_json["prevResult"], result);
      } else {
        EXPECT_FALSE(c.stdin_json.contains("prevResult"));
      }
    }
    EXPECT_FALSE(runtime.cache().Read("testnet", "ctr1", "eth0"));
    // Idempotent: a second DEL runs every plugin again, without prevResult.
    fake_.ClearCalls();
    runtime.DelNetworkList(list, rt_);
    calls = fake_.Calls();
    ASSERT_EQ(calls.size(), 3u);
    EXPECT_FALSE(calls[0].stdin_json.contains("prevResult"));
  }
}

TEST_F(RuntimeTest, DelWithoutNetnsStillCallsEveryPlugin) {
  Runtime runtime = MakeRuntime();
  rt_.netns.clear();
  runtime.DelNetworkList(List("1.0.0", Chain()), rt_);
  auto calls = fake_.Calls();
  ASSERT_EQ(calls.size(), 3u);
  EXPECT_EQ(calls[0].env.at("CNI_NETNS"), "");
}

TEST_F(RuntimeTest, DelReportsEveryFailureAndKeepsTheCacheEntry) {
  SetResults("1.0.0");
  Runtime runtime = MakeRuntime();
  auto list = List("1.0.0", Chain());
  runtime.AddNetworkList(list, rt_);
  fake_.ClearCalls();
  fake_.Fail("plug-c", "DEL", 5, "disk gone");
  fake_.Fail("plug-a", "DEL", 7, "bad conf");
  try {
    runtime.DelNetworkList(list, rt_);
    FAIL() << "no error";
  } catch (const PluginError& e) {
    EXPECT_EQ(e.code(), 5);
    std::string what = e.what();
    EXPECT_NE(what.find("plugin type=\"plug-c\" failed (delete): disk gone"), std::string::npos) << what;
    EXPECT_NE(what.find("plugin type=\"plug-a\" failed (delete): bad conf"), std::string::npos) << what;
  }
  EXPECT_EQ(Sequence(fake_.Calls()), (std::vector<std::string>{"DEL plug-c", "DEL plug-b", "DEL plug-a"}));
  EXPECT_TRUE(runtime.cache().Read("testnet", "ctr1", "eth0"));
}

TEST_F(RuntimeTest, CheckUsesTheCachedResultInOrder) {
  for (const auto& v : testing::VersionsFrom("0.4.0")) {
    SCOPED_TRACE(v);
    fake_.ClearCalls();
    SetResults(v);
    Runtime runtime = MakeRuntime();
    auto list = List(v, Chain());
    json result = runtime.AddNetworkList(list, rt_);
    fake_.ClearCalls();
    runtime.CheckNetworkList(list, rt_);
    auto calls = fake_.Calls();
    ASSERT_EQ(Sequence(calls), (std::vector<std::string>{"CHECK plug-a", "CHECK plug-b", "CHECK plug-c"}));
    for (const auto& c : calls) EXPECT_EQ(c.stdin_json["prevResult"], result);
    fake_.Fail("plug-b", "CHECK", 100, "link missing");
    fake_.ClearCalls();
    EXPECT_THROW(runtime.CheckNetworkList(list, rt_), PluginError);
    EXPECT_EQ(fake_.Calls().size(), 2u);
    fake_.Unfail("plug-b", "CHECK");
    runtime.DelNetworkList(list, rt_);
  }
}

TEST_F(RuntimeTest, CheckIsRefusedBefore040AndWithoutAnAdd) {
  Runtime runtime = MakeRuntime();
  for (const auto& v : {"0.1.0", "0.2.0", "0.3.0", "0.3.1"}) {
    try {
      runtime.CheckNetworkList(List(v, Chain()), rt_);
      FAIL() << v;
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), kIncompatibleVersion) << v;
    }
  }
  try {
    runtime.CheckNetworkList(List("1.0.0", Chain()), rt_);
    FAIL() << "CHECK without ADD";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), kUnknownContainer);
  }
  EXPECT_TRUE(fake_.Calls().empty());
}

TEST_F(RuntimeTest, DisableCheckSkipsEveryPlugin) {
  SetResults("1.0.0");
  Runtime runtime = MakeRuntime();
  auto list = List("1.0.0", Chain(), {{"disableCheck", true}});
  runtime.AddNetworkList(list, rt_);
  fake_.ClearCalls();
  runtime.CheckNetworkList(list, rt_);
  EXPECT_TRUE(fake_.Calls().empty());
}

TEST_F(RuntimeTest, GcDeletesStaleCachedAttachmentsThenSendsTheValidList) {
  SetResults("1.1.0");
  Runtime runtime = MakeRuntime();
  auto list = List("1.1.0", json::array({{{"type", "plug-a"}}, {{"type", "plug-b"}}}));
  auto other = NetworkConfigListFromBytes(R"({"cniVersion":"1.1.0","name":"othernet","plugins":[{"type":"plug-c"}]})");
  for (const char* cid : {"keep", "stale"}) {
    RuntimeConf rt = rt_;
    rt.container_id = cid;
    rt.netns = std::string("/run/netns/") + cid;
    rt.args = {{"K", cid}};
    runtime.AddNetworkList(list, rt);
  }
  RuntimeConf rt_other = rt_;
  rt_other.container_id = "stale";
  runtime.AddNetworkList(other, rt_other);
  fake_.ClearCalls();

  runtime.GcNetworkList(list, std::vector<Attachment>{{"keep", "eth0"}});
  auto calls = fake_.Calls();
  ASSERT_EQ(Sequence(calls), (std::vector<std::string>{"DEL plug-b", "DEL plug-a", "GC plug-a", "GC plug-b"}));
  EXPECT_EQ(calls[0].env.at("CNI_CONTAINERID"), "stale");
  EXPECT_EQ(calls[0].env.at("CNI_NETNS"), "/run/netns/stale");
  EXPECT_EQ(calls[0].env.at("CNI_ARGS"), "K=stale");
  json valid = json::array({{{"containerID", "keep"}, {"ifname", "eth0"}}});
  for (size_t i = 2; i < 4; ++i) {
    EXPECT_EQ(calls[i].stdin_json["cni.dev/valid-attachments"], valid);
    EXPECT_EQ(calls[i].stdin_json["cni.dev/attachments"], valid);
    EXPECT_EQ(calls[i].stdin_json["cniVersion"], "1.1.0");
    EXPECT_EQ(calls[i].env.at("CNI_CONTAINERID"), "");
  }
  EXPECT_TRUE(runtime.cache().Read("testnet", "keep", "eth0"));
  EXPECT_FALSE(runtime.cache().Read("testnet", "stale", "eth0"));
  EXPECT_TRUE(runtime.cache().Read("othernet", "stale", "eth0"));
}

// The operator's GC: exactly the given stale attachments are DELeted; whatever the cache still holds for
// the network afterwards (one whose DEL failed, one nobody named) is valid for the plugins.
TEST_F(RuntimeTest, GcAttachmentsDeletesOnlyTheStaleAndKeepsWhatIsCached) {
  SetResults("1.1.0");
  Runtime runtime = MakeRuntime();
  auto list = List("1.1.0", json::array({{{"type", "plug-a"}}}));
  for (const char* cid : {"stale", "failing", "unnamed"}) {
    RuntimeConf rt = rt_;
    rt.container_id = cid;
    runtime.AddNetworkList(list, rt);
  }
  std::vector<CacheEntry> stale;
  for (const char* cid : {"stale", "failing"}) stale.push_back(*runtime.cache().Read("testnet", cid, "eth0"));
  fake_.ClearCalls();
  runtime.GcAttachments(list, {stale[0]}, {{"named", "eth0"}});
  auto calls = fake_.Calls();
  ASSERT_EQ(Sequence(calls), (std::vector<std::string>{"DEL plug-a", "GC plug-a"}));
  EXPECT_EQ(calls[0].env.at("CNI_CONTAINERID"), "stale");
  json valid = json::array({{{"containerID", "named"}, {"ifname", "eth0"}},
                            {{"containerID", "failing"}, {"ifname", "eth0"}},
                            {{"containerID", "unnamed"}, {"ifname", "eth0"}}});
  EXPECT_EQ(calls[1].stdin_json["cni.dev/valid-attachments"], valid);
  EXPECT_FALSE(runtime.cache().Read("testnet", "stale", "eth0"));

  // A DEL that fails keeps its entry, and with it the plugins keep what it holds.
  fake_.ClearCalls();
  fake_.Fail("plug-a", "DEL", 11, "busy");
  EXPECT_THROW(runtime.GcAttachments(list, {stale[1]}, {}), Error);
  calls = fake_.Calls();
  ASSERT_EQ(Sequence(calls), (std::vector<std::string>{"DEL plug-a", "GC plug-a"}));
  EXPECT_EQ(calls[1].stdin_json["cni.dev/valid-attachments"],
            json::array(
                {{{"containerID", "failing"}, {"ifname", "eth0"}}, {{"containerID", "unnamed"}, {"ifname", "eth0"}}}));
}

TEST_F(RuntimeTest, GcBelow110OnlyDeletesAndDisableGcDoesNothing) {
  SetResults("1.0.0");
  Runtime runtime = MakeRuntime();
  auto list = List("1.0.0", json::array({{{"type", "plug-a"}}}));
  runtime.AddNetworkList(list, rt_);
  auto disabled = List("1.1.0", json::array({{{"type", "plug-a"}}}), {{"disableGC", true}});
  fake_.ClearCalls();
  runtime.GcNetworkList(disabled, std::vector<Attachment>{});
  EXPECT_TRUE(fake_.Calls().empty());
  EXPECT_TRUE(runtime.cache().Read("testnet", "ctr1", "eth0"));
  runtime.GcNetworkList(list, std::nullopt);
  EXPECT_EQ(Sequence(fake_.Calls()), std::vector<std::string>{"DEL plug-a"});
  EXPECT_FALSE(runtime.cache().Read("testnet", "ctr1", "eth0"));
}

TEST_F(RuntimeTest, GcWithoutAValidListSendsNoAttachmentsKey) {
  Runtime runtime = MakeRuntime();
  runtime.GcNetworkList(List("1.1.0", json::array({{{"type", "plug-a"}}})), std::nullopt);
  auto calls = fake_.Calls();
  ASSERT_EQ(calls.size(), 1u);
  EXPECT_FALSE(calls[0].stdin_json.contains("cni.dev/valid-attachments"));
  EXPECT_FALSE(calls[0].stdin_json.contains("cni.dev/attachments"));
}

TEST_F(RuntimeTest, StatusAsksEveryPluginFrom110AndStopsAtTheFirstFailure) {
  Runtime runtime = MakeRuntime();
  runtime.StatusNetworkList(List("1.1.0", Chain()));
  auto calls = fake_.Calls();
  ASSERT_EQ(Sequence(calls), (std::vector<std::string>{"STATUS plug-a", "STATUS plug-b", "STATUS plug-c"}));
  EXPECT_EQ(calls[0].env.at("CNI_NETNS"), "");
  fake_.ClearCalls();
  fake_.Fail("plug-b", "STATUS", 50, "pool exhausted");
  try {
    runtime.StatusNetworkList(List("1.1.0", Chain()));
    FAIL() << "no error";
  } catch (const PluginError& e) {
    EXPECT_EQ(e.code(), 50);
  }
  EXPECT_EQ(fake_.Calls().size(), 2u);
  fake_.ClearCalls();
  runtime.StatusNetworkList(List("1.0.0", Chain()));
  EXPECT_TRUE(fake_.Calls().empty());
}

}  // namespace
}  // namespace netiface::cni
