// An in-memory Ops for the firewall verbs: the rule sets per tag, every call recorded, any call can fail
// (testing::FaultSteps).
#pragma once

#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "fault_steps.h"
#include "netiface/firewall/ops.h"

namespace netiface::firewall::test {

using Key = std::tuple<std::string, std::string, std::string>;  // network, container, ifname

class FakeOps : public Ops {
 public:
  testing::FaultSteps faults;
  std::map<Key, nat::FirewallSpec> installed;

  static Key KeyOf(const nat::Tag& t) { return {t.network, t.container_id, t.ifname}; }

  void Apply(const nat::FirewallSpec& spec) override {
    faults.Step("Apply", [&] { installed[KeyOf(spec.tag)] = spec; });
  }
  bool Remove(const nat::Tag& tag) override {
    bool had = false;
    faults.Step("Remove", [&] { had = installed.erase(KeyOf(tag)) > 0; });
    return had;
  }
  std::vector<std::string> Missing(const nat::FirewallSpec& spec) override {
    faults.Step("Missing");
    auto it = installed.find(KeyOf(spec.tag));
    if (it == installed.end()) return {"firewall_forward: everything"};
    std::vector<std::string> out;
    for (const auto& a : spec.addrs) {
      if (std::find(it->second.addrs.begin(), it->second.addrs.end(), a) == it->second.addrs.end()) {
        out.push_back("firewall_forward: " + a.ToString());
      }
    }
    if (it->second.isolated_bridge != spec.isolated_bridge)
      out.push_back("firewall_isolation: " + spec.isolated_bridge);
    return out;
  }
  void Gc(const std::string& network, const std::vector<cni::Attachment>& valid) override {
    faults.Step("Gc", [&] {
      std::erase_if(installed, [&](const auto& kv) {
        const auto& [net, cid, ifname] = kv.first;
        return net == network && std::find(valid.begin(), valid.end(), cni::Attachment{cid, ifname}) == valid.end();
      });
    });
  }
};

}  // namespace netiface::firewall::test
