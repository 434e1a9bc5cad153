// Everything the portmap verbs change or read outside their own memory: the rules in table inet netiface
// (nat/portmap.h) and the route_localnet sysctl, all in the namespace the plugin runs in (the host's).
// KernelOps (kernel_ops.h) is the real one; the unit tests use an in-memory double that can fail any call.
#pragma once

#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "netiface/cni/config.h"
#include "netiface/cni/ip.h"
#include "netiface/nat/portmap.h"

namespace netiface::portmap {

// What CHECK compares: the planned rules missing from the table.
struct Observed {
  std::vector<std::string> missing_rules;  // "<chain>: <rule>"
};

class Ops {
 public:
  virtual ~Ops() = default;
  // route_localnet=1 on the host interface routing to `container` (IPv4), so that connections from
  // 127.0.0.1 DNATed to it may leave the host. Nothing when no route matches. Shared by every container
  // behind that interface, as in the reference: never undone.
  virtual void EnableRouteLocalnet(const cni::IpAddr& container) = 0;
  // One nftables transaction: all or nothing.
  virtual void Apply(const nat::PortMapSpec& spec) = 0;
  virtual bool Remove(const nat::Tag& tag) = 0;
  virtual Observed Observe(const nat::PortMapSpec& spec) = 0;
  virtual void Gc(const std::string& network, const std::vector<cni::Attachment>& valid) = 0;
  // DEL: deletes the conntrack entries (both families) whose original tuple is UDP to one of `host_ports`.
  virtual void FlushUdpConntrack(const std::set<uint16_t>& host_ports) = 0;
};

}  // namespace netiface::portmap
