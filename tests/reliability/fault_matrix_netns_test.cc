// A fault at every step: each stock chain is ADDed once with the fault hook tracing (libcni/fault.h),
// which lists every point each plugin of the chain reaches; then, for every point and for both modes
// (the step fails and the ADD rolls back, or the process is killed there with no rollback at all), the
// ADD is repeated with the fault aimed at that point, and a DEL follows, as a runtime sends one after a
// failed ADD. Afterwards the node and the pod must be exactly as after a clean ADD and DEL: links,
// addresses, routes, sysctls, the nft ruleset, qdiscs, and every file under the test's data folders
// (reservations, index, endpoint records, saved flannel configs, tuning backups, the result cache,
// temporaries), listed before and after and compared.
//
// The chains (our binaries only, through the netiface CLI, in a throw-away node namespace):
//   flannel + portmap                                 (flannel's stock conflist; bridge + host-local below)
//   veth-workload (+ host-local) + bandwidth + portmap (Calico's shape)
//   bridge (+ host-local) + portmap + firewall + tuning (podman's default network)
//   loopback
#include <sys/stat.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <set>
#include <sstream>

#include <gtest/gtest.h>

#include "ruleset.h"
#include "testutil.h"

namespace netiface::testing {
namespace {

using nlohmann::json;
namespace fs = std::filesystem;

struct Point {
  std::string program;
  int index;
  std::string what;
};

class FaultMatrixNetnsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    NETIFACE_REQUIRE_ROOT();
    node_ = std::make_unique<TempNetns>("fmn");
    fs::create_directories(dir_ / "net.d");
    ASSERT_EQ(node_
                  ->Sh("ip link set lo up && sysctl -qw net.ipv4.ip_forward=1 && ip link add up0 type veth peer "
                       "name up1 && ip addr add 198.51.100.1/24 dev up0 && ip link set up0 up && ip link set up1 up "
                       "&& ip route add default via 198.51.100.2")
                  .exit_code,
              0);
  }

  // `netiface ARGS` in the node namespace with `extra` in its environment (which the CLI hands to the
  // plugins, and they to their delegates).
  RunResult Netiface(std::vector<std::string> args, const std::map<std::string, std::string>& extra = {}) {
    std::vector<std::string> argv = {"/usr/bin/nsenter", "--net=" + node_->path(), "--", Bin("netiface")};
    argv.insert(argv.end(), args.begin(), args.end());
    argv.insert(argv.end(), {"--conf-dir", dir_ / "net.d", "--cni-path", BinDir(), "--cache-dir", dir_ / "cache"});
    std::map<std::string, std::string> env = {{"PATH", "/usr/sbin:/usr/bin:/sbin:/bin"}};
    if (const char* asan = std::getenv("ASAN_OPTIONS")) env["ASAN_OPTIONS"] = asan;
    env.insert(extra.begin(), extra.end());
    return testing::Run(argv, env);
  }

  void WriteList(const std::string& name, json plugins) {
    json l = {{"cniVersion", "1.0.0"}, {"name", name}, {"plugins", std::move(plugins)}};
    WriteFile(dir_ / ("net.d/" + name + ".conflist"), l.dump(2));
  }

  json HostLocal(const std::string& subnet) const {
    return {{"type", "host-local"},
            {"dataDir", dir_ / "ipam"},
            {"ranges", json::array({json::array({{{"subnet", subnet}}})})},
            {"routes", json::array({{{"dst", "0.0.0.0/0"}}})}};
  }

  // The routes of a namespace without the IPv6 link-local ones, which the kernel adds when it is done
  // with duplicate address detection, whenever that is, and without the carrier's "linkdown".
  static std::string Routes(const TempNetns& ns) {
    std::istringstream in(ns.Sh("ip route show table all; ip -6 route show table all").out);
    std::string out;
    for (std::string l; std::getline(in, l);) {
      if (l.find("fe80::") != std::string::npos) continue;
      if (auto at = l.find(" linkdown"); at != std::string::npos) l.erase(at, 9);  // carrier again
      out += l + "\n";
    }
    return out;
  }

