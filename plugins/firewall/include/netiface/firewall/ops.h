// Everything the firewall verbs change or read outside their own memory: the rules in table inet
// netiface (nat/firewall.h), in the namespace the plugin runs in (the host's). KernelOps (kernel_ops.h)
// is the real one; the unit tests use an in-memory double that can fail any call.
#pragma once

#include <string>
#include <vector>

#include "netiface/cni/config.h"
#include "netiface/nat/firewall.h"

namespace netiface::firewall {

class Ops {
 public:
  virtual ~Ops() = default;
  // One nftables transaction: all or nothing.
  virtual void Apply(const nat::FirewallSpec& spec) = 0;
  virtual bool Remove(const nat::Tag& tag) = 0;
  // The planned rules missing from the table, as "<chain>: <rule>".
  virtual std::vector<std::string> Missing(const nat::FirewallSpec& spec) = 0;
  virtual void Gc(const std::string& network, const std::vector<cni::Attachment>& valid) = 0;
};

}  // namespace netiface::firewall
