// A node's vxlan and routing state read back from the kernel (`ip -j`, `bridge -j`) inside its
// namespace, as sorted strings that a test compares whole: a stale entry shows up as much as a
// missing one.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "testutil.h"

namespace netiface::testing {

// `ip -d link show dev <dev>` of a vxlan device, with its global addresses.
struct VxlanLink {
  int ifindex = 0;
  std::string mac;  // the device's MAC (the VTEP MAC)
  int64_t vni = -1;
  std::string local;  // underlay source address; "" when none
  int port = 0;       // UDP destination port
  bool learning = true;
  int mtu = 0;
  std::vector<std::string> addresses;  // global-scope "addr/len", sorted
};
// nullopt when there is no such device or it is not a vxlan device.
std::optional<VxlanLink> ReadVxlanLink(const TempNetns& ns, const std::string& dev);

// `bridge fdb show dev <dev>` exactly as printed ("" when the device is missing).
std::string FdbText(const TempNetns& ns, const std::string& dev);
// The same entries from `bridge -j fdb show dev <dev>`: "<mac> dst <ip>[ self][ permanent]", sorted.
std::vector<std::string> FdbEntries(const TempNetns& ns, const std::string& dev);

// `ip neigh show dev <dev> nud permanent`: "<ip> lladdr <mac>", sorted. Both families.
std::vector<std::string> PermanentNeighbours(const TempNetns& ns, const std::string& dev);

// Routes of `protocol` in the main table of one family (4 or 6): "<dst> via <gw> dev <dev>[ onlink]",
// sorted ("<dst> dev <dev>" without a gateway).
std::vector<std::string> ProtoRoutes(const TempNetns& ns, int family, int protocol = 78);

}  // namespace netiface::testing
