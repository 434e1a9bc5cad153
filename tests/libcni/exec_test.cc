#include "netiface/cni/exec.h"

#include <sys/stat.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <thread>

#include <gtest/gtest.h>

#include "cni_helpers.h"
#include "netiface/cni/config.h"
#include "netiface/cni/error.h"
#include "netiface/cni/file.h"
#include "netiface/cni/version.h"
#include "testutil.h"

namespace netiface::cni {
namespace {

using nlohmann::json;

// A /bin/sh script standing in for a plugin.
std::string Script(const testing::TempDir& dir, const std::string& name, const std::string& body, int mode = 0755) {
  std::string path = dir / name;
  testing::WriteFile(path, "#!/bin/sh\n" + body + "\n");
  chmod(path.c_str(), static_cast<mode_t>(mode));
  return path;
}

template <typename F>
Error ErrorOf(F&& f) {
  return testing::ThrownError(std::forward<F>(f));
}

class ExecTest : public ::testing::Test {
 protected:
  testing::TempDir dir_;
};

TEST_F(ExecTest, SuccessJsonStdinAndExactEnvironment) {
  std::string p = Script(dir_, "ok",
                         "cat > \"$OUT/stdin\"; env > \"$OUT/env\"\n"
                         "printf '{\"cniVersion\":\"1.0.0\",\"ips\":[{\"address\":\"10.0.0.2/24\"}]}'");
  ExecRequest req{p, {{"OUT", dir_.path()}, {"CNI_COMMAND", "ADD"}, {"PATH", "/usr/bin:/bin"}}, "{\"in\":1}"};
  json out = ExecPlugin(DefaultExec(), req);
  EXPECT_EQ(out["ips"][0]["address"], "10.0.0.2/24");
  EXPECT_EQ(testing::ReadFile(dir_ / "stdin"), "{\"in\":1}");
  std::string env = testing::ReadFile(dir_ / "env");
  EXPECT_NE(env.find("CNI_COMMAND=ADD\n"), std::string::npos);
  EXPECT_EQ(env.find("HOME="), std::string::npos) << env;  // nothing but the request's environment
}

TEST_F(ExecTest, ErrorJsonBecomesTheSameError) {
  std::string p = Script(
      dir_, "err", "printf '{\"cniVersion\":\"1.0.0\",\"code\":7,\"msg\":\"bad conf\",\"details\":\"key x\"}'; exit 1");
  Error e = ErrorOf([&] { ExecPlugin(DefaultExec(), ExecRequest{p, {}, ""}); });
  EXPECT_EQ(e.code(), kInvalidConfig);
  EXPECT_EQ(e.msg(), "bad conf");
  EXPECT_EQ(e.details(), "key x");
}

TEST_F(ExecTest, GarbageOutput) {
  std::string ok_exit = Script(dir_, "garbage0", "echo 'this is not json'");
  Error e0 = ErrorOf([&] { ExecPlugin(DefaultExec(), ExecRequest{ok_exit, {}, ""}); });
  EXPECT_EQ(e0.code(), kDelegateFailed);
  EXPECT_NE(e0.details().find("this is not json"), std::string::npos);
  std::string bad_exit = Script(dir_, "garbage1", "echo 'panic: oops'; exit 2");
  Error e1 = ErrorOf([&] { ExecPlugin(DefaultExec(), ExecRequest{bad_exit, {}, ""}); });
  EXPECT_EQ(e1.code(), kDelegateFailed);
  EXPECT_NE(e1.msg().find("exit code 2"), std::string::npos);
  EXPECT_NE(e1.details().find("panic: oops"), std::string::npos);
  std::string not_error = Script(dir_, "noterr", "echo '{\"foo\": 1}'; exit 3");
  EXPECT_EQ(ErrorOf([&] { ExecPlugin(DefaultExec(), ExecRequest{not_error, {}, ""}); }).code(), kDelegateFailed);
}

TEST_F(ExecTest, NonZeroExitWithoutOutput) {
  std::string p = Script(dir_, "fail", "echo 'to stderr' >&2; exit 5");
  Error e = ErrorOf([&] { ExecPlugin(DefaultExec(), ExecRequest{p, {}, ""}); });
  EXPECT_EQ(e.code(), kDelegateFailed);
  EXPECT_NE(e.msg().find("fail"), std::string::npos);
  EXPECT_NE(e.msg().find("exit code 5"), std::string::npos);
  ExecOutput raw = DefaultExec().Run(ExecRequest{p, {}, ""});
  EXPECT_EQ(raw.exit_code, 5);
  EXPECT_EQ(raw.stdout_data, "");  // stderr is not captured
}

TEST_F(ExecTest, EmptySuccessIsNull) {
  std::string p = Script(dir_, "quiet", "exit 0");
  EXPECT_TRUE(ExecPlugin(DefaultExec(), ExecRequest{p, {}, "{}"}).is_null());
}

TEST_F(ExecTest, LargeStdinAndStdoutDoNotDeadlock) {
  std::string p = Script(dir_, "echo", "exec cat");
  std::string big = "{\"x\":\"" + std::string(3 << 20, 'a') + "\"}";
  ExecOutput out = DefaultExec().Run(ExecRequest{p, {{"PATH", "/usr/bin:/bin"}}, big});
  EXPECT_EQ(out.exit_code, 0);
  EXPECT_EQ(out.stdout_data.size(), big.size());
  EXPECT_TRUE(out.stdout_data == big);
}

TEST_F(ExecTest, ChildThatIgnoresStdin) {
  std::string p = Script(dir_, "early", "exit 4");
  ExecOutput out = DefaultExec().Run(ExecRequest{p, {}, std::string(1 << 20, 'x')});
  EXPECT_EQ(out.exit_code, 4);
}

TEST_F(ExecTest, SignalledChild) {
  std::string p = Script(dir_, "killed", "kill -9 $$");
  EXPECT_EQ(DefaultExec().Run(ExecRequest{p, {}, ""}).exit_code, 128 + 9);
}

TEST_F(ExecTest, UnstartableChild) {
  std::string noexec = Script(dir_, "noexec", "exit 0", 0644);
  EXPECT_EQ(ErrorOf([&] { DefaultExec().Run(ExecRequest{noexec, {}, ""}); }).code(), kIoFailure);
  EXPECT_EQ(ErrorOf([&] { DefaultExec().Run(ExecRequest{dir_ / "missing", {}, ""}); }).code(), kIoFailure);
}

// Stdin::kOnRelease: the child starts at once but cannot act on its config before Release().
TEST_F(ExecTest, HeldStdinGoesOverOnlyAtRelease) {
  std::string p = Script(dir_, "held", "cat > \"$OUT/in.tmp\"; mv \"$OUT/in.tmp\" \"$OUT/in\"; printf '{}'");
  ExecRequest req{p, {{"OUT", dir_.path()}, {"PATH", "/usr/bin:/bin"}}, "{\"in\":1}", Stdin::kOnRelease};
  auto running = DefaultExec().Start(req);
  std::this_thread::sleep_for(std::chrono::milliseconds(200));  // ample time for sh to start and read
  EXPECT_FALSE(std::filesystem::exists(dir_ / "in")) << "the child read its stdin before Release()";
  running->Release();
  ExecOutput out = running->Wait();
  EXPECT_EQ(out.exit_code, 0);
  EXPECT_EQ(out.stdout_data, "{}");
  EXPECT_EQ(testing::ReadFile(dir_ / "in"), "{\"in\":1}");
}

TEST_F(ExecTest, HeldStdinNeverReleasedReachesTheChildEmpty) {
  std::string p = Script(dir_, "held", "cat > \"$OUT/in\"");
  auto running = DefaultExec().Start(
      ExecRequest{p, {{"OUT", dir_.path()}, {"PATH", "/usr/bin:/bin"}}, "{\"in\":1}", Stdin::kOnRelease});
  EXPECT_EQ(running->Wait().exit_code, 0);
  EXPECT_EQ(testing::ReadFile(dir_ / "in"), "");
}

TEST_F(ExecTest, DefaultStartOfARunOnlyExecRunsAtRelease) {
  struct CountingExec : Exec {
    int runs = 0;
    ExecOutput Run(const ExecRequest&) override { return {0, std::to_string(++runs)}; }
  } exec;
  auto now = exec.Start(ExecRequest{"/x", {}, "", Stdin::kNow});
  EXPECT_EQ(exec.runs, 1);
  EXPECT_EQ(now->Wait().stdout_data, "1");
  auto held = exec.Start(ExecRequest{"/x", {}, "", Stdin::kOnRelease});
  EXPECT_EQ(exec.runs, 1);
  held->Release();
  held->Release();
  EXPECT_EQ(exec.runs, 2);
  EXPECT_EQ(held->Wait().stdout_data, "2");
  auto never = exec.Start(ExecRequest{"/x", {}, "", Stdin::kOnRelease});
  EXPECT_EQ(never->Wait().exit_code, 1);  // never ran, as a real child fed nothing would fail
  EXPECT_EQ(exec.runs, 2);
}

// The child is moved off this CPU to start beside us, then given back every CPU it had: nothing is pinned.
TEST_F(ExecTest, ChildKeepsTheCallersCpuSet) {
  std::string p = Script(dir_, "cpus", "grep Cpus_allowed_list /proc/self/status");
  std::string expected = testing::ReadFile("/proc/self/status");
  expected = expected.substr(expected.find("Cpus_allowed_list"));
  expected = expected.substr(0, expected.find('\n') + 1);
  for (int i = 0; i < 5; ++i) {
    ExecOutput out = DefaultExec().Run(ExecRequest{p, {{"PATH", "/usr/bin:/bin"}}, ""});
    EXPECT_EQ(out.exit_code, 0);
    EXPECT_EQ(out.stdout_data, expected);
  }
}

TEST_F(ExecTest, FindPlugin) {
  testing::TempDir other;
  mkdir((dir_ / "bridge").c_str(), 0755);  // a folder is not a plugin
  Script(dir_, "ptp", "exit 0", 0644);     // neither is a file without x bits
  std::string bridge = Script(other, "bridge", "exit 0");
  std::string ptp = Script(other, "ptp", "exit 0");
  std::string path = "::" + dir_.path() + "::" + other.path() + ":";
  EXPECT_EQ(FindPlugin("bridge", path), bridge);
  EXPECT_EQ(FindPlugin("ptp", path), ptp);
  EXPECT_EQ(FindPlugin("ptp", other.path() + ":" + dir_.path()), ptp);
  Error missing = ErrorOf([&] { FindPlugin("nothere", path); });
  EXPECT_EQ(missing.code(), kInvalidConfig);
  EXPECT_EQ(missing.msg(), "failed to find plugin \"nothere\" in path [" + dir_.path() + " " + other.path() + "]");
  for (const char* bad : {"", ".", "..", "../bridge", "/bin/sh", "a/b"}) {
    EXPECT_EQ(ErrorOf([&] { FindPlugin(bad, path); }).code(), kInvalidConfig) << bad;
  }
  EXPECT_EQ(ErrorOf([&] { FindPlugin("bridge", ""); }).code(), kInvalidConfig);
}

// Records the request instead of running it.
class RecordingExec : public Exec {
 public:
  ExecRequest last;
  ExecOutput reply;
  ExecOutput Run(const ExecRequest& req) override {
    last = req;
    return reply;
  }
};

TEST_F(ExecTest, DelegateBuildsTheChildEnvironment) {
  Script(dir_, "host-local", "exit 0");
  setenv("NETIFACE_EXEC_TEST_MARKER", "kept", 1);
  setenv("CNI_NETNS", "/stale", 1);
  CmdArgs args;
  args.command = "ADD";
  args.container_id = "ctr9";
  args.ifname = "eth1";
  args.args = "IgnoreUnknown=1";
  args.path = dir_.path();
  json conf = {{"cniVersion", "0.4.0"}, {"name", "n"}, {"type", "host-local"}};
  RecordingExec rec;
  rec.reply.stdout_data = R"({"cniVersion":"0.4.0","ips":[{"version":"4","address":"10.0.0.9/24"}]})";
  Result r = DelegateAdd("host-local", conf, args, rec);
  ASSERT_EQ(r.ips.size(), 1u);
  EXPECT_EQ(r.ips[0].address.ToString(), "10.0.0.9/24");
  EXPECT_EQ(rec.last.path, dir_ / "host-local");
  EXPECT_EQ(rec.last.stdin_data, conf.dump());
  EXPECT_EQ(rec.last.env["CNI_COMMAND"], "ADD");
  EXPECT_EQ(rec.last.env["CNI_CONTAINERID"], "ctr9");
  EXPECT_EQ(rec.last.env["CNI_IFNAME"], "eth1");
  EXPECT_EQ(rec.last.env["CNI_ARGS"], "IgnoreUnknown=1");
  EXPECT_EQ(rec.last.env["CNI_PATH"], dir_.path());
  EXPECT_EQ(rec.last.env.count("CNI_NETNS"), 0u);  // DEL without a netns stays without one
  EXPECT_EQ(rec.last.env["NETIFACE_EXEC_TEST_MARKER"], "kept");
  for (const char* verb : {"DEL", "CHECK", "STATUS", "GC"}) {
    rec.reply.stdout_data = "";
    Delegate(verb, "host-local", conf, args, rec);
    EXPECT_EQ(rec.last.env["CNI_COMMAND"], verb);
  }
  EXPECT_THROW(Delegate("ADD", "host-local", conf, args, rec), Error);
  EXPECT_THROW(Delegate("VERSION", "host-local", conf, args, rec), Error);
  unsetenv("NETIFACE_EXEC_TEST_MARKER");
  unsetenv("CNI_NETNS");
}

// IPAM gets the main plugin's stdin byte for byte (as the reference does), and the result is read at
// the version that stdin declared.
TEST_F(ExecTest, OwnConfPassesTheStdinBytesOn) {
  Script(dir_, "host-local", "exit 0");
  CmdArgs args;
  args.path = dir_.path();
  args.stdin_data = "{ \"type\": \"bridge\",\n  \"cniVersion\": \"0.3.1\", \"name\": \"n\" }\n";
  args.conf = ParseNetConf(args.stdin_data);
  DelegateConf own = DelegateConf::Own(args);
  EXPECT_EQ(own.bytes, args.stdin_data);
  EXPECT_EQ(own.version, "0.3.1");
  RecordingExec rec;
  rec.reply.stdout_data = R"({"cniVersion":"0.3.1","ips":[{"version":"4","address":"10.0.0.9/24"}]})";
  Result r = DelegateAdd("host-local", own, args, rec);
  EXPECT_EQ(rec.last.stdin_data, args.stdin_data);
  ASSERT_EQ(r.ips.size(), 1u);
  EXPECT_EQ(r.ips[0].address.ToString(), "10.0.0.9/24");
  EXPECT_EQ(DelegateConf(json{{"name", "n"}}).version, "0.1.0") << "no cniVersion: 0.1.0";
}

TEST_F(ExecTest, DelegateAddRunsARealChild) {
  Script(dir_, "fake-ipam",
         "[ \"$CNI_COMMAND\" = ADD ] || exit 9\n"
         "printf '{\"cniVersion\":\"0.2.0\",\"ip4\":{\"ip\":\"10.1.0.3/16\",\"gateway\":\"10.1.0.1\"}}'");
  CmdArgs args;
  args.container_id = "c";
  args.ifname = "eth0";
  args.path = dir_.path();
  Result r = DelegateAdd("fake-ipam", json{{"cniVersion", "0.2.0"}, {"name", "n"}}, args);
  ASSERT_EQ(r.ips.size(), 1u);
  EXPECT_EQ(r.ips[0].gateway->ToString(), "10.1.0.1");
  Script(dir_, "failing", "printf '{\"code\":11,\"msg\":\"try later\"}'; exit 1");
  Error e = ErrorOf([&] { Delegate("DEL", "failing", json{{"cniVersion", "1.0.0"}}, args); });
  EXPECT_EQ(e.code(), kTryAgainLater);
  EXPECT_EQ(e.msg(), "try later");
  Script(dir_, "silent", "exit 0");
  EXPECT_EQ(ErrorOf([&] { DelegateAdd("silent", json{{"cniVersion", "1.0.0"}}, args); }).code(), kDelegateFailed);
  EXPECT_EQ(ErrorOf([&] { DelegateAdd("absent", json{{"cniVersion", "1.0.0"}}, args); }).code(), kInvalidConfig);
}

// Against the reference host-local (no root needed: IPAM only touches its dataDir), every version it speaks.
TEST_F(ExecTest, DelegatesToTheReferenceHostLocal) {
  if (!testing::HaveReference()) GTEST_SKIP() << "reference plugins not installed";
  CmdArgs args;
  args.container_id = "refctr";
  args.netns = "/run/netns/netiface-unused";
  args.ifname = "eth0";
  args.path = testing::RefDir();
  for (const auto& v : testing::AllVersions()) {
    if (v == "1.1.0") continue;  // Debian's reference plugins stop at 1.0.0
    SCOPED_TRACE(v);
    std::string data_dir = dir_ / ("ipam-" + v);  // fresh: host-local round-robins after a release
    json conf = {{"cniVersion", v},
                 {"name", "refnet"},
                 {"type", "fake"},
                 {"ipam",
                  {{"type", "host-local"},
                   {"subnet", "10.250.0.0/24"},
                   {"dataDir", data_dir},
                   {"routes", {{{"dst", "0.0.0.0/0"}}}}}}};
    Result r = DelegateAdd("host-local", conf, args);
    ASSERT_EQ(r.ips.size(), 1u);
    EXPECT_EQ(r.ips[0].address.ToString(), "10.250.0.2/24");
    EXPECT_EQ(r.ips[0].gateway->ToString(), "10.250.0.1");
    EXPECT_FALSE(r.ips[0].interface);
    ASSERT_EQ(r.routes.size(), 1u);
    EXPECT_EQ(r.routes[0].dst.ToString(), "0.0.0.0/0");
    EXPECT_EQ(testing::ReadFile(data_dir + "/refnet/10.250.0.2"), "refctr\r\neth0");
    // A second ADD of the same attachment is the reference's own error, code and all.
    Error dup = ErrorOf([&] { DelegateAdd("host-local", conf, args); });
    EXPECT_NE(dup.code(), kDelegateFailed);
    EXPECT_NE(dup.msg().find("duplicate"), std::string::npos) << dup.msg();
    if (VersionAtLeast(v, "0.4.0")) Delegate("CHECK", "host-local", conf, args);
    args.netns.clear();  // IPAM DEL works without a netns
    Delegate("DEL", "host-local", conf, args);
    args.netns = "/run/netns/netiface-unused";
    EXPECT_FALSE(ReadFileIfExists(data_dir + "/refnet/10.250.0.2"));
  }
}

TEST(ErrorTest, JsonRoundTrip) {
  Error e(kIoFailure, "disk", "full");
  EXPECT_EQ(std::string(e.what()), "disk; full");
  EXPECT_EQ(e.ToJson("0.4.0"), (json{{"cniVersion", "0.4.0"}, {"code", 5}, {"msg", "disk"}, {"details", "full"}}));
  EXPECT_FALSE(Error(kIoFailure, "disk").ToJson("1.0.0").contains("details"));
  Error back = Error::FromJson(e.ToJson("1.0.0"), "fallback");
  EXPECT_EQ(back.code(), kIoFailure);
  EXPECT_EQ(back.msg(), "disk");
  EXPECT_EQ(back.details(), "full");
  for (const char* bad : {R"([])", R"({"msg": "x"})", R"({"code": "7", "msg": "x"})", R"({"code": 7})"}) {
    Error f = Error::FromJson(json::parse(bad), "fallback");
    EXPECT_EQ(f.code(), kDelegateFailed) << bad;
    EXPECT_EQ(f.msg(), "fallback") << bad;
  }
}

}  // namespace
}  // namespace netiface::cni
