#include "netiface/netlink/route.h"

#include <linux/rtnetlink.h>
#include <sys/socket.h>

#include "netiface/cni/error.h"
#include "nl_util.h"

namespace netiface::nl {
namespace {

using detail::RoutePtr;

enum class Purpose { kAdd, kDelete };

int TableOf(int table) { return table == 0 ? static_cast<int>(RT_TABLE_MAIN) : table; }

std::string Describe(const RouteSpec& r) {
  std::string d = r.dst.Network().ToString();
  if (r.gw) d += " via " + r.gw->ToString();
  if (r.ifindex > 0) d += " dev #" + std::to_string(r.ifindex);
  if (r.table != 0) d += " table " + std::to_string(r.table);
  if (r.protocol > 0) d += " proto " + std::to_string(r.protocol);
  return d;
}

// The libnl route for `r`. A delete request names only what identifies the route: metrics, the
// scope (unless given) and the protocol (unless given) are left as wildcards, as `ip route del` does.
RoutePtr MakeRoute(const RouteSpec& r, Purpose purpose) {
  RoutePtr route(detail::NotNull(rtnl_route_alloc(), "route"));
  cni::IpNet dst = r.dst.Network();
  rtnl_route_set_family(route.get(), static_cast<uint8_t>(dst.family()));
  detail::NlAddrPtr dst_addr = detail::ToNlAddr(dst);
  Check(rtnl_route_set_dst(route.get(), dst_addr.get()), "invalid route destination " + dst.ToString());
  rtnl_route_set_table(route.get(), static_cast<uint32_t>(TableOf(r.table)));
  rtnl_route_set_type(route.get(), RTN_UNICAST);
  if (r.priority > 0) rtnl_route_set_priority(route.get(), static_cast<uint32_t>(r.priority));

  int scope = r.scope >= 0 ? r.scope : (r.gw ? RT_SCOPE_UNIVERSE : RT_SCOPE_LINK);
  if (purpose == Purpose::kDelete) {
    rtnl_route_set_protocol(route.get(), static_cast<uint8_t>(r.protocol > 0 ? r.protocol : RTPROT_UNSPEC));
    if (r.scope < 0) scope = RT_SCOPE_NOWHERE;
  } else {
    rtnl_route_set_protocol(route.get(), static_cast<uint8_t>(r.protocol > 0 ? r.protocol : RTPROT_BOOT));
    if (r.src) {
      detail::NlAddrPtr src = detail::ToNlAddr(*r.src, r.src->bits());
      Check(rtnl_route_set_pref_src(route.get(), src.get()), "invalid route source " + r.src->ToString());
    }
    if (r.mtu > 0) Check(rtnl_route_set_metric(route.get(), RTAX_MTU, r.mtu), "invalid route MTU");
    if (r.advmss > 0) Check(rtnl_route_set_metric(route.get(), RTAX_ADVMSS, r.advmss), "invalid route advmss");
    if (r.onlink) rtnl_route_set_flags(route.get(), RTNH_F_ONLINK);
  }
  rtnl_route_set_scope(route.get(), static_cast<uint8_t>(scope));

  if (r.gw || r.ifindex > 0) {
    rtnl_nexthop* nh = detail::NotNull(rtnl_route_nh_alloc(), "nexthop");
    if (r.ifindex > 0) rtnl_route_nh_set_ifindex(nh, r.ifindex);
    if (r.gw) {
      detail::NlAddrPtr gw = detail::ToNlAddr(*r.gw, r.gw->bits());
      rtnl_route_nh_set_gateway(nh, gw.get());  // takes its own reference
    }
    if (r.onlink && purpose == Purpose::kAdd) rtnl_route_nh_set_flags(nh, RTNH_F_ONLINK);
    rtnl_route_add_nexthop(route.get(), nh);  // the route owns nh from here on
  }
  return route;
}

}  // namespace

AddRouteOutcome AddRoute(Socket& s, const RouteSpec& r) {
  RoutePtr route = MakeRoute(r, Purpose::kAdd);
  int rc = rtnl_route_add(s.get(), route.get(), NLM_F_EXCL);
  if (IsExists(rc)) return AddRouteOutcome::kExists;
  Check(rc, "failed to add route " + Describe(r));
  return AddRouteOutcome::kAdded;
}

void ReplaceRoute(Socket& s, const RouteSpec& r) {
  RoutePtr route = MakeRoute(r, Purpose::kAdd);
  Check(rtnl_route_add(s.get(), route.get(), NLM_F_REPLACE), "failed to replace route " + Describe(r));
}

bool DeleteRoute(Socket& s, const RouteSpec& r) {
  RoutePtr route = MakeRoute(r, Purpose::kDelete);
  int rc = rtnl_route_delete(s.get(), route.get(), 0);
  if (IsNotFound(rc)) return false;
  Check(rc, "failed to delete route " + Describe(r));
  return true;
}

std::vector<RouteInfo> ListRoutes(Socket& s, int family, int table) {
  detail::MsgPtr msg(detail::NotNull(nlmsg_alloc_simple(RTM_GETROUTE, NLM_F_DUMP), "message"));
  rtmsg hdr{};
  hdr.rtm_family = static_cast<unsigned char>(family);
  Check(nlmsg_append(msg.get(), &hdr, sizeof hdr, NLMSG_ALIGNTO), "failed to build route dump");
  const uint32_t want_table = static_cast<uint32_t>(TableOf(table));
  std::vector<RouteInfo> out;
  int rc = detail::Transact(s, std::move(msg), [&](nl_msg* m) {
    if (nlmsg_hdr(m)->nlmsg_type != RTM_NEWROUTE) return;
    detail::ParseReply(m, [&](nl_object* obj) {
      auto* rt = reinterpret_cast<rtnl_route*>(obj);
      int af = rtnl_route_get_family(rt);
      if (af != AF_INET && af != AF_INET6) return;
      if (family != AF_UNSPEC && af != family) return;
      if (rtnl_route_get_table(rt) != want_table || rtnl_route_get_type(rt) != RTN_UNICAST) return;
      RouteInfo info;
      nl_addr* dst = rtnl_route_get_dst(rt);
      info.dst = cni::IpNet(detail::FromNlAddr(dst, af), dst ? static_cast<int>(nl_addr_get_prefixlen(dst)) : 0);
      if (rtnl_route_get_nnexthops(rt) > 0) {
        rtnl_nexthop* nh = rtnl_route_nexthop_n(rt, 0);
        info.ifindex = rtnl_route_nh_get_ifindex(nh);
        if (nl_addr* gw = rtnl_route_nh_get_gateway(nh)) info.gw = detail::FromNlAddr(gw, af);
      }
      info.scope = rtnl_route_get_scope(rt);
      info.table = static_cast<int>(rtnl_route_get_table(rt));
      info.priority = static_cast<int>(rtnl_route_get_priority(rt));
      info.protocol = rtnl_route_get_protocol(rt);
      out.push_back(info);
    });
  });
  Check(rc, "failed to list routes");
  return out;
}

}  // namespace netiface::nl
