// Deleting the UDP conntrack entries of removed mappings, as the reference does on DEL: a UDP flow that
// was DNATed keeps its entry (and its translation) until it times out otherwise. Raw ctnetlink
// (NETLINK_NETFILTER): dump the family's table, delete each entry whose original tuple is UDP to one of
// the ports. The message building and parsing are pure and unit-tested.
#pragma once

#include <cstdint>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace netiface::portmap {

// The dump request for `family` (AF_INET or AF_INET6), sequence `seq`.
std::string CtDumpRequest(int family, uint32_t seq);
// From one dump reply buffer (one or several netlink messages): the raw CTA_TUPLE_ORIG attribute (header
// included) of every entry whose original tuple is UDP to a port in `ports`. Sets *done at NLMSG_DONE;
// throws cni::Error(kNetlink) on NLMSG_ERROR.
std::vector<std::string> CtMatchingTuples(std::string_view buffer, const std::set<uint16_t>& ports, bool* done);
// The delete request for one entry, by its CTA_TUPLE_ORIG attribute.
std::string CtDeleteRequest(int family, uint32_t seq, std::string_view tuple_orig_attr);

// In the current network namespace: deletes the entries of both families whose original tuple is UDP to
// one of `ports`; returns how many. An entry already gone (ENOENT) is not an error.
size_t FlushUdpConntrack(const std::set<uint16_t>& ports);

}  // namespace netiface::portmap
