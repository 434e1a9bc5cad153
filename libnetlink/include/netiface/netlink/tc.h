// Traffic control through libnl-route's tc API: token-bucket (tbf) root qdiscs, the ingress qdisc, a
// u32 match-all filter whose mirred action redirects to another device, and ifb devices. Every function
// acts in the namespace of the socket it is given; failures are cni::Error(kNetlink) with the errno kept.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "netiface/netlink/socket.h"

namespace netiface::nl {

// tc handles: major:minor.
inline constexpr uint32_t TcHandle(uint32_t major, uint32_t minor) { return (major << 16) | minor; }
inline constexpr uint32_t kTcRootHandle = TcHandle(1, 0);          // "1:", where tbf is attached
inline constexpr uint32_t kTcIngressHandle = TcHandle(0xffff, 0);  // "ffff:"

// A token bucket as the kernel stores it (struct tc_tbf_qopt): rate in bytes per second, the bucket as
// the time to send it in psched ticks, the queue limit in bytes.
struct TbfParams {
  uint64_t rate_bytes = 0;
  uint32_t buffer_ticks = 0;
  uint32_t limit_bytes = 0;
  bool operator==(const TbfParams&) const = default;
};

// One qdisc of a link as a dump reports it.
struct QdiscInfo {
  std::string kind;  // "tbf", "ingress", "noqueue", ...
  uint32_t handle = 0;
  uint32_t parent = 0;           // TC_H_ROOT, TC_H_INGRESS or a class
  std::optional<TbfParams> tbf;  // kind "tbf" only
};

// One classifier on a link's ingress qdisc, with the devices its mirred actions redirect to.
struct RedirectFilterInfo {
  std::string kind;  // "u32", ...
  int priority = 0;
  int protocol = 0;                     // ETH_P_ALL = 3
  uint32_t classid = 0;                 // u32's flowid
  std::vector<int> egress_redirect_to;  // ifindexes of mirred "egress redirect" actions
};

// Adds a tbf qdisc as the root of `ifindex` with handle 1:. The parameters go to the kernel exactly as
// given (libnl would otherwise recompute the buffer from a byte count and round it differently).
void AddRootTbf(Socket& s, int ifindex, const TbfParams& p);
// Adds the ingress qdisc (ffff:) to `ifindex`.
void AddIngressQdisc(Socket& s, int ifindex);
// Adds, under ffff: of `ifindex`, a u32 filter of priority 1 for every protocol that matches every
// packet (flowid 1:1) and redirects it to the egress of `target_ifindex` (mirred, stolen).
void AddRedirectFilter(Socket& s, int ifindex, int target_ifindex);
// Delete the root / the ingress qdisc of `ifindex` (and what hangs under it). False when there was none
// or the link is gone.
bool DeleteRootQdisc(Socket& s, int ifindex);
bool DeleteIngressQdisc(Socket& s, int ifindex);
// Every qdisc of `ifindex` (empty when the link is gone).
std::vector<QdiscInfo> ListQdiscs(Socket& s, int ifindex);
// The filters under the ingress qdisc of `ifindex` (empty when there is no ingress qdisc).
std::vector<RedirectFilterInfo> ListIngressFilters(Socket& s, int ifindex);
// Creates an ifb device `name` (with `mtu` when > 0), up. Throws with sys_errno() EEXIST when taken.
void CreateIfb(Socket& s, const std::string& name, int mtu);

}  // namespace netiface::nl
