// The netiface binary, run inside a throw-away "host" namespace, driving real plugins (the reference
// ones in /usr/lib/cni and ours in the build tree) against throw-away pod namespaces: ADD, CHECK,
// DEL, GC and STATUS as an operator would run them, with the kernel state read back.
#include "netiface/cli/cli.h"

#include <sys/stat.h>

#include <cstdlib>
#include <filesystem>
#include <memory>

#include <gtest/gtest.h>

#include "netiface/cni/version.h"
#include "testutil.h"

namespace netiface::testing {
namespace {

using nlohmann::json;

class CliNetnsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    NETIFACE_REQUIRE_ROOT();
    host_ = std::make_unique<TempNetns>("clih");
    std::filesystem::create_directories(dir_ / "net.d");
    bridge_ = UniqueName("clib");
  }

  // Runs `netiface ARGS --conf-dir .. --cache-dir ..` in the host namespace.
  RunResult Netiface(const std::vector<std::string>& args, const std::string& cni_path) {
    std::vector<std::string> argv = {"/usr/bin/nsenter", "--net=" + host_->path(), "--", Bin("netiface")};
    argv.insert(argv.end(), args.begin(), args.end());
    if (args.at(0) != "ipam" && args.at(0) != "ls") argv.insert(argv.end(), {"--conf-dir", dir_ / "net.d"});
    if (args.at(0) != "ipam" && args.at(0) != "status") argv.insert(argv.end(), {"--cache-dir", dir_ / "cache"});
    std::map<std::string, std::string> env = {{"PATH", "/usr/sbin:/usr/bin:/sbin:/bin"}, {"CNI_PATH", cni_path}};
    if (const char* asan = std::getenv("ASAN_OPTIONS")) env["ASAN_OPTIONS"] = asan;
    return testing::Run(argv, env);
  }

  void WriteList(const std::string& name, const std::string& version, json plugins) {
    json l = {{"cniVersion", version}, {"name", name}, {"plugins", std::move(plugins)}};
    WriteFile(dir_ / ("net.d/" + name + ".conflist"), l.dump(2));
  }

  json HostLocal(const std::string& subnet) const {
    return {{"type", "host-local"},
            {"dataDir", dir_ / "ipam"},
            {"ranges", json::array({json::array({{{"subnet", subnet}}})})}};
  }
  json BridgePlugin(const std::string& subnet) const {
    return {
        {"type", "bridge"}, {"bridge", bridge_}, {"isGateway", true}, {"ipMasq", false}, {"ipam", HostLocal(subnet)}};
  }

  // "addr/len" of every IPv4 address on `dev` in `ns`.
  static std::vector<std::string> Addrs(const TempNetns& ns, const std::string& dev) {
    std::vector<std::string> out;
    for (const auto& link : ns.IpJson("-4 addr show dev " + dev)) {
      for (const auto& a : link.value("addr_info", json::array())) {
        out.push_back(a.value("local", "") + "/" + std::to_string(a.value("prefixlen", 0)));
      }
    }
    return out;
  }
  static std::string ResultAddress(const json& r, const std::string& version) {
    if (version == "0.1.0" || version == "0.2.0") return r["ip4"]["ip"].get<std::string>();
    return r["ips"][0]["address"].get<std::string>();
  }
  std::vector<std::string> Reservations(const std::string& network) {
    auto r = Netiface({"ipam", "ls", network, "--data-dir", dir_ / "ipam", "--json"}, "");
    EXPECT_EQ(r.exit_code, 0) << r.err;
    std::vector<std::string> out;
    const json listing = r.Json();  // named: a range-for over a temporary's member would outlive it
    for (const auto& e : listing["reservations"])
      out.push_back(e["address"].get<std::string>() + " " + e["containerId"].get<std::string>());
    return out;
  }

  // ADD, CHECK (from 0.4.0), DEL twice on `network` for one pod; asserts the kernel and the stores.
  void AddCheckDel(const std::string& network, const std::string& version, const std::string& cni_path) {
    TempNetns pod("clip");
    std::string cid = cli::ContainerIdFromNetns(pod.path());
    auto add = Netiface({"add", network, pod.path()}, cni_path);
    ASSERT_EQ(add.exit_code, 0) << add.err;
    json result = add.Json();
    EXPECT_EQ(result["cniVersion"], version);
    std::string addr = ResultAddress(result, version);
    EXPECT_EQ(Addrs(pod, "eth0"), std::vector<std::string>{addr});
    EXPECT_EQ(Reservations(network), std::vector<std::string>{addr.substr(0, addr.find('/')) + " " + cid});
    EXPECT_EQ(ListDir(dir_ / "cache/results"), std::vector<std::string>{network + "-" + cid + "-eth0"});

    auto check = Netiface({"check", network, pod.path()}, cni_path);
    if (cni::VersionAtLeast(version, "0.4.0")) {
      EXPECT_EQ(check.exit_code, 0) << check.err;
    } else {
      EXPECT_EQ(check.exit_code, cli::kExitConfig) << check.err;
    }

    for (int i = 0; i < 2; ++i) {
      auto del = Netiface({"del", network, pod.path()}, cni_path);
      ASSERT_EQ(del.exit_code, 0) << del.err;
    }
    EXPECT_TRUE(pod.IpJson("link show dev eth0").empty());
    EXPECT_TRUE(Reservations(network).empty());
    EXPECT_TRUE(ListDir(dir_ / "cache/results").empty());
  }

