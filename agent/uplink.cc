#include "netiface/agent/uplink.h"

#include <linux/rtnetlink.h>
#include <sys/socket.h>

#include <algorithm>

#include "netiface/cni/join.h"
#include "netiface/netlink/socket.h"

namespace netiface::agent {
namespace {

const nl::LinkInfo* LinkByIndex(const std::vector<nl::LinkInfo>& links, int index) {
  auto it = std::find_if(links.begin(), links.end(), [&](const nl::LinkInfo& l) { return l.index == index; });
  return it == links.end() ? nullptr : &*it;
}

const nl::LinkInfo* LinkByName(const std::vector<nl::LinkInfo>& links, const std::string& name) {
  auto it = std::find_if(links.begin(), links.end(), [&](const nl::LinkInfo& l) { return l.name == name; });
  return it == links.end() ? nullptr : &*it;
}

// The link holding `a` (any scope), or nullptr.
const nl::LinkInfo* LinkHolding(const std::vector<nl::LinkInfo>& links, const std::vector<nl::AddrInfo>& addrs,
                                const cni::IpAddr& a) {
  auto it = std::find_if(addrs.begin(), addrs.end(), [&](const nl::AddrInfo& x) { return x.local.addr() == a; });
  return it == addrs.end() ? nullptr : LinkByIndex(links, it->ifindex);
}

std::optional<cni::IpAddr> FirstGlobalV4(const std::vector<nl::AddrInfo>& addrs, int ifindex) {
  for (const auto& a : addrs) {
    if (a.ifindex == ifindex && a.local.addr().is_v4() && a.scope == RT_SCOPE_UNIVERSE) return a.local.addr();
  }
  return std::nullopt;
}

bool HasAddress(const std::vector<nl::AddrInfo>& addrs, int ifindex, const cni::IpAddr& a) {
  return std::any_of(addrs.begin(), addrs.end(),
                     [&](const nl::AddrInfo& x) { return x.ifindex == ifindex && x.local.addr() == a; });
}

std::optional<cni::IpAddr> FirstGlobalV6(const std::vector<nl::AddrInfo>& addrs, int ifindex) {
  for (const auto& a : addrs) {
    if (a.ifindex == ifindex && !a.local.addr().is_v4() && a.scope == RT_SCOPE_UNIVERSE) return a.local.addr();
  }
  return std::nullopt;
}

std::optional<cni::IpNet> NetOf(const std::vector<nl::AddrInfo>& addrs, int ifindex, const cni::IpAddr& a) {
  for (const auto& x : addrs) {
    if (x.ifindex == ifindex && x.local.addr() == a) return x.local.Network();
  }
  return std::nullopt;
}

// The uplink `l` with IPv4 `ip`, and its IPv6 side.
Uplink Make(const UplinkQuery& q, const std::vector<nl::AddrInfo>& addrs, const nl::LinkInfo& l,
            const cni::IpAddr& ip) {
  Uplink u{l.name, l.index, l.mtu, ip, std::nullopt, NetOf(addrs, l.index, ip), std::nullopt};
  if (q.public_ipv6) {
    if (!HasAddress(addrs, l.index, *q.public_ipv6)) {
      throw UplinkError("--public-ipv6 " + q.public_ipv6->ToString() + " is not an address of " + l.name);
    }
    u.public_ipv6 = q.public_ipv6;
  } else {
    u.public_ipv6 = FirstGlobalV6(addrs, l.index);
  }
  if (u.public_ipv6) u.net6 = NetOf(addrs, l.index, *u.public_ipv6);
  return u;
}

}  // namespace

Uplink SelectUplink(const UplinkQuery& q, const std::vector<nl::LinkInfo>& links,
                    const std::vector<nl::AddrInfo>& addrs, const std::vector<nl::RouteInfo>& routes) {
  if (q.public_ip && !q.public_ip->is_v4()) {
    throw UplinkError("--public-ip " + q.public_ip->ToString() + " is not an IPv4 address");
  }
  if (q.public_ipv6 && q.public_ipv6->is_v4()) {
    throw UplinkError("--public-ipv6 " + q.public_ipv6->ToString() + " is not an IPv6 address");
  }
  // The link's public IP: --public-ip when given (it must be on the link), else `preferred` when it is
  // IPv4, else the link's first global IPv4 address. Sets *why and returns nullopt when there is none.
  auto public_ip_of = [&](const nl::LinkInfo& l, const std::optional<cni::IpAddr>& preferred,
                          std::string* why) -> std::optional<cni::IpAddr> {
    if (q.public_ip) {
      if (HasAddress(addrs, l.index, *q.public_ip)) return q.public_ip;
      *why = "--public-ip " + q.public_ip->ToString() + " is not an address of " + l.name;
      return std::nullopt;
    }
    if (preferred && preferred->is_v4()) return preferred;
    if (auto ip = FirstGlobalV4(addrs, l.index)) return ip;
    *why = "link " + l.name + " has no global IPv4 address";
    return std::nullopt;
  };

  if (!q.ifaces.empty()) {
    std::string tried;
    for (const auto& iface : q.ifaces) {
      std::string why;
      const nl::LinkInfo* link = nullptr;
      std::optional<cni::IpAddr> as_addr = cni::IpAddr::Parse(iface);
      if (as_addr) {
        link = LinkHolding(links, addrs, *as_addr);
        if (link == nullptr) why = "no link holds address " + as_addr->ToString();
      } else {
        link = LinkByName(links, iface);
        if (link == nullptr) why = "no link named " + iface;
      }
      if (link != nullptr) {
        if (auto ip = public_ip_of(*link, as_addr, &why)) return Make(q, addrs, *link, *ip);
      }
      cni::AppendMessage(tried, why);
    }
    throw UplinkError("no usable --iface: " + tried);
  }

  if (q.public_ip) {
    const nl::LinkInfo* link = LinkHolding(links, addrs, *q.public_ip);
    if (link == nullptr) throw UplinkError("no link holds --public-ip " + q.public_ip->ToString());
    return Make(q, addrs, *link, *q.public_ip);
  }

  const nl::RouteInfo* best = nullptr;
  for (const auto& r : routes) {
    if (!r.dst.addr().is_v4() || r.dst.prefix_len() != 0 || r.ifindex <= 0) continue;
    if (best == nullptr || r.priority < best->priority) best = &r;
  }
  if (best == nullptr)
    throw UplinkError("no --iface or --public-ip given and no IPv4 default route to pick a link from");
  const nl::LinkInfo* link = LinkByIndex(links, best->ifindex);
  if (link == nullptr) {
    throw UplinkError("the IPv4 default route's link #" + std::to_string(best->ifindex) + " was not found");
  }
  std::string why;
  auto ip = public_ip_of(*link, std::nullopt, &why);
  if (!ip) throw UplinkError("the IPv4 default route's " + why);
  return Make(q, addrs, *link, *ip);
}

Uplink FindUplink(const UplinkQuery& q) {
  nl::Socket s = nl::Socket::Open();
  return SelectUplink(q, nl::ListLinks(s), nl::ListAddresses(s, 0, AF_UNSPEC), nl::ListRoutes(s, AF_INET));
}

}  // namespace netiface::agent
