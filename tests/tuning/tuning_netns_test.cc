// The built tuning plugin, run in a throw-away host namespace against a throw-away container namespace
// (a veth made with `ip` stands for the main plugin), next to the reference tuning on the same input: the
// result JSON, the backup file, each one's DEL restoring after the other's ADD, and the link and sysctls
// read back from the kernel. DEL must leave the namespace as it was before the ADD.
#include <gtest/gtest.h>

#include "testutil.h"

namespace netiface::testing {
namespace {

using nlohmann::json;
constexpr const char* kId = "3c1f0e9d8b7a6c5d4e3f2a1b0c9d8e7f6a5b4c3d2e1f0a9b8c7d6e5f4a3b2c1d";

struct Pod {
  TempNetns host{"tuh"};
  TempNetns ctr{"tuc"};
  TempDir dir;
  Pod() {
    EXPECT_EQ(ctr.Sh("ip link add eth0 type veth peer name peer0 && ip link set eth0 address 0a:58:0a:63:00:02 "
                     "&& ip link set eth0 up && ip link set peer0 up && echo 4096 > /proc/sys/net/core/somaxconn")
                  .exit_code,
              0);
  }
  json Conf(const std::string& version, const json& keys, const std::string& data_dir = "") const {
    json prev = {
        {"cniVersion", version},
        {"interfaces", json::array({{{"name", "veth9"}, {"mac", "ee:ee:ee:ee:ee:ee"}},
                                    {{"name", "eth0"}, {"mac", "0a:58:0a:63:00:02"}, {"sandbox", ctr.path()}}})},
        {"ips", json::array({{{"address", "10.99.0.2/24"}, {"interface", 1}}})}};
    if (version < "1.0.0") prev["ips"][0]["version"] = "4";
    json j = {{"cniVersion", version}, {"name", "tunet"}, {"type", "tuning"}, {"prevResult", prev}};
    j["dataDir"] = data_dir.empty() ? dir.path() : data_dir;
    j.update(keys);
    return j;
  }
  RunResult Call(const std::string& plugin, const std::string& cmd, const json& conf,
                 const std::string& netns = "") const {
    PluginCall c{
        .command = cmd, .container_id = kId, .netns = netns.empty() ? ctr.path() : netns, .host_ns = host.name()};
    return RunPlugin(plugin, c, conf);
  }
  std::string Backup() const { return dir.path() + "/" + kId + "_eth0.json"; }
  // eth0's attributes and the sysctls tuning may touch, in the container and in the "host".
  json State() const {
    json l = ctr.IpJson("-d link show eth0")[0];
    json flags = json::array();
    for (const auto& f : l["flags"]) {
      if (f == "PROMISC" || f == "ALLMULTI") flags.push_back(f);
    }
    auto sysctls = [](const TempNetns& ns) {
      return ns
          .Sh("cat /proc/sys/net/core/somaxconn /proc/sys/net/ipv4/conf/eth0/arp_filter 2>/dev/null; "
              "cat /proc/sys/net/ipv4/ip_forward")
          .out;
    };
    return {{"mac", l["address"]}, {"mtu", l["mtu"]},     {"txqlen", l["txqlen"]},
            {"flags", flags},      {"ctr", sysctls(ctr)}, {"host", sysctls(host)}};
  }
};

const json kLink = {{"mac", "c2:11:22:33:44:55"}, {"mtu", 1400}, {"promisc", true}, {"allmulti", true}};
const json kSysctl = {{"sysctl", {{"net.core.somaxconn", "321"}, {"net.ipv4.conf.IFNAME.arp_filter", "1"}}}};

json With(json a, const json& b) {
  a.update(b);
  return a;
}

class TuningNetnsTest : public ::testing::Test {
 protected:
  void SetUp() override { NETIFACE_REQUIRE_ROOT(); }
  static std::string Ours() { return Bin("tuning"); }
  static std::string Ref() { return RefDir() + "/tuning"; }
};

// Same namespace, same input: the same result, the same link and sysctls, and for the link attributes
// the same backup file, byte for byte (ours adds the sysctls' originals under a key of its own).
TEST_F(TuningNetnsTest, AddMatchesTheReference) {
  if (!HaveReference()) GTEST_SKIP() << "no reference plugins";
  Pod pod;
  const json before = pod.State();
  for (const std::string version : {"0.3.0", "0.3.1", "0.4.0", "1.0.0"}) {
    for (const json& keys : {kLink, With(kLink, kSysctl)}) {
      SCOPED_TRACE(version + " " + keys.dump());
      RunResult ref = pod.Call(Ref(), "ADD", pod.Conf(version, keys));
      ASSERT_EQ(ref.exit_code, 0) << ref.out << ref.err;
      const json ref_state = pod.State();
      const std::string ref_backup = ReadFile(pod.Backup());
      ASSERT_EQ(pod.Call(Ref(), "DEL", pod.Conf(version, keys)).exit_code, 0);
      // The reference's DEL restores the link and leaves its sysctls set: put them back by hand.
      pod.ctr.Sh("echo 4096 > /proc/sys/net/core/somaxconn && echo 0 > /proc/sys/net/ipv4/conf/eth0/arp_filter");
      ASSERT_EQ(pod.State(), before);

      RunResult ours = pod.Call(Ours(), "ADD", pod.Conf(version, keys));
      ASSERT_EQ(ours.exit_code, 0) << ours.out << ours.err;
      EXPECT_EQ(ours.Json(), ref.Json());
      EXPECT_EQ(ours.Json()["interfaces"][1]["mac"], "c2:11:22:33:44:55");
      EXPECT_EQ(pod.State(), ref_state);
      json backup = json::parse(ReadFile(pod.Backup()));
      if (keys.contains("sysctl")) {
        EXPECT_EQ(backup["sysctl"],
                  json::parse(R"({"net/core/somaxconn":"4096","net/ipv4/conf/eth0/arp_filter":"0"})"));
        backup.erase("sysctl");
        EXPECT_EQ(backup, json::parse(ref_backup));
      } else {
        EXPECT_EQ(ReadFile(pod.Backup()), ref_backup);
      }
      RunResult del = pod.Call(Ours(), "DEL", pod.Conf(version, keys));
      ASSERT_EQ(del.exit_code, 0) << del.out << del.err;
      EXPECT_EQ(pod.State(), before);  // the reference leaves its sysctls set; ours puts them back
      EXPECT_TRUE(ListDir(pod.dir.path()).empty());
    }
  }
}

// The backup is shared state: either plugin's DEL restores after the other's ADD.
TEST_F(TuningNetnsTest, EachDelRestoresAfterTheOthersAdd) {
  if (!HaveReference()) GTEST_SKIP() << "no reference plugins";
  Pod pod;
  const json before = pod.State();
  const json conf = pod.Conf("1.0.0", kLink);
  ASSERT_EQ(pod.Call(Ours(), "ADD", conf).exit_code, 0);
  ASSERT_NE(pod.State(), before);
  RunResult del = pod.Call(Ref(), "DEL", conf);
  ASSERT_EQ(del.exit_code, 0) << del.out << del.err;
  EXPECT_EQ(pod.State(), before);
  EXPECT_TRUE(ListDir(pod.dir.path()).empty());

  ASSERT_EQ(pod.Call(Ref(), "ADD", conf).exit_code, 0);
  ASSERT_NE(pod.State(), before);
  del = pod.Call(Ours(), "DEL", conf);
  ASSERT_EQ(del.exit_code, 0) << del.out << del.err;
  EXPECT_EQ(pod.State(), before);
  EXPECT_TRUE(ListDir(pod.dir.path()).empty());
}

TEST_F(TuningNetnsTest, EveryVersionAddsChecksAndDeletes) {
  Pod pod;
  const json before = pod.State();
  const json keys = With(With(kLink, kSysctl), {{"txQLen", 77}});
  for (const std::string& version : AllVersions()) {
    SCOPED_TRACE(version);
    json conf = pod.Conf(version, keys);
    if (version < "0.3.0") {  // these versions' results have no interfaces: nothing to pass a MAC to
      conf["prevResult"] = {{"cniVersion", version}, {"ip4", {{"ip", "10.99.0.2/24"}}}};
    }
    RunResult add = pod.Call(Ours(), "ADD", conf);
    ASSERT_EQ(add.exit_code, 0) << add.out << add.err;
    EXPECT_EQ(add.Json()["cniVersion"], version);
    json state = pod.State();
    EXPECT_EQ(state["mac"], "c2:11:22:33:44:55");
    EXPECT_EQ(state["mtu"], 1400);
    EXPECT_EQ(state["txqlen"], 77);
    EXPECT_EQ(state["flags"], json::parse(R"(["ALLMULTI","PROMISC"])"));
    EXPECT_EQ(state["ctr"], "321\n1\n0\n");
    EXPECT_EQ(state["host"], before["host"]);  // only the container's namespace is written
    if (version >= "0.4.0") {
      conf["prevResult"] = add.Json();
      RunResult ok = pod.Call(Ours(), "CHECK", conf);
      EXPECT_EQ(ok.exit_code, 0) << ok.out << ok.err;
    }
    if (version == "1.1.0") {
      pod.ctr.Sh("echo 4000 > /proc/sys/net/core/somaxconn");
      RunResult bad = pod.Call(Ours(), "CHECK", conf);
      EXPECT_NE(bad.exit_code, 0);
      EXPECT_NE(bad.out.find("sysctl net/core/somaxconn is 4000, configured 321"), std::string::npos) << bad.out;
      pod.ctr.Sh("echo 321 > /proc/sys/net/core/somaxconn && ip link set eth0 mtu 1500");
      bad = pod.Call(Ours(), "CHECK", conf);
      EXPECT_NE(bad.out.find("MTU is 1500, configured 1400"), std::string::npos) << bad.out;
      EXPECT_EQ(pod.Call(Ours(), "STATUS", conf, "").exit_code, 0);
      json gc = conf;
      gc.erase("prevResult");
      gc["cni.dev/valid-attachments"] = json::array();
      EXPECT_EQ(pod.Call(Ours(), "GC", gc).exit_code, 0);
    }
    RunResult del = pod.Call(Ours(), "DEL", conf);
    EXPECT_EQ(del.exit_code, 0) << del.out << del.err;
    EXPECT_EQ(del.out, "");
    EXPECT_EQ(pod.State(), before);
    EXPECT_TRUE(ListDir(pod.dir.path()).empty());
    EXPECT_EQ(pod.Call(Ours(), "DEL", conf).exit_code, 0);  // idempotent
  }
}

// Refused with the spec's code before anything changes; the same input fails in the reference too
// (which may have changed something by then).
TEST_F(TuningNetnsTest, BadInputChangesNothing) {
  Pod pod;
  const json before = pod.State();
  const std::vector<std::pair<json, int>> cases = {
      {{{"sysctl", {{"kernel.hostname", "evil"}}}}, 7},
      {{{"sysctl", {{"net/../kernel/hostname", "evil"}}}}, 7},
      {{{"sysctl", {{"net.core.somaxconn", "600"}, {"net.ipv4.no_such_key", "1"}}}}, 7},
      {{{"mac", "01:00:5e:00:00:01"}, {"mtu", 1300}}, 7},
      {{{"mtu", 1300}, {"sysctl", {{"net.core.somaxconn", "600"}}}, {"txQLen", -1}}, 7},
  };
  for (const auto& [keys, code] : cases) {
    SCOPED_TRACE(keys.dump());
    RunResult r = pod.Call(Ours(), "ADD", pod.Conf("1.0.0", With(kLink, keys)));
    EXPECT_EQ(r.exit_code, 1);
    EXPECT_EQ(r.Json()["code"], code) << r.out;
    EXPECT_EQ(pod.State(), before);
    EXPECT_TRUE(ListDir(pod.dir.path()).empty());
  }
  // A value the kernel refuses, after the first sysctl was written: that one is put back.
  const json refused = {{"sysctl", {{"net.core.somaxconn", "600"}, {"net.ipv4.conf.IFNAME.arp_filter", "abc"}}}};
  RunResult r = pod.Call(Ours(), "ADD", pod.Conf("1.0.0", With(kLink, refused)));
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_EQ(pod.State(), before);
  EXPECT_TRUE(ListDir(pod.dir.path()).empty());
  RunResult no_prev = pod.Call(Ours(), "ADD", [&] {
    json c = pod.Conf("1.0.0", kLink);
    c.erase("prevResult");
    return c;
  }());
  EXPECT_EQ(no_prev.Json()["code"], 7) << no_prev.out;
}

// The container is gone (its namespace with it): DEL succeeds and drops the backup, which the
// reference leaves behind.
TEST_F(TuningNetnsTest, DelOfAGoneNamespaceDropsTheBackup) {
  Pod pod;
  const json conf = pod.Conf("1.0.0", kLink);
  ASSERT_EQ(pod.Call(Ours(), "ADD", conf).exit_code, 0);
  ASSERT_FALSE(ListDir(pod.dir.path()).empty());
  std::string gone;
  {
    TempNetns other("tug");
    gone = other.path();
  }
  RunResult del = pod.Call(Ours(), "DEL", conf, gone);
  EXPECT_EQ(del.exit_code, 0) << del.out << del.err;
  EXPECT_TRUE(ListDir(pod.dir.path()).empty());
}

}  // namespace
}  // namespace netiface::testing