  TempDir dir_;
  std::unique_ptr<TempNetns> host_;
  std::string bridge_;
};

TEST_F(CliNetnsTest, ReferenceBridgeAtEveryVersionItSpeaks) {
  if (!HaveReference()) GTEST_SKIP() << "containernetworking-plugins is not installed";
  for (const auto& v : AllVersions()) {
    if (v == "1.1.0") continue;  // Debian's reference plugins stop at 1.0.0
    SCOPED_TRACE(v);
    WriteList("clref", v, json::array({BridgePlugin("10.201.0.0/24")}));
    AddCheckDel("clref", v, RefDir());
  }
  EXPECT_FALSE(host_->IpJson("link show dev " + bridge_).empty());
}

TEST_F(CliNetnsTest, ReferenceChainGetsPrevResultAndCapabilities) {
  if (!HaveReference()) GTEST_SKIP() << "containernetworking-plugins is not installed";
  for (const auto& v : VersionsFrom("0.3.1")) {
    if (v == "1.1.0") continue;
    SCOPED_TRACE(v);
    json ptp = {{"type", "ptp"}, {"ipMasq", false}, {"ipam", HostLocal("10.202.0.0/24")}};
    json tuning = {{"type", "tuning"}, {"capabilities", {{"mac", true}}}};
    WriteList("clchain", v, json::array({ptp, tuning}));
    TempNetns pod("clip");
    auto add = Netiface({"add", "clchain", pod.path(), "--cap-args", R"({"mac":"0a:58:0a:ca:00:42"})"}, RefDir());
    ASSERT_EQ(add.exit_code, 0) << add.err;
    auto link = pod.IpJson("link show dev eth0");
    ASSERT_EQ(link.size(), 1u);
    EXPECT_EQ(link[0]["address"], "0a:58:0a:ca:00:42");  // tuning got runtimeConfig.mac and prevResult
    auto del = Netiface({"del", "clchain", pod.path()}, RefDir());
    ASSERT_EQ(del.exit_code, 0) << del.err;
    EXPECT_TRUE(Reservations("clchain").empty());
  }
}

TEST_F(CliNetnsTest, PluginErrorsSurfaceWithTheirCode) {
  if (!HaveReference()) GTEST_SKIP() << "containernetworking-plugins is not installed";
  WriteList("clbad", "1.0.0",
            json::array({{{"type", "bridge"}, {"bridge", bridge_}, {"ipam", {{"type", "host-local"}}}}}));
  TempNetns pod("clip");
  auto add = Netiface({"add", "clbad", pod.path()}, RefDir());
  EXPECT_EQ(add.exit_code, cli::kExitPluginError);
  EXPECT_NE(add.err.find("plugin type=\"bridge\" failed (add)"), std::string::npos) << add.err;
  EXPECT_TRUE(pod.IpJson("link show dev eth0").empty());  // the failed ADD was undone
  EXPECT_TRUE(ListDir(dir_ / "cache/results").empty());
}

class OursTest : public CliNetnsTest {
 protected:
  void SetUp() override {
    CliNetnsTest::SetUp();
    if (IsSkipped()) return;
    for (const char* p : {"bridge", "host-local"}) {
      if (!std::filesystem::exists(Bin(p))) GTEST_SKIP() << Bin(p) << " is not built";
    }
  }
};

