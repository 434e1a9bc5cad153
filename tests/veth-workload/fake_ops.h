// A test double of Ops: keeps the state the real effects would leave (IP reserved, links, NAT rules,
// records), records every call, and can fail one named call before or after its effect.
#pragma once

#include <map>
#include <set>
#include <string>
#include <vector>

#include "fault_steps.h"
#include "netiface/cni/error.h"
#include "netiface/veth_workload/ops.h"

namespace netiface::veth_workload::test {

// What a correct ADD of `plan` leaves in the kernel, as Observe would read it.
inline Observed ObservedFor(const Plan& plan, const std::string& container_mac) {
  Observed o;
  o.netns_exists = true;
  o.container_link = nl::LinkInfo{.index = 2,
                                  .name = plan.id.ifname,
                                  .kind = "veth",
                                  .mac = container_mac,
                                  .mtu = plan.mtu,
                                  .admin_up = true,
                                  .oper_up = true,
                                  .peer_index = 7};
  o.host_link = nl::LinkInfo{.index = 7,
                             .name = plan.host_veth,
                             .kind = "veth",
                             .mac = "ee:ee:ee:ee:ee:ee",
                             .mtu = plan.mtu,
                             .admin_up = true,
                             .oper_up = true,
                             .peer_index = 2};
  o.container_addresses = plan.addresses;
  o.container_addresses.push_back(*cni::IpNet::Parse("fe80::1/64"));
  for (const auto& r : plan.container_routes) o.container_routes.push_back({.dst = r.dst, .gw = r.gw, .ifindex = 2});
  for (const auto& d : plan.host_routes) o.host_routes.push_back({.dst = d, .ifindex = 7});
  for (const auto& s : plan.host_sysctls) o.host_sysctls.emplace_back(s.key, s.value);
  return o;
}

// Injection (testing::FaultSteps): the first call named fail_at throws cni::Error(kNetlink), before its
// effect or after it; `calls` records every call.
class FakeOps : public Ops, public testing::FaultSteps {
 public:
  // State.
  bool ip_reserved = false;
  bool ipam_running = false;                            // started, not yet waited for
  bool ipam_in_process = false;                         // a started ADD is finished at once
  std::map<std::string, std::string> links;             // host veth -> container ifname
  std::set<std::string> nat_rules;                      // container IDs with rules
  std::map<std::string, EndpointRecord> records;        // folder/name -> record
  std::map<std::string, EndpointRecord> by_attachment;  // "cid:ifname" -> record, as the store's links
  cni::Result ipam_result;
  std::string container_mac = "0a:58:0a:00:00:02";
  std::optional<Observed> observed;  // what Observe returns
  std::vector<std::string> deleted_host_veths;

  // Like the real one, the allocation lands when the background ADD finishes, which the waiter
  // stands for: an IpamDel() before it would leave the address reserved.
  void StartIpamAdd() override {
    Step("IpamAdd", [&] { ipam_running = true; });
  }
  cni::Result WaitIpamAdd() override {
    Land();
    return ipam_result;
  }
  bool IpamAddFinished() override { return ipam_running && ipam_in_process; }
  // As the real one, waits for a running ADD before it releases.
  void IpamDel() override {
    Land();
    Step("IpamDel", [&] { ip_reserved = false; });
  }
  void IpamCheck() override {
    Step("IpamCheck", [] {});
  }
  void IpamStatus() override {
    Step("IpamStatus", [] {});
  }
  void IpamGc() override {
    Step("IpamGc", [] {});
  }

