// Internal to libnetlink: owning wrappers for libnl objects, address conversion, and one
// request/reply loop for the calls libnl has no single-round-trip helper for.
#pragma once

#include <functional>
#include <memory>
#include <string>

#include <netlink/addr.h>
#include <netlink/msg.h>
#include <netlink/object.h>
#include <netlink/route/addr.h>
#include <netlink/route/link.h>
#include <netlink/route/route.h>

#include "netiface/cni/ip.h"
#include "netiface/netlink/socket.h"

namespace netiface::nl::detail {

struct LinkDeleter {
  void operator()(rtnl_link* p) const noexcept { rtnl_link_put(p); }
};
struct AddrDeleter {
  void operator()(rtnl_addr* p) const noexcept { rtnl_addr_put(p); }
};
struct RouteDeleter {
  void operator()(rtnl_route* p) const noexcept { rtnl_route_put(p); }
};
struct NlAddrDeleter {
  void operator()(nl_addr* p) const noexcept { nl_addr_put(p); }
};
struct MsgDeleter {
  void operator()(nl_msg* p) const noexcept { nlmsg_free(p); }
};
using LinkPtr = std::unique_ptr<rtnl_link, LinkDeleter>;
using AddrPtr = std::unique_ptr<rtnl_addr, AddrDeleter>;
using RoutePtr = std::unique_ptr<rtnl_route, RouteDeleter>;
using NlAddrPtr = std::unique_ptr<nl_addr, NlAddrDeleter>;
using MsgPtr = std::unique_ptr<nl_msg, MsgDeleter>;

[[noreturn]] void ThrowOutOfMemory(const char* what);
// Returns `p`; a libnl allocation failure (NULL) throws cni::Error(kNetlink, "out of memory: <what>").
template <typename T>
T* NotNull(T* p, const char* what) {
  if (p == nullptr) ThrowOutOfMemory(what);
  return p;
}

LinkPtr NewLink();
// A new libnl address holding `a` with prefix length `prefix_len`.
NlAddrPtr ToNlAddr(const cni::IpAddr& a, int prefix_len);
inline NlAddrPtr ToNlAddr(const cni::IpNet& n) { return ToNlAddr(n.addr(), n.prefix_len()); }
// The address in `a` (a zero address of `family` when `a` is empty or NULL).
cni::IpAddr FromNlAddr(const nl_addr* a, int family);
// "aa:bb:cc:dd:ee:ff" for a 6-byte hardware address, "" when absent.
std::string FormatMac(const nl_addr* a);
// Parses a MAC; throws cni::Error(kInvalidConfig) when it is not one.
NlAddrPtr ParseMac(const std::string& mac);

// Sends `msg` on `s` and calls `on_reply` for every reply message until the kernel's ACK (single
// requests) or NLMSG_DONE (dumps). Returns 0 or a negative NLE code (hand it to Check). An
// exception thrown by `on_reply` stops the exchange and is rethrown after the socket is drained
// of this request's replies as far as libnl allows.
int Transact(Socket& s, MsgPtr msg, const std::function<void(nl_msg*)>& on_reply);
// Parses a reply message into its libnl object and calls `fn` with it (the object is only valid
// during the call). Messages libnl cannot parse are ignored.
void ParseReply(nl_msg* msg, const std::function<void(nl_object*)>& fn);

}  // namespace netiface::nl::detail