// docs/operations.md's switch of a live node: pods added by the reference plugins stay, new ones get our
// plugins from the same store, each set's DEL removes the other's pods, and back again.
TEST_F(OursTest, SwitchingALiveNodeFromTheReferenceAndBack) {
  if (!HaveReference()) GTEST_SKIP() << "containernetworking-plugins is not installed";
  WriteList("clsw", "1.0.0", json::array({BridgePlugin("10.203.9.0/24")}));
  TempNetns a("clisa"), b("clisb"), c("clisc");
  auto add_a = Netiface({"add", "clsw", a.path()}, RefDir());  // before the switch
  ASSERT_EQ(add_a.exit_code, 0) << add_a.err;
  auto add_b = Netiface({"add", "clsw", b.path()}, BinDir());  // after it
  ASSERT_EQ(add_b.exit_code, 0) << add_b.err;
  EXPECT_NE(Addrs(a, "eth0"), Addrs(b, "eth0"));
  EXPECT_TRUE(host_->Ping(Addrs(a, "eth0").at(0).substr(0, Addrs(a, "eth0").at(0).find('/'))));
  EXPECT_EQ(Netiface({"check", "clsw", a.path()}, BinDir()).exit_code, 0);  // ours checks the reference's pod
  EXPECT_EQ(Netiface({"del", "clsw", a.path()}, BinDir()).exit_code, 0);
  EXPECT_TRUE(a.IpJson("link show dev eth0").empty());
  EXPECT_EQ(Reservations("clsw").size(), 1u);
  // And back: the reference adds beside our pod and deletes it.
  auto add_c = Netiface({"add", "clsw", c.path()}, RefDir());
  ASSERT_EQ(add_c.exit_code, 0) << add_c.err;
  EXPECT_NE(Addrs(b, "eth0"), Addrs(c, "eth0"));
  EXPECT_EQ(Netiface({"del", "clsw", b.path()}, RefDir()).exit_code, 0);
  EXPECT_EQ(Netiface({"del", "clsw", c.path()}, RefDir()).exit_code, 0);
  EXPECT_TRUE(b.IpJson("link show dev eth0").empty());
  EXPECT_TRUE(Reservations("clsw").empty());
  EXPECT_TRUE(ListDir(dir_ / "cache/results").empty());
}

