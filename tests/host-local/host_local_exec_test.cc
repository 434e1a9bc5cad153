// The built host-local binary and the reference one (/usr/lib/cni/host-local, v1.1.1) on the SAME data
// dir: each must see, check and release what the other wrote; parallel and killed runs must leave a
// consistent folder. No root and no namespaces are needed: IPAM never opens CNI_NETNS.
#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <random>
#include <set>
#include <thread>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "testutil.h"

namespace netiface::testing {
namespace {

using nlohmann::json;
using ::testing::HasSubstr;

// The reference host-local speaks up to 1.0.0.
const std::vector<std::string> kRefVersions = {"0.1.0", "0.2.0", "0.3.0", "0.3.1", "0.4.0", "1.0.0"};

class HostLocalExec : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!HaveReference()) GTEST_SKIP() << "no reference plugins in " << RefDir();
  }
  static std::string Ours() { return Bin("host-local"); }
  static std::string Ref() { return RefDir() + "/host-local"; }

  json Conf(const std::string& version = "1.0.0", const std::string& subnet = "10.10.0.0/16") const {
    return {{"cniVersion", version},
            {"name", "hlnet"},
            {"type", "host-local"},
            {"ipam",
             {{"type", "host-local"},
              {"dataDir", dir_.path()},
              {"ranges", json::array({json::array({{{"subnet", subnet}}})})},
              {"routes", json::array({{{"dst", "0.0.0.0/0"}}})}}}};
  }
  RunResult Call(const std::string& bin, const std::string& command, const std::string& cid, const json& conf,
                 const std::string& ifname = "eth0", const std::string& cni_args = "") const {
    PluginCall c;
    c.command = command;
    c.container_id = cid;
    c.netns = "/var/run/netns/not-opened";
    c.ifname = ifname;
    c.args = cni_args;
    c.path = bin.substr(0, bin.rfind('/'));
    return RunPlugin(bin, c, conf);
  }
  // ADD that must succeed; returns the first address without prefix.
  std::string AddOk(const std::string& bin, const std::string& cid, const json& conf,
                    const std::string& ifname = "eth0") const {
    RunResult r = Call(bin, "ADD", cid, conf, ifname);
    EXPECT_EQ(r.exit_code, 0) << bin << " " << r.out << r.err;
    json j = r.Json();
    if (r.exit_code != 0 || !j.contains("ips") || j["ips"].empty()) return "";
    std::string addr = j["ips"][0]["address"];
    return addr.substr(0, addr.find('/'));
  }
  std::string NetDir() const { return dir_ / "hlnet"; }
  // Reservations as ip -> content.
  std::map<std::string, std::string> Reservations() const {
    std::map<std::string, std::string> out;
    for (const auto& f : ListDir(NetDir())) {
      if (f == "lock" || f.rfind("last_reserved_ip.", 0) == 0) continue;
      out[f] = ReadFile(NetDir() + "/" + f);
    }
    return out;
  }

  TempDir dir_;
};

