// A fake node for privileged bridge and flannel tests: a throw-away "host" namespace the plugins run in,
// a temp folder for IPAM and plugin state, and helpers that read the kernel back. Everything is removed
// by the destructors, also when a test fails.
#pragma once

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "netiface/cni/result.h"
#include "testutil.h"

namespace netiface::testing {

class Node {
 public:
  Node() : host_("bnh"), bridge_(UniqueName("tbr")) {}

  const TempNetns& host() const { return host_; }
  const TempDir& dir() const { return dir_; }
  const std::string& bridge() const { return bridge_; }
  std::string ipam_dir() const { return dir_ / "ipam"; }

  // A fresh pod namespace owned by the node.
  const TempNetns& NewPod() {
    pods_.push_back(std::make_unique<TempNetns>("bnp"));
    return *pods_.back();
  }

  // Runs `plugin` (a path) inside the host namespace against `pod` (netns "" when pod is null).
  RunResult Call(const std::string& plugin, const std::string& command, const TempNetns* pod, const std::string& cid,
                 const nlohmann::json& conf, const std::string& cni_args = "",
                 const std::string& ifname = "eth0") const {
    PluginCall c;
    c.command = command;
    c.container_id = cid;
    c.netns = pod ? pod->path() : "";
    c.ifname = ifname;
    c.args = cni_args;
    c.host_ns = host_.name();
    return RunPlugin(plugin, c, conf);
  }

  // The addresses host-local holds for `network` (its files other than lock and last_reserved_ip.*).
  std::vector<std::string> Reserved(const std::string& network) const {
    std::vector<std::string> ips;
    for (const auto& f : ListDir(ipam_dir() + "/" + network)) {
      if (f != "lock" && f.rfind("last_reserved_ip", 0) != 0) ips.push_back(f);
    }
    return ips;
  }

  // Names of the host namespace's links of a kind ("veth", "bridge", ...).
  std::vector<std::string> HostLinks(const std::string& kind) const { return LinksOfKind(host_, kind); }

  static std::vector<std::string> LinksOfKind(const TempNetns& ns, const std::string& kind) {
    std::vector<std::string> names;
    for (const auto& l : ns.IpJson("-d link show")) {
      if (l.contains("linkinfo") && l["linkinfo"].value("info_kind", "") == kind) names.push_back(l["ifname"]);
    }
    return names;
  }

  // `ip -j -d link show dev <name>` in `ns`, the object (null when absent).
  static nlohmann::json Link(const TempNetns& ns, const std::string& name) {
    auto j = ns.IpJson("-d link show dev " + name);
    return j.is_array() && !j.empty() ? j[0] : nlohmann::json();
  }

  // Global addresses on `dev` in `ns` as "addr/len".
  static std::vector<std::string> Addrs(const TempNetns& ns, const std::string& dev) {
    std::vector<std::string> out;
    for (const auto& l : ns.IpJson("addr show dev " + dev)) {
      for (const auto& a : l.value("addr_info", nlohmann::json::array())) {
        if (a.value("scope", "") == "global")
          out.push_back(a["local"].get<std::string>() + "/" + std::to_string(a["prefixlen"].get<int>()));
      }
    }
    return out;
  }

 private:
  TempNetns host_;
  TempDir dir_;
  std::string bridge_;
  std::vector<std::unique_ptr<TempNetns>> pods_;
};

// The container's first address of a result (canonical form), "" when none.
inline std::string FirstIp(const cni::Result& r, int family) {
  for (const auto& ip : r.ips) {
    if (ip.address.family() == family) return ip.address.addr().ToString();
  }
  return "";
}

}  // namespace netiface::testing