  // Everything a chain may change and must give back, in one value.
  json State(const TempNetns& pod) const {
    const json nft = RulesetWithoutHandles(*node_);
    json qdiscs = json::array();
    for (json q : node_->Sh("tc -j qdisc show").Json()) {
      q.erase("refcnt");
      qdiscs.push_back(q);
    }
    auto links = [](const TempNetns& ns) {
      json out = json::array();
      for (const json& l : ns.IpJson("-d link show")) {
        // Carrier is not configuration: a bridge has it while a port is up, and loses it a moment after
        // the last port goes, whenever the kernel gets to it.
        json flags = json::array();
        for (const json& f : l.value("flags", json::array())) {
          if (f != "NO-CARRIER" && f != "LOWER_UP") flags.push_back(f);
        }
        out.push_back({l["ifname"], l.value("mtu", 0), flags, l.value("master", ""), l.value("promiscuity", 0)});
      }
      return out;
    };
    auto addrs = [](const TempNetns& ns) {
      json out = json::array();
      for (const json& l : ns.IpJson("addr show")) {
        for (const json& a : l.value("addr_info", json::array())) {
          if (a.value("scope", "") != "link") out.push_back({l["ifname"], a["local"], a["prefixlen"]});
        }
      }
      return out;
    };
    const std::string sysctls =
        "sysctl net.ipv4.ip_forward net.ipv4.conf.all.forwarding net.ipv4.conf.all.route_localnet "
        "net.ipv6.conf.all.forwarding net.core.somaxconn";
    return {{"nft", nft},
            {"qdiscs", qdiscs},
            {"node_links", links(*node_)},
            {"node_addrs", addrs(*node_)},
            {"node_routes", Routes(*node_)},
            {"node_sysctls", node_->Sh(sysctls).out},
            {"pod_links", links(pod)},
            {"pod_addrs", addrs(pod)},
            {"pod_routes", Routes(pod)},
            {"pod_sysctls", pod.Sh(sysctls).out},
            {"files", Files()}};
  }

  // Every file under the test's folder but the configs, with its content. host-local's cursor
  // (last_reserved_ip.N) moves with every ADD, as the reference's does: its name is kept, not its content.
  json Files() const {
    json out = json::object();
    for (const auto& e : fs::recursive_directory_iterator(dir_.path())) {
      const std::string rel = fs::relative(e.path(), dir_.path()).string();
      if (rel.starts_with("net.d") || rel == "subnet.env" || rel == "trace") continue;
      if (!e.is_regular_file()) {
        out[rel] = "<dir>";
      } else if (e.path().filename().string().starts_with("last_reserved_ip.")) {
        out[rel] = "<cursor>";
      } else if (e.path().filename() == "stamp") {
        out[rel] = "<stamp>";  // the index's record of the folder's mtime: it moves with every change
      } else {
        out[rel] = ReadFile(e.path());
      }
    }
    return out;
  }

  // The points of a clean ADD of `net` (which must succeed), then its DEL.
  std::vector<Point> Trace(const std::string& net, const TempNetns& pod, const std::vector<std::string>& flags) {
    fs::remove(dir_ / "trace");
    std::vector<std::string> add = {"add", net, pod.path()};
    add.insert(add.end(), flags.begin(), flags.end());
    RunResult r = Netiface(add, {{"NETIFACE_FAULT_TRACE", dir_ / "trace"}});
    EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
    EXPECT_EQ(Netiface({"del", net, pod.path()}).exit_code, 0);
    std::vector<Point> points;
    std::istringstream in(fs::exists(dir_ / "trace") ? ReadFile(dir_ / "trace") : "");
    for (std::string line; std::getline(in, line);) {
      std::istringstream l(line);
      Point p;
      l >> p.program >> p.index;
      std::getline(l >> std::ws, p.what);
      points.push_back(p);
    }
    return points;
  }