TEST_F(HostLocalExec, AddResultMatchesTheReferenceInEveryVersion) {
  for (const auto& v : AllVersions()) {
    TempDir a, b;
    json conf = Conf(v);
    conf["ipam"]["dataDir"] = a.path();
    // Dual stack: 0.1.0/0.2.0 render ip4 and ip6, each with the routes of its family.
    conf["ipam"]["ranges"].push_back(json::array({{{"subnet", "fd10::/64"}, {"gateway", "fd10::fe"}}}));
    conf["ipam"]["routes"].push_back({{"dst", "::/0"}});
    conf["ipam"]["routes"].push_back({{"dst", "10.99.0.0/16"}, {"gw", "10.10.0.254"}});
    RunResult ours = Call(Ours(), "ADD", "c1", conf);
    ASSERT_EQ(ours.exit_code, 0) << v << ours.out << ours.err;
    json j = ours.Json();
    EXPECT_EQ(j["cniVersion"], v);
    if (v == "0.1.0" || v == "0.2.0") {
      EXPECT_EQ(j["ip4"]["ip"], "10.10.0.2/16") << j.dump();
      EXPECT_EQ(j["ip6"]["ip"], "fd10::1/64") << j.dump();
      EXPECT_EQ(j["ip6"]["gateway"], "fd10::fe") << j.dump();
    } else {
      EXPECT_EQ(j["ips"][0]["address"], "10.10.0.2/16") << j.dump();
      EXPECT_EQ(j["ips"][1]["address"], "fd10::1/64") << j.dump();
    }
    EXPECT_EQ(ReadFile(a / "hlnet/10.10.0.2"), "c1\r\neth0");
    if (std::find(kRefVersions.begin(), kRefVersions.end(), v) == kRefVersions.end()) continue;
    conf["ipam"]["dataDir"] = b.path();
    RunResult ref = Call(Ref(), "ADD", "c1", conf);
    ASSERT_EQ(ref.exit_code, 0) << v << ref.out;
    EXPECT_EQ(j, ref.Json()) << "version " << v << "\nours: " << ours.out << "\nref: " << ref.out;
    EXPECT_EQ(ReadFile(a / "hlnet/10.10.0.2"), ReadFile(b / "hlnet/10.10.0.2"));
    EXPECT_EQ(ReadFile(a / "hlnet/last_reserved_ip.0"), ReadFile(b / "hlnet/last_reserved_ip.0"));
  }
}

TEST_F(HostLocalExec, OursThenReference) {
  for (const auto& v : {"0.4.0", "1.0.0"}) {
    TempDir fresh;
    json conf = Conf(v);
    conf["ipam"]["dataDir"] = fresh.path();
    std::string a = AddOk(Ours(), "ours-a", conf);
    std::string b = AddOk(Ours(), "ours-b", conf);
    EXPECT_EQ(Call(Ref(), "CHECK", "ours-a", conf).exit_code, 0);
    // The reference continues the round-robin and never hands out ours.
    std::string c = AddOk(Ref(), "ref-c", conf);
    EXPECT_EQ(c, "10.10.0.4");
    EXPECT_EQ(Call(Ref(), "DEL", "ours-a", conf).exit_code, 0);
    EXPECT_FALSE(std::filesystem::exists(fresh / ("hlnet/" + a)));
    // Ours sees the reference's changes (its index is stale now) and releases the reference's address.
    EXPECT_EQ(Call(Ours(), "CHECK", "ref-c", conf).exit_code, 0);
    EXPECT_EQ(Call(Ours(), "CHECK", "ours-a", conf).exit_code, 1);
    EXPECT_EQ(Call(Ours(), "DEL", "ref-c", conf).exit_code, 0);
    EXPECT_EQ(AddOk(Ours(), "ours-d", conf), "10.10.0.5");
    std::vector<std::string> left;
    for (const auto& f : ListDir(fresh / "hlnet")) left.push_back(f);
    EXPECT_EQ(left, (std::vector<std::string>{b, "10.10.0.5", "last_reserved_ip.0", "lock"})) << v;
  }
}

