// The vxlan backend (flannel's default): one vxlan device per family (flannel.<VNI>, flannel-v6.<VNI>)
// with a VTEP MAC derived from the node's public IP, and per remote vxlan lease a permanent neighbour
// entry, a permanent FDB entry and an onlink route through the device (or, with DirectRouting and the
// peer on the uplink's own subnet, a plain route via its public IP). The reconcile loop also keeps the
// devices right: a deleted or changed device is re-created and every peer's entries come back.
#pragma once

#include <memory>

#include "netiface/agent/backend.h"
#include "netiface/agent/hostgw.h"
#include "netiface/agent/vxlan_plan.h"

namespace netiface::agent {

// `ipv6`: dual stack (REQUIRES uplink.public_ipv6). The socket acts in the namespace current at this call.
std::unique_ptr<Backend> MakeVxlanBackend(const Uplink& uplink, const VxlanConfig& cfg, bool ipv6,
                                          int protocol = kDefaultRouteProtocol);

// The cleanup command: deletes every vxlan device named flannel.<N> or flannel-v6.<N> in the current
// namespace. Returns how many.
int RemoveVxlanDevices();

}  // namespace netiface::agent
