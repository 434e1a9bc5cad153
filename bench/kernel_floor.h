// The kernel floor: the netlink work of one ADD and one DEL done in-process with libnetlink, with no
// process start, no JSON and no IPAM. What no plugin can beat on this kernel.
#pragma once

#include "scenario.h"

namespace netiface::bench {

struct FloorReport {
  Stats add, del;
};
// veth-workload's dataplane: veth in place, /32 address, 169.254.1.1 routes, host sysctls, host route.
FloorReport RunRoutedFloor(int n);
// bridge's dataplane: bridge, veth in place, enslave, address, default route.
FloorReport RunBridgeFloor(int n);

}  // namespace netiface::bench