TEST_F(HostLocalExec, ReferenceThenOurs) {
  json conf = Conf();
  std::string a = AddOk(Ref(), "ref-a", conf);
  AddOk(Ref(), "ref-b", conf, "net1");
  // A duplicate ADD for the reference's attachment is refused by ours too.
  RunResult dup = Call(Ours(), "ADD", "ref-a", conf);
  EXPECT_EQ(dup.exit_code, 1);
  EXPECT_THAT(dup.out, HasSubstr("duplicate"));
  EXPECT_EQ(Call(Ours(), "CHECK", "ref-a", conf).exit_code, 0);
  EXPECT_EQ(AddOk(Ours(), "ours-c", conf), "10.10.0.4");
  EXPECT_EQ(Call(Ours(), "DEL", "ref-a", conf).exit_code, 0);
  EXPECT_EQ(Call(Ours(), "DEL", "ref-a", conf).exit_code, 0);
  EXPECT_EQ(AddOk(Ref(), "ref-e", conf), "10.10.0.5");
  EXPECT_EQ(Call(Ref(), "DEL", "ours-c", conf).exit_code, 0);
  // Ours must notice that the reference removed ours-c and created ref-e.
  EXPECT_EQ(Call(Ours(), "CHECK", "ours-c", conf).exit_code, 1);
  EXPECT_EQ(Call(Ours(), "CHECK", "ref-e", conf).exit_code, 0);
  EXPECT_EQ(Reservations(),
            (std::map<std::string, std::string>{{"10.10.0.3", "ref-b\r\nnet1"}, {"10.10.0.5", "ref-e\r\neth0"}}));
  EXPECT_EQ(ReadFile(NetDir() + "/last_reserved_ip.0"), "10.10.0.5");
}

TEST_F(HostLocalExec, DelWithoutNetnsReleases) {
  json conf = Conf();
  std::string ip = AddOk(Ours(), "c1", conf);
  PluginCall del;
  del.command = "DEL";
  del.container_id = "c1";
  del.netns = "";  // no CNI_NETNS at all: IPAM must still release
  del.path = BinDir();
  RunResult r = RunPlugin(Ours(), del, conf);
  EXPECT_EQ(r.exit_code, 0) << r.out;
  EXPECT_EQ(r.out, "");
  EXPECT_TRUE(Reservations().empty());
}

TEST_F(HostLocalExec, LegacyFilesReleasedByBoth) {
  json conf = Conf();
  std::filesystem::create_directories(NetDir());
  WriteFile(NetDir() + "/10.10.0.9", "old-ctr");
  WriteFile(NetDir() + "/10.10.0.10", "old-ctr2");
  EXPECT_EQ(Call(Ours(), "CHECK", "old-ctr", conf).exit_code, 0);
  EXPECT_EQ(Call(Ours(), "DEL", "old-ctr", conf).exit_code, 0);
  EXPECT_EQ(Call(Ref(), "DEL", "old-ctr2", conf).exit_code, 0);
  EXPECT_TRUE(Reservations().empty());
}

TEST_F(HostLocalExec, StatusAndGcThroughTheBinary) {
  json conf = Conf("1.1.0", "10.20.0.0/24");
  conf["ipam"]["ranges"][0][0]["rangeEnd"] = "10.20.0.3";  // two addresses: .2 and .3
  EXPECT_EQ(Call(Ours(), "STATUS", "", conf).exit_code, 0);
  AddOk(Ours(), "a", conf);
  AddOk(Ours(), "b", conf);
  RunResult st = Call(Ours(), "STATUS", "", conf);
  EXPECT_EQ(st.exit_code, 1);
  EXPECT_EQ(st.Json()["code"], 50);
  json gc = conf;
  gc["cni.dev/valid-attachments"] = json::array({{{"containerID", "b"}, {"ifname", "eth0"}}});
  RunResult g = Call(Ours(), "GC", "", gc);
  EXPECT_EQ(g.exit_code, 0) << g.out;
  EXPECT_EQ(g.out, "");
  EXPECT_EQ(Reservations(), (std::map<std::string, std::string>{{"10.20.0.3", "b\r\neth0"}}));
  EXPECT_EQ(Call(Ours(), "STATUS", "", conf).exit_code, 0);
}

TEST_F(HostLocalExec, LockTimeoutIsCode11) {
  json conf = Conf();
  conf["ipam"]["lockTimeoutMs"] = 200;
  std::filesystem::create_directories(NetDir());
  int fd = ::open((NetDir() + "/lock").c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::flock(fd, LOCK_EX), 0);
  RunResult r = Call(Ours(), "ADD", "c1", conf);
  ::close(fd);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.Json()["code"], 11) << r.out;
  EXPECT_TRUE(Reservations().empty());
}

