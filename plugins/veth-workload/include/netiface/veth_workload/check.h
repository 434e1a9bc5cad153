// CHECK as values: what the previous ADD result and the config say must exist, and the comparison
// with the observed kernel state. Pure.
#pragma once

#include <string>
#include <vector>

#include "netiface/cni/result.h"
#include "netiface/veth_workload/config.h"
#include "netiface/veth_workload/ops.h"
#include "netiface/veth_workload/plan.h"

namespace netiface::veth_workload {

struct CheckExpectation {
  std::string host_veth;
  std::string ifname;
  std::string netns;
  std::string container_mac;  // lower-case
  int mtu = kDefaultMtu;
  std::vector<cni::IpNet> addresses;  // the prevResult IPs on the container interface
  std::vector<cni::Route> routes;     // the prevResult routes
  bool has_v4 = false, has_v6 = false;
  std::vector<Sysctl> host_sysctls;
};

// Throws cni::Error(kInvalidConfig) when prevResult does not describe this attachment: no container
// interface named id.ifname in `netns`, no host interface named HostVethName(), or no IP on the
// container interface.
CheckExpectation ExpectFromPrevResult(const Config& c, const Identity& id, const cni::Result& prev,
                                      const std::string& netns);

// Every difference, described for a human; empty when the state is as expected. A route of `routes`
// without a gateway matches any gateway.
std::vector<std::string> CompareState(const CheckExpectation& e, const Observed& o);

}  // namespace netiface::veth_workload
