// An in-memory Ops for the tuning verbs: one namespace with its links and sysctls and a map of files,
// records every call and can fail any one of them (testing::FaultSteps).
#pragma once

#include <map>
#include <optional>
#include <string>

#include "fault_steps.h"
#include "netiface/cni/error.h"
#include "netiface/tuning/ops.h"

namespace netiface::tuning::test {

class FakeOps : public Ops {
 public:
  testing::FaultSteps faults;
  bool netns = true;
  std::map<std::string, LinkState> links = {
      {"eth0", {.mac = "0a:58:0a:00:00:02", .mtu = 1500, .promisc = false, .allmulti = false, .txqlen = 1000}}};
  std::map<std::string, std::string> sysctls = {
      {"net/core/somaxconn", "4096"}, {"net/ipv4/conf/eth0/arp_filter", "0"}, {"net/ipv4/ip_forward", "0"}};
  std::map<std::string, std::string> files;

  bool NetnsExists() override {
    faults.Step("NetnsExists");
    return netns;
  }
  std::optional<LinkState> ReadLink(const std::string& ifname) override {
    faults.Step("ReadLink");
    if (!netns || !links.count(ifname)) return std::nullopt;
    return links[ifname];
  }
  std::optional<std::string> ReadSysctl(const std::string& path) override {
    faults.Step("ReadSysctl");
    if (!sysctls.count(path)) return std::nullopt;
    return sysctls[path];
  }
  void WriteSysctl(const std::string& path, const std::string& value) override {
    if (!sysctls.count(path)) throw cni::Error(cni::kIoFailure, "no such sysctl");
    faults.Step("WriteSysctl " + path, [&] { sysctls[path] = value; });
  }
  void SetMac(const std::string& ifname, const std::string& mac) override {
    faults.Step("SetMac", [&] { Link(ifname).mac = mac; });
  }
  void SetMtu(const std::string& ifname, int mtu) override {
    faults.Step("SetMtu", [&] { Link(ifname).mtu = mtu; });
  }
  void SetPromisc(const std::string& ifname, bool on) override {
    faults.Step("SetPromisc", [&] { Link(ifname).promisc = on; });
  }
  void SetAllmulti(const std::string& ifname, bool on) override {
    faults.Step("SetAllmulti", [&] { Link(ifname).allmulti = on; });
  }
  void SetTxQLen(const std::string& ifname, uint32_t q) override {
    faults.Step("SetTxQLen", [&] { Link(ifname).txqlen = q; });
  }
  std::optional<std::string> ReadFile(const std::string& path) override {
    faults.Step("ReadFile");
    if (!files.count(path)) return std::nullopt;
    return files[path];
  }
  void WriteFile(const std::string& path, const std::string& data) override {
    faults.Step("WriteFile", [&] { files[path] = data; });
  }
  void RemoveFile(const std::string& path) override {
    faults.Step("RemoveFile", [&] { files.erase(path); });
  }

 private:
  LinkState& Link(const std::string& ifname) {
    if (!links.count(ifname)) throw cni::Error(cni::kNetlink, "no such link");
    return links[ifname];
  }
};

}  // namespace netiface::tuning::test
