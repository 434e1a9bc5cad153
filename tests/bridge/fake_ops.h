// An in-memory Ops for the bridge verbs: keeps the state the real effects would leave (an address
// reserved, the pair, the masquerade rules, the bridge), records every call and can fail any one of
// them (testing::FaultSteps).
#pragma once

#include <map>
#include <optional>
#include <set>
#include <string>

#include "fault_steps.h"
#include "netiface/bridge/ops.h"

namespace netiface::bridge::test {

class FakeOps : public Ops {
 public:
  testing::FaultSteps faults;

  // State.
  bool ipam_running = false;  // started, not yet waited for
  bool ip_reserved = false;   // the allocation landed
  bool bridge_exists = false;
  std::map<std::string, std::string> veths;  // host end -> container end
  std::set<std::string> nat_rules;           // container IDs with masquerade
  cni::Result ipam_result;
  std::optional<Observed> observed;  // what Observe returns
  std::string host_veth = "veth0a0b0c0d";
  std::string container_mac = "0a:58:0a:4e:00:02";
  std::string host_mac = "ee:00:00:00:00:01";
  std::string bridge_mac = "0a:00:00:00:00:01";
  std::set<int> observed_tables;

  // The allocation lands when the background ADD finishes: an IpamDel that did not wait for it first
  // would leave the address reserved.
  void StartIpamAdd() override {
    faults.Step("StartIpamAdd", [&] { ipam_running = true; });
  }
  cni::Result WaitIpamAdd() override {
    faults.Step("WaitIpamAdd", [&] { Land(); });
    return ipam_result;
  }
  void IpamDel() override {
    Land();
    faults.Step("IpamDel", [&] { ip_reserved = false; });
  }
  void StartIpamDel() override {
    faults.Step("StartIpamDel", [&] { ip_reserved = false; });
  }
  void WaitIpamDel() override { faults.Step("WaitIpamDel"); }
  void IpamCheck() override { faults.Step("IpamCheck"); }
  void IpamStatus() override { faults.Step("IpamStatus"); }
  void IpamGc() override { faults.Step("IpamGc"); }

  void Prepare(const std::string&) override { faults.Step("Prepare"); }
  nl::LinkInfo EnsureBridge(const Config& c) override {
    faults.Step("EnsureBridge", [&] { bridge_exists = true; });
    return {.index = 3, .name = c.bridge, .kind = "bridge", .mac = bridge_mac, .admin_up = true};
  }
  std::string CreateVeth(const Config&, const nl::LinkInfo&, const std::string& ifname, const std::string&) override {
    faults.Step("CreateVeth", [&] { veths[host_veth] = ifname; });
    return host_veth;
  }
  bool DeleteHostVeth(const std::string& name) override {
    bool existed = false;
    faults.Step("DeleteHostVeth", [&] { existed = veths.erase(name) > 0; });
    return existed;
  }
  void ConfigureContainer(const Config&, const std::string&, const Plan&) override {
    faults.Step("ConfigureContainer");
  }
  void ConfigureGateway(const Config&, const nl::LinkInfo&, const Plan&) override { faults.Step("ConfigureGateway"); }
  AttachedLinks WaitUp(const std::string& name, const std::string& ifname) override {
    faults.Step("WaitUp");
    return {{.index = 7, .name = name, .kind = "veth", .mac = host_mac, .master_index = 3},
            {.index = 2, .name = ifname, .kind = "veth", .mac = container_mac, .peer_index = 7}};
  }
  bool DeleteContainerLink(const std::string& ifname) override {
    bool existed = false;
    faults.Step("DeleteContainerLink",
                [&] { existed = std::erase_if(veths, [&](const auto& kv) { return kv.second == ifname; }) > 0; });
    return existed;
  }
  Observed Observe(const Config&, const std::string&, const std::set<int>& tables,
                   const std::optional<nat::Spec>& masq) override {
    faults.Step("Observe");
    observed_tables = tables;
    Observed o = observed.value_or(Observed{});
    if (masq && !nat_rules.count(masq->tag.container_id)) o.nat_problem = "masquerade rules missing";
    return o;
  }

  void NatApply(const nat::Spec& spec) override {
    faults.Step("NatApply", [&] { nat_rules.insert(spec.tag.container_id); });
  }
  bool NatRemove(const nat::Tag& tag) override {
    bool existed = false;
    faults.Step("NatRemove", [&] { existed = nat_rules.erase(tag.container_id) > 0; });
    return existed;
  }
  void NatGc(const std::string&, const std::vector<cni::Attachment>& valid) override {
    faults.Step("NatGc", [&] {
      std::erase_if(nat_rules, [&](const std::string& cid) {
        return std::none_of(valid.begin(), valid.end(), [&](const auto& a) { return a.container_id == cid; });
      });
    });
  }

 private:
  void Land() {
    if (!ipam_running) return;
    ipam_running = false;
    ip_reserved = true;
  }
};

}  // namespace netiface::bridge::test
