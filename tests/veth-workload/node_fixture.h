// Fixture of veth-workload's privileged tests: a fake node (a throw-away "host" namespace with an
// uplink and default routes, so that proxy ARP answers for 169.254.1.1, and IPv6 forwarding on) plus
// pod namespaces, per-test data folders for host-local and the endpoint store, and helpers to call
// the built plugin inside the host namespace. Nothing touches this machine's own namespace.
#pragma once

#include <unistd.h>

#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "netiface/cni/ip.h"
#include "testutil.h"

namespace netiface::veth_workload::test {

using nlohmann::json;
namespace t = netiface::testing;

inline const char* kV4Range = R"([[{"subnet":"10.77.0.0/24"}]])";
inline const char* kV6Range = R"([[{"subnet":"fd77::/64"}]])";
inline const char* kDualRange = R"([[{"subnet":"10.77.0.0/24"}],[{"subnet":"fd77::/64"}]])";

class NodeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    NETIFACE_REQUIRE_ROOT();
    for (const char* p : {"veth-workload", "host-local"}) {
      if (::access(t::Bin(p).c_str(), X_OK) != 0) GTEST_SKIP() << t::Bin(p) << " is not built";
    }
    host_ = std::make_unique<t::TempNetns>("vwh");
    auto r = host_->Sh(
        "set -e; ip link add up0 type veth peer name up0p; ip link set up0 up; ip link set up0p up;"
        "ip addr add 192.168.250.1/24 dev up0; ip route add default via 192.168.250.254 dev up0;"
        "ip -6 addr add fd00:250::1/64 dev up0 nodad; ip -6 route add default via fd00:250::fe dev up0;"
        "sysctl -qw net.ipv6.conf.all.forwarding=1");
    ASSERT_EQ(r.exit_code, 0) << r.err;
  }

  json Conf(const std::string& version, const char* ranges = kV4Range, const std::string& network = "vwnet") const {
    return {{"cniVersion", version},
            {"name", network},
            {"type", "veth-workload"},
            {"nodename", "node1"},
            {"dataDir", dir_ / "endpoints"},
            {"ipam", {{"type", "host-local"}, {"dataDir", dir_ / "ipam"}, {"ranges", json::parse(ranges)}}}};
  }

  const t::TempNetns& NewPod() {
    pods_.push_back(std::make_unique<t::TempNetns>("vwp"));
    return *pods_.back();
  }

  t::RunResult Call(const std::string& command, const t::TempNetns* pod, const std::string& cid, const json& conf,
                    const std::string& args = "", const std::string& ifname = "eth0",
                    const std::string& cni_path = "") const {
    t::PluginCall call;
    call.command = command;
    call.container_id = cid;
    call.netns = pod ? pod->path() : "";
    call.ifname = ifname;
    call.args = args;
    call.host_ns = host_->name();
    call.path = cni_path;
    return t::RunPlugin(t::Bin("veth-workload"), call, conf);
  }
  // ADD that must succeed; returns the result.
  json Add(const t::TempNetns& pod, const std::string& cid, const json& conf, const std::string& args = "",
           const std::string& ifname = "eth0") const {
    auto r = Call("ADD", &pod, cid, conf, args, ifname);
    EXPECT_EQ(r.exit_code, 0) << "ADD " << cid << ": " << r.out << r.err;
    return r.exit_code == 0 ? r.Json() : json();
  }
  void Del(const t::TempNetns* pod, const std::string& cid, const json& conf, const std::string& args = "",
           const std::string& ifname = "eth0") const {
    auto r = Call("DEL", pod, cid, conf, args, ifname);
    EXPECT_EQ(r.exit_code, 0) << "DEL " << cid << ": " << r.out << r.err;
  }

  // host-local's reservation files of `network` (files named by an IP address).
  std::vector<std::string> Reserved(const std::string& network = "vwnet") const {
    std::vector<std::string> out;
    for (const auto& f : t::ListDir(dir_ / ("ipam/" + network))) {
      if (cni::IpAddr::Parse(f)) out.push_back(f);
    }
    return out;
  }
  // Endpoint record files (<dataDir>/<network>/<folder>/<name>.json).
  std::vector<std::string> Records(const std::string& network = "vwnet") const {
    std::vector<std::string> out;
    std::string base = dir_ / ("endpoints/" + network);
    for (const auto& folder : t::ListDir(base)) {
      if (folder.starts_with(".")) continue;
      for (const auto& f : t::ListDir(base + "/" + folder)) out.push_back(folder + "/" + f);
    }
    return out;
  }
  // The store's second names of the records, "<containerID>:<ifname>".
  std::vector<std::string> AttachmentLinks(const std::string& network = "vwnet") const {
    return t::ListDir(dir_ / ("endpoints/" + network + "/.by-attachment"));
  }
  // Names of the host namespace's links other than lo and the uplink pair.
  std::vector<std::string> HostLinks() const {
    std::vector<std::string> out;
    for (const auto& l : host_->IpJson("link show")) {
      std::string n = l.value("ifname", "");
      if (n != "lo" && n != "up0" && n != "up0p") out.push_back(n);
    }
    return out;
  }
  // Host routes that are not the uplink's own.
  std::vector<std::string> HostPodRoutes() const {
    std::vector<std::string> out;
    for (const char* fam : {"-4", "-6"}) {
      for (const auto& r : host_->IpJson(std::string(fam) + " route show")) {
        std::string dev = r.value("dev", "");
        if (dev != "up0" && dev != "up0p" && dev != "lo") out.push_back(r.value("dst", "") + " dev " + dev);
      }
    }
    return out;
  }
  std::string HostSysctl(const std::string& key) const {
    auto r = host_->Sh("cat /proc/sys/" + key);
    return r.out.substr(0, r.out.find('\n'));
  }

  // Declared first: destroyed last, after the pods.
  t::TempDir dir_;
  std::unique_ptr<t::TempNetns> host_;
  std::vector<std::unique_ptr<t::TempNetns>> pods_;
};

// "10.77.0.2" from "10.77.0.2/32".
inline std::string Bare(const std::string& cidr) { return cidr.substr(0, cidr.find('/')); }

// The addresses of a result of any version.
inline std::vector<std::string> ResultIps(const json& r) {
  std::vector<std::string> out;
  if (r.contains("ips")) {
    for (const auto& ip : r["ips"]) out.push_back(ip["address"].get<std::string>());
  }
  for (const char* key : {"ip4", "ip6"}) {
    if (r.contains(key)) out.push_back(r[key]["ip"].get<std::string>());
  }
  return out;
}

}  // namespace netiface::veth_workload::test