// A runtime drops a plugin's stderr when its error JSON parses: the failure must be in the log file, with
// the call's container, verb, ifname and network on the line. The CLI's --log-level reaches the plugins.
TEST_F(OursTest, PluginFailuresAndDebugLinesReachTheLogFile) {
  const std::string log_file = dir_ / "log/cni.log";
  std::string saved = std::getenv("NETIFACE_LOG_FILE") ? std::getenv("NETIFACE_LOG_FILE") : "";
  ::setenv("NETIFACE_LOG_FILE", log_file.c_str(), 1);  // handed to the CLI, and by it to the plugins
  json bad = BridgePlugin("10.203.7.0/24");
  bad["ipam"]["ranges"][0][0]["rangeStart"] = "10.9.9.9";  // outside the subnet: host-local refuses it
  WriteList("cllog", "1.0.0", json::array({bad}));
  TempNetns pod("clil");
  auto add = Netiface({"add", "cllog", pod.path(), "--container-id", "ctr-log-7e2"}, BinDir());
  EXPECT_EQ(add.exit_code, cli::kExitPluginError) << add.err;
  std::string text = ReadFile(log_file);
  EXPECT_NE(text.find("host-local ADD container=ctr-log-7e2 ifname=eth0 network=cllog: ADD failed"), std::string::npos)
      << text;
  EXPECT_NE(text.find("bridge ADD container=ctr-log-7e2 ifname=eth0 network=cllog: ADD failed"), std::string::npos)
      << text;
  EXPECT_EQ(text.find("debug:"), std::string::npos) << "the default level is warning";

  WriteList("cllog", "1.0.0", json::array({BridgePlugin("10.203.7.0/24")}));
  auto ok = Netiface({"--log-level", "debug", "add", "cllog", pod.path(), "--container-id", "ctr-log-8f3"}, BinDir());
  EXPECT_EQ(ok.exit_code, 0) << ok.err;
  text = ReadFile(log_file);
  EXPECT_NE(text.find("] debug: bridge ADD container=ctr-log-8f3 ifname=eth0 network=cllog: "), std::string::npos)
      << text;
  EXPECT_EQ(Netiface({"del", "cllog", pod.path(), "--container-id", "ctr-log-8f3"}, BinDir()).exit_code, 0);
  struct stat st {};
  ASSERT_EQ(::stat(log_file.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  if (saved.empty()) {
    ::unsetenv("NETIFACE_LOG_FILE");
  } else {
    ::setenv("NETIFACE_LOG_FILE", saved.c_str(), 1);
  }
}

TEST_F(OursTest, BridgeAtEveryVersion) {
  for (const auto& v : AllVersions()) {
    SCOPED_TRACE(v);
    WriteList("clours", v, json::array({BridgePlugin("10.203.0.0/24")}));
    AddCheckDel("clours", v, BinDir());
  }
}

TEST_F(OursTest, StatusAndGcReleaseOnlyStaleAttachments) {
  WriteList("clgc", "1.1.0", json::array({BridgePlugin("10.204.0.0/24")}));
  auto status = Netiface({"status", "clgc"}, BinDir());
  EXPECT_EQ(status.exit_code, 0) << status.err;
  TempNetns keep("clip"), stale("clip");
  for (const auto* pod : {&keep, &stale}) {
    auto add = Netiface({"add", "clgc", pod->path()}, BinDir());
    ASSERT_EQ(add.exit_code, 0) << add.err;
  }
  ASSERT_EQ(Reservations("clgc").size(), 2u);
  std::vector<std::string> keep_addrs = Addrs(keep, "eth0");

  auto gc = Netiface({"gc", "clgc", keep.path()}, BinDir());
  ASSERT_EQ(gc.exit_code, 0) << gc.err;
  EXPECT_TRUE(stale.IpJson("link show dev eth0").empty());
  EXPECT_EQ(Addrs(keep, "eth0"), keep_addrs);
  auto left = Reservations("clgc");
  ASSERT_EQ(left.size(), 1u);
  EXPECT_NE(left[0].find(cli::ContainerIdFromNetns(keep.path())), std::string::npos);
  EXPECT_EQ(Netiface({"check", "clgc", keep.path()}, BinDir()).exit_code, 0);

  // Every attachment declared stale: everything of the network goes.
  gc = Netiface({"gc", "clgc", "--all-stale"}, BinDir());
  ASSERT_EQ(gc.exit_code, 0) << gc.err;
  EXPECT_TRUE(keep.IpJson("link show dev eth0").empty());
  EXPECT_TRUE(Reservations("clgc").empty());
  EXPECT_TRUE(ListDir(dir_ / "cache/results").empty());
}

// Issue 17, case 5, on a live node: a running pod whose cache entry an older libcni wrote (no netns)
// keeps its address and link through every gc that does not say --all-stale; a pod whose namespace is
// gone is collected with --live.
TEST_F(OursTest, GcNeverCollectsALivePod) {
  WriteList("cllive", "1.1.0", json::array({BridgePlugin("10.205.0.0/24")}));
  TempNetns old_entry("clip"), live("clip");
  auto gone = std::make_unique<TempNetns>("clip");
  for (const auto* pod : {&old_entry, &live, gone.get()}) {
    auto add = Netiface({"add", "cllive", pod->path()}, BinDir());
    ASSERT_EQ(add.exit_code, 0) << add.err;
  }
  const std::string old_id = cli::ContainerIdFromNetns(old_entry.path());
  const std::string entry = dir_ / ("cache/results/cllive-" + old_id + "-eth0");
  json cached = json::parse(ReadFile(entry));
  ASSERT_EQ(cached.erase("netns"), 1u);
  WriteFile(entry, cached.dump());
  const std::string gone_path = gone->path();
  gone.reset();
  ASSERT_EQ(Reservations("cllive").size(), 3u);
  const std::vector<std::string> old_addrs = Addrs(old_entry, "eth0"), live_addrs = Addrs(live, "eth0");

  auto gc = Netiface({"gc", "cllive"}, BinDir());
  EXPECT_EQ(gc.exit_code, 2) << gc.err;
  EXPECT_EQ(Reservations("cllive").size(), 3u);

  gc = Netiface({"gc", "cllive", "--live", "--dry-run"}, BinDir());
  ASSERT_EQ(gc.exit_code, 0) << gc.err;
  EXPECT_NE(gc.out.find(cli::ContainerIdFromNetns(gone_path)), std::string::npos) << gc.out;
  EXPECT_EQ(Reservations("cllive").size(), 3u);

  gc = Netiface({"gc", "cllive", "--live"}, BinDir());
  ASSERT_EQ(gc.exit_code, 0) << gc.err;
  auto left = Reservations("cllive");
  ASSERT_EQ(left.size(), 2u);
  for (const auto& r : left) EXPECT_EQ(r.find(cli::ContainerIdFromNetns(gone_path)), std::string::npos) << r;
  EXPECT_EQ(Addrs(old_entry, "eth0"), old_addrs);
  EXPECT_EQ(Addrs(live, "eth0"), live_addrs);
  EXPECT_EQ(Netiface({"check", "cllive", old_entry.path()}, BinDir()).exit_code, 0);
  EXPECT_EQ(Netiface({"check", "cllive", live.path()}, BinDir()).exit_code, 0);

  auto ls = Netiface({"ls", "cllive", "--json"}, "");
  ASSERT_EQ(ls.exit_code, 0) << ls.err;
  json rows = json::parse(ls.out);
  ASSERT_EQ(rows.size(), 2u);

  gc = Netiface({"gc", "cllive", "--all-stale"}, BinDir());
  ASSERT_EQ(gc.exit_code, 0) << gc.err;
  EXPECT_TRUE(Reservations("cllive").empty());
  EXPECT_TRUE(ListDir(dir_ / "cache/results").empty());
}

}  // namespace
}  // namespace netiface::testing