TEST_F(HostLocalExec, ThirtyTwoParallelMixedAddsGetDistinctAddresses) {
  json conf = Conf("1.0.0", "10.30.0.0/24");
  std::vector<RunResult> results(32);
  std::vector<std::thread> threads;
  for (int i = 0; i < 32; ++i) {
    threads.emplace_back([&, i] { results[i] = Call(i % 2 ? Ref() : Ours(), "ADD", "par" + std::to_string(i), conf); });
  }
  for (auto& t : threads) t.join();
  std::set<std::string> addrs;
  for (int i = 0; i < 32; ++i) {
    ASSERT_EQ(results[i].exit_code, 0) << i << results[i].out << results[i].err;
    addrs.insert(results[i].Json()["ips"][0]["address"].get<std::string>());
  }
  EXPECT_EQ(addrs.size(), 32u);
  auto res = Reservations();
  EXPECT_EQ(res.size(), 32u);
  std::set<std::string> owners;
  for (const auto& [ip, content] : res) owners.insert(content);
  EXPECT_EQ(owners.size(), 32u);
  for (int i = 0; i < 32; ++i) {
    std::string addr = results[i].Json()["ips"][0]["address"];
    EXPECT_EQ(res[addr.substr(0, addr.find('/'))], "par" + std::to_string(i) + "\r\neth0");
  }
}