  void Prepare(const std::string&) override {
    Step("Prepare", [] {});
  }
  bool DeleteHostVeth(const std::string& name) override {
    bool existed = false;
    Step("DeleteHostVeth", [&] {
      deleted_host_veths.push_back(name);
      existed = links.erase(name) > 0;
    });
    return existed;
  }
  std::string CreateVeth(const Plan& plan) override {
    Step("CreateVeth", [&] { links[plan.host_veth] = plan.id.ifname; });
    return plan.requested_mac.empty() ? container_mac : plan.requested_mac;
  }
  void ConfigureContainer(const Plan&) override {
    Step("ConfigureContainer", [] {});
  }
  void ConfigureHost(const Plan&) override {
    Step("ConfigureHost", [] {});
  }
  bool DeleteContainerLink(const std::string& ifname) override {
    bool existed = false;
    Step("DeleteContainerLink", [&] {
      for (auto it = links.begin(); it != links.end(); ++it) {
        if (it->second == ifname) {
          links.erase(it);
          existed = true;
          break;
        }
      }
    });
    return existed;
  }
  Observed Observe(const std::string&, const std::string&, const std::vector<std::string>&) override {
    Step("Observe", [] {});
    return observed.value_or(Observed{});
  }

  void NatApply(const nat::Spec& spec) override {
    Step("NatApply", [&] { nat_rules.insert(spec.tag.container_id); });
  }
  bool NatRemove(const nat::Tag& tag) override {
    bool existed = false;
    Step("NatRemove", [&] { existed = nat_rules.erase(tag.container_id) > 0; });
    return existed;
  }
  void NatVerify(const nat::Spec& spec) override {
    Step("NatVerify", [&] {
      if (!nat_rules.count(spec.tag.container_id)) throw cni::Error(cni::kNatFailure, "NAT rules missing");
    });
  }
  void NatGc(const std::string&, const std::vector<cni::Attachment>& valid) override {
    Step("NatGc", [&] {
      for (auto it = nat_rules.begin(); it != nat_rules.end();) {
        bool keep = false;
        for (const auto& a : valid) keep = keep || a.container_id == *it;
        it = keep ? std::next(it) : nat_rules.erase(it);
      }
    });
  }

  void WriteRecord(const EndpointRecord& r) override {
    Step("WriteRecord", [&] {
      records[r.Folder() + "/" + r.name] = r;
      by_attachment[r.container_id + ":" + r.ifname] = r;
    });
  }
  std::optional<EndpointRecord> ReadRecord(const std::string& folder, const std::string& name) override {
    std::optional<EndpointRecord> out;
    Step("ReadRecord", [&] {
      auto it = records.find(folder + "/" + name);
      if (it != records.end()) out = it->second;
    });
    return out;
  }
  std::optional<EndpointRecord> FindRecord(const std::string& container_id, const std::string& ifname) override {
    std::optional<EndpointRecord> out;
    Step("FindRecord", [&] {
      auto it = by_attachment.find(container_id + ":" + ifname);
      if (it != by_attachment.end()) out = it->second;
    });
    return out;
  }
  bool RemoveRecord(const std::string& folder, const std::string& name, const std::string& container_id,
                    const std::string& ifname) override {
    bool removed = false;
    Step("RemoveRecord", [&] {
      by_attachment.erase(container_id + ":" + ifname);
      auto it = records.find(folder + "/" + name);
      if (it != records.end() && it->second.container_id == container_id) {
        records.erase(it);
        removed = true;
      }
    });
    return removed;
  }
  std::vector<EndpointRecord> RemoveStaleRecords(const std::vector<cni::Attachment>& valid,
                                                 std::vector<std::string>&) override {
    std::vector<EndpointRecord> removed;
    Step("RemoveStaleRecords", [&] {
      for (auto it = records.begin(); it != records.end();) {
        cni::Attachment a{it->second.container_id, it->second.ifname};
        if (std::find(valid.begin(), valid.end(), a) != valid.end()) {
          ++it;
        } else {
          removed.push_back(it->second);
          it = records.erase(it);
        }
      }
      std::erase_if(by_attachment, [&](const auto& kv) {
        cni::Attachment a{kv.second.container_id, kv.second.ifname};
        return std::find(valid.begin(), valid.end(), a) == valid.end();
      });
    });
    return removed;
  }

  void Land() {
    if (!ipam_running) return;
    ipam_running = false;
    calls.push_back("IpamAddWait");
    ip_reserved = true;
  }
};

}  // namespace netiface::veth_workload::test
