#include "netiface/netlink/netconf.h"

#include <linux/netconf.h>
#include <linux/rtnetlink.h>
#include <sys/socket.h>

#include <netlink/attr.h>
#include <netlink/msg.h>

#include "netiface/netlink/socket.h"
#include "nl_util.h"

namespace netiface::nl {

std::optional<NetconfQuery> NetconfQueryFor(std::string_view key) {
  if (key == "net/ipv4/ip_forward" || key == "net/ipv4/conf/all/forwarding") {
    return NetconfQuery{AF_INET, NETCONFA_IFINDEX_ALL};
  }
  if (key == "net/ipv4/conf/default/forwarding") return NetconfQuery{AF_INET, NETCONFA_IFINDEX_DEFAULT};
  return std::nullopt;
}

std::optional<int> NetconfForwarding(Socket& s, const NetconfQuery& q) {
  detail::MsgPtr msg(detail::NotNull(nlmsg_alloc_simple(RTM_GETNETCONF, 0), "netconf request"));
  netconfmsg ncm{};
  ncm.ncm_family = static_cast<unsigned char>(q.family);
  const std::string what = "failed to read the forwarding setting over netlink";
  Check(nlmsg_append(msg.get(), &ncm, sizeof ncm, NLMSG_ALIGNTO), what);
  Check(nla_put_s32(msg.get(), NETCONFA_IFINDEX, q.ifindex), what);
  std::optional<int> out;
  int rc = detail::Transact(s, std::move(msg), [&](nl_msg* m) {
    nlmsghdr* hdr = nlmsg_hdr(m);
    if (hdr->nlmsg_type != RTM_NEWNETCONF) return;
    nlattr* tb[NETCONFA_MAX + 1] = {};
    if (nlmsg_parse(hdr, sizeof(netconfmsg), tb, NETCONFA_MAX, nullptr) < 0) return;
    if (tb[NETCONFA_IFINDEX] == nullptr || nla_get_s32(tb[NETCONFA_IFINDEX]) != q.ifindex) return;
    if (tb[NETCONFA_FORWARDING] != nullptr) out = nla_get_s32(tb[NETCONFA_FORWARDING]);
  });
  Check(rc, what);
  return out;
}

}  // namespace netiface::nl
