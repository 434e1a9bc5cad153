#include "netiface/bridge/plan.h"

#include <sys/socket.h>

#include <algorithm>

#include "netiface/cni/error.h"

namespace netiface::bridge {
namespace {

cni::IpNet DefaultNet(int family) {
  if (family == AF_INET) return cni::IpNet(cni::IpAddr(), 0);
  return cni::IpNet(*cni::IpAddr::Parse("::"), 0);
}

bool IsDefault(const cni::IpNet& n) { return n.prefix_len() == 0; }

}  // namespace

const std::optional<cni::IpAddr>& FamilyGateways::For(int family) const { return family == AF_INET ? v4 : v6; }

FamilyGateways GatewaysOf(const std::vector<cni::IpConfig>& ips) {
  FamilyGateways g;
  for (const auto& ip : ips) {
    if (!ip.gateway) continue;
    auto& slot = ip.address.family() == AF_INET ? g.v4 : g.v6;
    if (!slot) slot = ip.gateway;
  }
  return g;
}

nl::RouteSpec ToRouteSpec(const cni::Route& r, const FamilyGateways& gws) {
  nl::RouteSpec s;
  s.dst = r.dst.Network();
  s.gw = r.gw ? r.gw : gws.For(r.dst.family());
  if (r.scope) s.scope = *r.scope;
  s.table = r.table.value_or(0);
  s.priority = r.priority.value_or(0);
  s.mtu = r.mtu.value_or(0);
  s.advmss = r.advmss.value_or(0);
  return s;
}

Plan MakePlan(const Config& c, const cni::Result& ipam_result) {
  Plan p;
  p.result = ipam_result;
  p.result.interfaces.clear();
  for (auto& ip : p.result.ips) {
    ip.interface = kContainerIfaceIndex;
    int family = ip.address.family();
    (family == AF_INET ? p.has_v4 : p.has_v6) = true;
    p.container_addrs.push_back(ip.address);
    if (!c.is_gateway) continue;
    if (!ip.gateway) ip.gateway = ip.address.Network().addr().Next();
    cni::IpNet gw_net(*ip.gateway, ip.address.prefix_len());
    if (std::find(p.bridge_addrs.begin(), p.bridge_addrs.end(), gw_net) == p.bridge_addrs.end()) {
      p.bridge_addrs.push_back(gw_net);
    }
    (family == AF_INET ? p.forward_v4 : p.forward_v6) = true;
  }
  if (c.is_default_gateway) {
    for (int family : {AF_INET, AF_INET6}) {
      auto gw = GatewaysOf(p.result.ips).For(family);
      if (!gw) continue;
      bool has_default = std::any_of(p.result.routes.begin(), p.result.routes.end(),
                                     [&](const cni::Route& r) { return r.dst.family() == family && IsDefault(r.dst); });
      if (!has_default) p.result.routes.push_back(cni::Route{DefaultNet(family), gw});
    }
  }
  FamilyGateways gws = GatewaysOf(p.result.ips);
  for (const auto& r : p.result.routes) p.container_routes.push_back(ToRouteSpec(r, gws));
  if (c.dns) p.result.dns = *c.dns;
  return p;
}

BridgeAddrChanges PlanBridgeAddrs(const std::string& bridge, const std::vector<cni::IpNet>& existing,
                                  const std::vector<cni::IpNet>& wanted, bool force) {
  BridgeAddrChanges ch;
  for (const auto& w : wanted) {
    bool present = false;
    for (const auto& e : existing) {
      if (e.family() != w.family() || e.addr().IsLinkLocal()) continue;
      if (e.addr() == w.addr()) {
        present = true;
        continue;
      }
      // Several IPv6 subnets may share the bridge as long as they do not overlap.
      bool conflict = w.family() == AF_INET || e.Overlaps(w);
      if (!conflict) continue;
      if (std::find(wanted.begin(), wanted.end(), e) != wanted.end()) continue;  // both are ours
      if (!force) {
        throw cni::Error(cni::kInvalidConfig,
                         "\"" + bridge + "\" already has an IP address different from " + w.ToString(),
                         "existing address " + e.ToString());
      }
      if (std::find(ch.remove.begin(), ch.remove.end(), e) == ch.remove.end()) ch.remove.push_back(e);
    }
    if (!present) ch.add.push_back(w);
  }
  return ch;
}

std::vector<std::string> MissingAddresses(const std::vector<cni::IpNet>& expected,
                                          const std::vector<cni::IpNet>& actual) {
  std::vector<std::string> missing;
  for (const auto& e : expected) {
    if (std::find(actual.begin(), actual.end(), e) == actual.end()) {
      missing.push_back("address " + e.ToString() + " is missing");
    }
  }
  return missing;
}

std::vector<std::string> MissingRoutes(const std::vector<cni::Route>& expected, const FamilyGateways& gws,
                                       const std::vector<nl::RouteInfo>& actual) {
  std::vector<std::string> missing;
  for (const auto& r : expected) {
    cni::IpNet dst = r.dst.Network();
    const auto& family_gw = gws.For(dst.family());
    bool found = std::any_of(actual.begin(), actual.end(), [&](const nl::RouteInfo& a) {
      if (a.dst.Network() != dst) return false;
      if (r.gw) return a.gw == r.gw;
      return !a.gw || a.gw == family_gw;
    });
    if (!found) {
      missing.push_back("route " + dst.ToString() + (r.gw ? " via " + r.gw->ToString() : "") + " is missing");
    }
  }
  return missing;
}

}  // namespace netiface::bridge
