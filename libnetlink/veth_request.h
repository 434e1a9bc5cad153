// Internal to libnetlink (and its unit tests): the RTM_NEWLINK request CreateVeth sends.
#pragma once

#include "netiface/netlink/link.h"
#include "nl_util.h"

namespace netiface::nl::detail {

// One RTM_NEWLINK (NLM_F_CREATE|NLM_F_EXCL) for a veth pair: `name` in the socket's namespace and
// the peer, nested under IFLA_INFO_DATA/VETH_INFO_PEER, with IFLA_NET_NS_FD = spec.peer_ns->fd()
// when a peer namespace is given. MTU, MACs and queue counts are set on both ends.
// Throws cni::Error(kInvalidConfig) for an invalid name or MAC.
MsgPtr BuildVethRequest(const VethSpec& spec);

}  // namespace netiface::nl::detail