TEST_F(HostLocalExec, ParallelAddDelLoopLeavesAnEmptyFolder) {
  json conf = Conf("1.0.0", "10.40.0.0/28");  // 13 addresses for 8 workers: wraps around many times
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int w = 0; w < 8; ++w) {
    threads.emplace_back([&, w] {
      for (int i = 0; i < 12; ++i) {
        std::string cid = "w" + std::to_string(w) + "i" + std::to_string(i);
        const std::string& add_bin = (w + i) % 2 ? Ref() : Ours();
        const std::string& del_bin = (w + i / 2) % 2 ? Ref() : Ours();
        RunResult a = Call(add_bin, "ADD", cid, conf);
        if (a.exit_code != 0) {
          ++failures;
          ADD_FAILURE() << add_bin << " ADD " << cid << ": " << a.out;
        }
        RunResult d = Call(del_bin, "DEL", cid, conf);
        if (d.exit_code != 0) {
          ++failures;
          ADD_FAILURE() << del_bin << " DEL " << cid << ": " << d.out;
        }
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(failures, 0);
  EXPECT_TRUE(Reservations().empty()) << ::testing::PrintToString(Reservations());
  // And ours still agrees with the folder afterwards.
  EXPECT_EQ(Call(Ours(), "CHECK", "w0i0", conf).exit_code, 1);
  EXPECT_FALSE(AddOk(Ours(), "after", conf).empty());
}

// Starts `bin` with the CNI environment and `conf` on stdin, output discarded. Returns the pid.
pid_t Spawn(const std::string& bin, const std::string& command, const std::string& cid, const std::string& conf_path) {
  pid_t pid = fork();
  if (pid == 0) {
    int in = ::open(conf_path.c_str(), O_RDONLY);
    int null = ::open("/dev/null", O_WRONLY);
    dup2(in, 0);
    dup2(null, 1);
    dup2(null, 2);
    std::string e1 = "CNI_COMMAND=" + command, e2 = "CNI_CONTAINERID=" + cid;
    std::string e3 = "CNI_PATH=" + bin.substr(0, bin.rfind('/'));
    char* argv[] = {const_cast<char*>(bin.c_str()), nullptr};
    char* envp[] = {
        e1.data(), e2.data(), const_cast<char*>("CNI_NETNS=/var/run/netns/x"), const_cast<char*>("CNI_IFNAME=eth0"),
        e3.data(), nullptr};
    execve(argv[0], argv, envp);
    _exit(127);
  }
  return pid;
}

TEST_F(HostLocalExec, KillNineLeavesOnlyCompleteReservations) {
  json conf = Conf("1.0.0", "10.50.0.0/24");
  conf["ipam"]["routes"] = json::array();
  std::string conf_path = dir_ / "conf.json";
  WriteFile(conf_path, conf.dump());
  std::set<std::string> started;
  // How long one ADD takes here (a sanitizer build starts far slower), as the median of the last five
  // uninterrupted ADDs: the kills are spread over it. It is measured again every tenth round, because a
  // shared machine (the test command builds other trees in the background) can change speed severalfold
  // within the test, and kills spread over a stale length all land before or after the runs.
  std::vector<long> recent_us;
  auto timed_add = [&](const std::string& cid) {
    started.insert(cid);
    int status = 0;
    auto t0 = std::chrono::steady_clock::now();
    ::waitpid(Spawn(Ours(), "ADD", cid, conf_path), &status, 0);
    recent_us.push_back(
        std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - t0).count());
    if (recent_us.size() > 5) recent_us.erase(recent_us.begin());
    return WIFEXITED(status) && WEXITSTATUS(status) == 0;
  };
  auto one_add_us = [&] {
    std::vector<long> v = recent_us;
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
  };
  // The first ADD of a network also builds its index.
  for (int i = 0; i < 5; ++i) ASSERT_TRUE(timed_add("calib" + std::to_string(i)));
  std::mt19937 rng(12345);
  int killed_running = 0;
  for (int i = 0; i < 150; ++i) {
    if (i % 10 == 9) {
      ASSERT_TRUE(timed_add("calib-k" + std::to_string(i)));
    }
    std::string cid = "k" + std::to_string(i);
    started.insert(cid);
    pid_t pid = Spawn(Ours(), "ADD", cid, conf_path);
    ASSERT_GT(pid, 0);
    // Up to two ADD lengths: some runs complete, most kills land while a run is going.
    std::this_thread::sleep_for(std::chrono::microseconds(rng() % (one_add_us() * 2 + 1)));
    if (::kill(pid, SIGKILL) == 0) {
      int status = 0;
      ::waitpid(pid, &status, 0);
      if (WIFSIGNALED(status)) ++killed_running;
    }
  }
  // Every file is either a complete reservation of a container we started, or not there; nothing else.
  std::set<std::string> owners;
  for (const auto& f : ListDir(NetDir())) {
    if (f == "lock" || f.rfind("last_reserved_ip.", 0) == 0) continue;
    std::string content = ReadFile(NetDir() + "/" + f);
    ASSERT_EQ(f.rfind("10.50.0.", 0), 0u) << "unexpected file " << f << " = " << content;
    size_t br = content.find("\r\n");
    ASSERT_NE(br, std::string::npos) << f << " = \"" << content << "\"";
    EXPECT_EQ(content.substr(br), "\r\neth0") << f;
    EXPECT_TRUE(started.count(content.substr(0, br))) << f << " = " << content;
    EXPECT_TRUE(owners.insert(content.substr(0, br)).second) << "two addresses for " << content;
  }
  RecordProperty("killed_while_running", killed_running);
  EXPECT_GT(killed_running, 10) << "the kills should interrupt runs, one ADD takes " << one_add_us() << " us";
  EXPECT_LT(killed_running, 150) << "some runs should complete";
  // Ours (index possibly interrupted mid-save) and the reference agree afterwards: DEL releases all.
  for (const auto& cid : started) {
    const std::string& bin = cid.size() % 2 ? Ours() : Ref();
    ASSERT_EQ(Call(bin, "DEL", cid, conf).exit_code, 0) << cid;
  }
  EXPECT_TRUE(Reservations().empty()) << ::testing::PrintToString(Reservations());
}

}  // namespace
}  // namespace netiface::testing
