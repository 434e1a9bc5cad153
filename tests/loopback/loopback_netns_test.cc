// The built loopback plugin exec'd against throw-away namespaces at every spec version, next to the
// reference loopback on the same input, with lo read back from the kernel (`ip -j`).
#include <gtest/gtest.h>

#include "testutil.h"

namespace netiface::testing {
namespace {

using nlohmann::json;

const std::string kCid = "9e8d7c6b5a4f3e2d1c0b9a8f7e6d5c4b3a2f1e0d9c8b7a6f5e4d3c2b1a0f9e8d";

json Conf(const std::string& version) { return {{"cniVersion", version}, {"name", "lo"}, {"type", "loopback"}}; }

RunResult Call(const std::string& plugin, const std::string& command, const std::string& netns, const json& conf) {
  return RunPlugin(plugin, {.command = command, .container_id = kCid, .netns = netns, .ifname = "lo"}, conf);
}

bool LoUp(const TempNetns& ns) {
  json links = ns.IpJson("link show lo");
  if (links.empty()) return false;
  for (const auto& f : links[0]["flags"]) {
    if (f == "UP") return true;
  }
  return false;
}

class LoopbackTest : public ::testing::Test {
 protected:
  void SetUp() override { NETIFACE_REQUIRE_ROOT(); }
  static std::string Ours() { return Bin("loopback"); }
};

// The reference build in /usr/lib/cni prints its 1.0.0 shape under every cniVersion: at 0.3.x and
// 0.4.0 its ips lack the "version" key those versions' results carry. Ours has it; apart from that key the
// two are identical.
json WithoutIpVersions(json j) {
  for (auto& ip : j["ips"]) ip.erase("version");
  return j;
}

// Same netns, same input: the reference's result and ours at every version both speak.
TEST_F(LoopbackTest, AddPrintsTheReferencesResultAndBringsLoUp) {
  if (!HaveReference()) GTEST_SKIP() << "no reference plugins";
  TempNetns pod("lo");
  for (const auto& version : VersionsFrom("0.3.0")) {
    if (version == "1.1.0") continue;  // the reference build stops at 1.0.0: ours alone, below
    SCOPED_TRACE(version);
    RunResult ref = Call(RefDir() + "/loopback", "ADD", pod.path(), Conf(version));
    ASSERT_EQ(ref.exit_code, 0) << ref.out << ref.err;
    ASSERT_EQ(Call(RefDir() + "/loopback", "DEL", pod.path(), Conf(version)).exit_code, 0);
    ASSERT_FALSE(LoUp(pod));

    RunResult ours = Call(Ours(), "ADD", pod.path(), Conf(version));
    ASSERT_EQ(ours.exit_code, 0) << ours.out << ours.err;
    if (version == "1.0.0") {
      EXPECT_EQ(ours.out, ref.out);
    } else {
      const json mine = ours.Json();
      EXPECT_EQ(WithoutIpVersions(mine), ref.Json());
      for (const auto& ip : mine["ips"]) EXPECT_TRUE(ip.contains("version")) << ip;
    }
    EXPECT_TRUE(LoUp(pod));
  }
}

TEST_F(LoopbackTest, EveryVersionOfOursAddsChecksAndDeletes) {
  TempNetns pod("lo");
  for (const auto& version : AllVersions()) {
    SCOPED_TRACE(version);
    RunResult add = Call(Ours(), "ADD", pod.path(), Conf(version));
    ASSERT_EQ(add.exit_code, 0) << add.out << add.err;
    json result = add.Json();
    EXPECT_EQ(result["cniVersion"], version);
    if (version >= "0.3.0") {
      EXPECT_EQ(result["interfaces"],
                json::parse(R"([{"name":"lo","mac":"00:00:00:00:00:00","sandbox":")" + pod.path() + R"("}])"));
      ASSERT_EQ(result["ips"].size(), 2u);
      EXPECT_EQ(result["ips"][0]["address"], "127.0.0.1/8");
      EXPECT_EQ(result["ips"][1]["address"], "::1/128");
    } else {
      EXPECT_EQ(result["ip4"]["ip"], "127.0.0.1/8");
    }
    EXPECT_TRUE(LoUp(pod));

    if (version >= "0.4.0") {
      json conf = Conf(version);
      conf["prevResult"] = result;
      RunResult ok = Call(Ours(), "CHECK", pod.path(), conf);
      EXPECT_EQ(ok.exit_code, 0) << ok.out << ok.err;
    }
    if (version == "1.1.0") {  // once: each call costs a process start
      json conf = Conf(version);
      conf["prevResult"] = result;
      pod.Sh("ip link set lo down");
      RunResult bad = Call(Ours(), "CHECK", pod.path(), conf);
      EXPECT_NE(bad.exit_code, 0);
      EXPECT_NE(bad.out.find("loopback interface is down"), std::string::npos) << bad.out;
      pod.Sh("ip link set lo up");
    }
    if (version == "1.1.0") {
      EXPECT_EQ(Call(Ours(), "STATUS", "", Conf(version)).exit_code, 0);
      json gc = Conf(version);
      gc["cni.dev/valid-attachments"] = json::array();
      EXPECT_EQ(Call(Ours(), "GC", "", gc).exit_code, 0);
    }

    RunResult del = Call(Ours(), "DEL", pod.path(), Conf(version));
    EXPECT_EQ(del.exit_code, 0) << del.out << del.err;
    EXPECT_EQ(del.out, "");
    EXPECT_FALSE(LoUp(pod));
    if (version == "1.1.0") {  // idempotent
      EXPECT_EQ(Call(Ours(), "DEL", pod.path(), Conf(version)).exit_code, 0);
    }
  }
}

// As the reference: DEL of a namespace that is gone, or without CNI_NETNS, succeeds; ADD there fails.
TEST_F(LoopbackTest, DelToleratesAGoneOrEmptyNetns) {
  std::string gone;
  {
    TempNetns pod("lo");
    gone = pod.path();
  }
  for (const std::string& netns : {gone, std::string()}) {
    RunResult ours = Call(Ours(), "DEL", netns, Conf("1.0.0"));
    EXPECT_EQ(ours.exit_code, 0) << ours.out << ours.err;
    if (HaveReference()) {
      EXPECT_EQ(Call(RefDir() + "/loopback", "DEL", netns, Conf("1.0.0")).exit_code, 0);
    }
  }
  RunResult add = Call(Ours(), "ADD", gone, Conf("1.0.0"));
  EXPECT_NE(add.exit_code, 0);
  EXPECT_EQ(add.Json()["code"], 4) << add.out;
}

}  // namespace
}  // namespace netiface::testing
