// The real Ops: nat/firewall.h in the calling thread's namespace.
#pragma once

#include "netiface/firewall/ops.h"

namespace netiface::firewall {

class KernelOps : public Ops {
 public:
  void Apply(const nat::FirewallSpec& spec) override { nat::ApplyFirewall(spec); }
  bool Remove(const nat::Tag& tag) override { return nat::RemoveFirewall(tag); }
  std::vector<std::string> Missing(const nat::FirewallSpec& spec) override { return nat::MissingFirewallRules(spec); }
  void Gc(const std::string& network, const std::vector<cni::Attachment>& valid) override {
    nat::GcFirewall(network, valid);
  }
};

}  // namespace netiface::firewall