  // The matrix for one chain: every traced point, failed and killed, each followed by a DEL.
  void Walk(const std::string& net, const std::vector<std::string>& flags, const std::set<std::string>& programs) {
    TempNetns pod("fmp");
    // A clean cycle first: what stays after it (the bridge, host-local's lock and cursor) is the baseline.
    const std::vector<Point> points = Trace(net, pod, flags);
    const json before = State(pod);
    std::set<std::string> seen;
    for (const Point& p : points) seen.insert(p.program);
    EXPECT_EQ(seen, programs) << "the programs whose points the clean ADD reached";
    for (const Point& p : points) {
      for (const char* mode : {"fail", "kill"}) {
        const std::string fault = p.program + ":" + mode + ":" + std::to_string(p.index);
        std::vector<std::string> add = {"add", net, pod.path()};
        add.insert(add.end(), flags.begin(), flags.end());
        RunResult r = Netiface(add, {{"NETIFACE_FAULT", fault}});
        EXPECT_NE(r.exit_code, 0) << fault << " (" << p.what << "): the ADD succeeded\n" << r.out;
        RunResult del = Netiface({"del", net, pod.path()});
        EXPECT_EQ(del.exit_code, 0) << fault << ": DEL failed\n" << del.out << del.err;
        const json after = State(pod);
        if (after != before) {
          ADD_FAILURE() << net << ": " << fault << " (" << p.what << ") left the node changed (a JSON patch from "
                        << "the clean state to this one): " << json::diff(before, after).dump()
                        << "\nADD said: " << r.out << r.err;
          return;  // the rest would be compared against a moved baseline
        }
        std::printf("covered: %-16s %-13s point %2d %-4s %s\n", net.c_str(), p.program.c_str(), p.index, mode,
                    p.what.c_str());
      }
    }
    std::printf("%s: %zu points x 2 modes\n", net.c_str(), points.size());
  }

  std::unique_ptr<TempNetns> node_;
  TempDir dir_;
};

TEST_F(FaultMatrixNetnsTest, Flannel) {
  WriteFile(dir_ / "subnet.env",
            "FLANNEL_NETWORK=10.244.0.0/16\nFLANNEL_SUBNET=10.244.7.1/24\nFLANNEL_MTU=1450\nFLANNEL_IPMASQ=true\n");
  WriteList("fm-flannel", {{{"type", "flannel"},
                            {"subnetFile", dir_ / "subnet.env"},
                            {"dataDir", dir_ / "flannel"},
                            {"ipam", {{"dataDir", dir_ / "ipam"}}},
                            {"delegate", {{"hairpinMode", true}, {"isDefaultGateway", true}}}},
                           {{"type", "portmap"}, {"capabilities", {{"portMappings", true}}}}});
  Walk("fm-flannel", {"-p", "8080:80/tcp"}, {"flannel", "bridge", "host-local", "portmap"});
}

TEST_F(FaultMatrixNetnsTest, CalicoShaped) {
  WriteList("fm-calico", {{{"type", "veth-workload"},
                           {"nodename", "fm-node"},
                           {"dataDir", dir_ / "endpoints"},
                           {"ipMasq", true},
                           {"ipam", HostLocal("10.245.3.0/24")}},
                          {{"type", "bandwidth"}, {"capabilities", {{"bandwidth", true}}}},
                          {{"type", "portmap"}, {"capabilities", {{"portMappings", true}}}, {"snat", true}}});
  Walk("fm-calico",
       {"-p", "8080:80/tcp", "--ingress-rate", "8000000", "--ingress-burst", "80000", "--egress-rate", "16000000",
        "--egress-burst", "160000"},
       {"veth-workload", "host-local", "bandwidth", "portmap"});
}

TEST_F(FaultMatrixNetnsTest, PodmanShaped) {
  WriteList("fm-podman", {{{"type", "bridge"},
                           {"bridge", "fmbr0"},
                           {"isGateway", true},
                           {"ipMasq", true},
                           {"hairpinMode", true},
                           {"ipam", HostLocal("10.246.5.0/24")}},
                          {{"type", "portmap"}, {"capabilities", {{"portMappings", true}}}},
                          {{"type", "firewall"}},
                          {{"type", "tuning"},
                           {"dataDir", dir_ / "tuning"},
                           {"sysctl", {{"net.core.somaxconn", "511"}}},
                           {"mtu", 1400},
                           {"promisc", true}}});
  Walk("fm-podman", {"-p", "8080:80/tcp"}, {"bridge", "host-local", "portmap", "firewall", "tuning"});
}

TEST_F(FaultMatrixNetnsTest, Loopback) {
  WriteList("fm-lo", {{{"type", "loopback"}}});
  Walk("fm-lo", {}, {"loopback"});
}

}  // namespace
}  // namespace netiface::testing
