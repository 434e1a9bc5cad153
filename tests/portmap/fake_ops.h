// An in-memory Ops for the portmap verbs: keeps the rules the real Apply would leave (per tag), the
// route_localnet switches, records every call and can fail any one of them (testing::FaultSteps).
#pragma once

#include <algorithm>
#include <map>
#include <set>
#include <string>

#include "fault_steps.h"
#include "netiface/portmap/ops.h"

namespace netiface::portmap::test {

inline std::string Key(const nat::Tag& t) { return t.network + "/" + t.container_id + "/" + t.ifname; }

class FakeOps : public Ops {
 public:
  testing::FaultSteps faults;
  std::map<std::string, nat::PortMapSpec> rules;  // Key(tag) -> what Apply installed
  std::set<std::string> route_localnet;           // container addresses whose host side has it on
  std::set<uint16_t> flushed;                     // UDP host ports whose conntrack entries were deleted

  void EnableRouteLocalnet(const cni::IpAddr& container) override {
    faults.Step("EnableRouteLocalnet", [&] { route_localnet.insert(container.ToString()); });
  }
  void Apply(const nat::PortMapSpec& spec) override {
    faults.Step("Apply", [&] { rules[Key(spec.tag)] = spec; });
  }
  bool Remove(const nat::Tag& tag) override {
    bool existed = false;
    faults.Step("Remove", [&] { existed = rules.erase(Key(tag)) > 0; });
    return existed;
  }
  Observed Observe(const nat::PortMapSpec& spec) override {
    faults.Step("Observe");
    Observed o;
    auto it = rules.find(Key(spec.tag));
    if (it == rules.end()) {
      o.missing_rules.push_back("portmap_prerouting: all");
    } else {
      for (const auto& m : spec.mappings) {
        if (std::find(it->second.mappings.begin(), it->second.mappings.end(), m) == it->second.mappings.end()) {
          o.missing_rules.push_back("portmap_prerouting: " + m.protocol + " dport " + std::to_string(m.host_port));
        }
      }
    }
    return o;
  }
  void FlushUdpConntrack(const std::set<uint16_t>& host_ports) override {
    faults.Step("FlushUdpConntrack", [&] { flushed.insert(host_ports.begin(), host_ports.end()); });
  }
  void Gc(const std::string& network, const std::vector<cni::Attachment>& valid) override {
    faults.Step("Gc", [&] {
      std::erase_if(rules, [&](const auto& kv) {
        const nat::Tag& t = kv.second.tag;
        return t.network == network && std::none_of(valid.begin(), valid.end(), [&](const cni::Attachment& a) {
                 return a.container_id == t.container_id && a.ifname == t.ifname;
               });
      });
    });
  }
};

}  // namespace netiface::portmap::test
