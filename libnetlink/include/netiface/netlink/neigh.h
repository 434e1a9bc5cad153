// Permanent neighbour (ARP/NDP) entries and bridge-family FDB entries of a device (a vxlan's
// static peers). Every function acts in the namespace of the socket it is given.
#pragma once

#include <string>
#include <vector>

#include "netiface/cni/ip.h"
#include "netiface/netlink/socket.h"

namespace netiface::nl {

// `dst` is reached at hardware address `mac` on `ifindex` (NUD_PERMANENT; ARP for v4, NDP for v6).
struct NeighSpec {
  int ifindex = 0;
  cni::IpAddr dst;
  std::string mac;  // "aa:bb:cc:dd:ee:ff"
};

// Adds the entry or replaces the one for (ifindex, dst). Throws cni::Error(kInvalidConfig) for a
// bad MAC or ifindex, cni::Error(kNetlink) when the kernel refuses.
void ReplaceNeighbor(Socket& s, const NeighSpec& n);
// Deletes the entry for (ifindex, dst) whatever its MAC; false when there was none.
bool DeleteNeighbor(Socket& s, const NeighSpec& n);
// The NUD_PERMANENT IPv4 and IPv6 entries of the link (one dump), MACs in lower case.
std::vector<NeighSpec> ListPermanentNeighbors(Socket& s, int ifindex);

// Frames for `mac` leaving vxlan `ifindex` go to the underlay address `dst` (AF_BRIDGE,
// NTF_SELF, NUD_PERMANENT: `bridge fdb replace MAC dev DEV dst DST self permanent`).
struct FdbSpec {
  int ifindex = 0;
  std::string mac;
  cni::IpAddr dst;
};

// Adds the entry or replaces the destination of `mac`. Errors as ReplaceNeighbor.
void ReplaceFdb(Socket& s, const FdbSpec& f);
// Deletes the (mac, dst) entry; false when there was none (checked with one dump first: the kernel
// acknowledges a deletion naming another destination of a known MAC and deletes nothing).
bool DeleteFdb(Socket& s, const FdbSpec& f);
// The link's FDB entries that carry a destination address (one AF_BRIDGE dump), in the kernel's order.
std::vector<FdbSpec> ListFdb(Socket& s, int ifindex);

}  // namespace netiface::nl
