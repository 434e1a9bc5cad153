#include "netiface/veth_workload/check.h"

#include <algorithm>
#include <cctype>

#include "netiface/cni/error.h"
#include "netiface/veth_workload/naming.h"

namespace netiface::veth_workload {
namespace {

std::string Lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s;
}

[[noreturn]] void BadPrev(const std::string& what) {
  throw cni::Error(cni::kInvalidConfig, "veth-workload: prevResult " + what);
}

bool HasRoute(const std::vector<nl::RouteInfo>& routes, int ifindex, const cni::IpNet& dst,
              const std::optional<cni::IpAddr>& gw) {
  return std::any_of(routes.begin(), routes.end(), [&](const nl::RouteInfo& r) {
    return r.ifindex == ifindex && r.dst == dst && (!gw || r.gw == gw);
  });
}

}  // namespace

CheckExpectation ExpectFromPrevResult(const Config& c, const Identity& id, const cni::Result& prev,
                                      const std::string& netns) {
  CheckExpectation e;
  e.host_veth = HostVethName(c.veth_prefix, id);
  e.ifname = id.ifname;
  e.netns = netns;
  e.mtu = c.mtu;
  int container_index = -1;
  bool host_found = false;
  for (size_t i = 0; i < prev.interfaces.size(); ++i) {
    const cni::Interface& intf = prev.interfaces[i];
    if (intf.name == id.ifname && !intf.sandbox.empty()) {
      if (intf.sandbox != netns) {
        BadPrev("puts " + id.ifname + " in " + intf.sandbox + ", not in CNI_NETNS " + netns);
      }
      container_index = static_cast<int>(i);
      e.container_mac = Lower(intf.mac);
    } else if (intf.name == e.host_veth && intf.sandbox.empty()) {
      host_found = true;
    }
  }
  if (container_index < 0) BadPrev("has no interface " + id.ifname + " in a sandbox");
  if (!host_found) BadPrev("has no host interface " + e.host_veth);
  for (const auto& ip : prev.ips) {
    if (ip.interface && *ip.interface != container_index) continue;
    e.addresses.push_back(ip.address);
    (ip.address.addr().is_v4() ? e.has_v4 : e.has_v6) = true;
  }
  if (e.addresses.empty()) BadPrev("has no IP on " + id.ifname);
  e.routes = prev.routes;
  e.host_sysctls = HostSysctls(e.host_veth, e.has_v4, e.has_v6);
  return e;
}

std::vector<std::string> CompareState(const CheckExpectation& e, const Observed& o) {
  std::vector<std::string> p;
  if (!o.netns_exists) {
    p.push_back("network namespace " + e.netns + " does not exist");
  } else if (!o.container_link) {
    p.push_back("interface " + e.ifname + " does not exist in " + e.netns);
  }
  if (!o.host_link) p.push_back("host veth " + e.host_veth + " does not exist");
  if (!p.empty()) return p;

  const nl::LinkInfo& ctr = *o.container_link;
  const nl::LinkInfo& host = *o.host_link;
  if (ctr.kind != "veth") p.push_back(e.ifname + " is not a veth (kind \"" + ctr.kind + "\")");
  if (!e.container_mac.empty() && Lower(ctr.mac) != e.container_mac) {
    p.push_back(e.ifname + " has MAC " + ctr.mac + ", expected " + e.container_mac);
  }
  if (ctr.mtu != e.mtu)
    p.push_back(e.ifname + " has MTU " + std::to_string(ctr.mtu) + ", expected " + std::to_string(e.mtu));
  if (!ctr.admin_up) p.push_back(e.ifname + " is down");
  for (const auto& a : e.addresses) {
    if (std::find(o.container_addresses.begin(), o.container_addresses.end(), a) == o.container_addresses.end()) {
      p.push_back(e.ifname + " lacks address " + a.ToString());
    }
  }
  // The route to the gateway may be on another interface of the pod (a second attachment).
  const cni::IpNet gw4 = cni::IpNet::Host(*cni::IpAddr::Parse(kGatewayV4));
  if (e.has_v4 && std::none_of(o.container_routes.begin(), o.container_routes.end(),
                               [&](const nl::RouteInfo& r) { return r.dst == gw4 && !r.gw; })) {
    p.push_back("container route " + gw4.ToString() + " scope link is missing");
  }
  for (const auto& r : e.routes) {
    if (!HasRoute(o.container_routes, ctr.index, r.dst.Network(), r.gw)) {
      p.push_back("container route " + r.dst.ToString() + (r.gw ? " via " + r.gw->ToString() : "") + " dev " +
                  e.ifname + " is missing");
    }
  }

  if (host.kind != "veth") p.push_back(e.host_veth + " is not a veth (kind \"" + host.kind + "\")");
  if (host.peer_index != ctr.index || ctr.peer_index != host.index) {
    p.push_back(e.host_veth + " is not the peer of " + e.ifname);
  }
  if (Lower(host.mac) != kHostVethMac)
    p.push_back(e.host_veth + " has MAC " + host.mac + ", expected " + std::string(kHostVethMac));
  if (host.mtu != e.mtu)
    p.push_back(e.host_veth + " has MTU " + std::to_string(host.mtu) + ", expected " + std::to_string(e.mtu));
  if (!host.admin_up) p.push_back(e.host_veth + " is down");
  for (const auto& a : e.addresses) {
    cni::IpNet dst = cni::IpNet::Host(a.addr());
    if (!HasRoute(o.host_routes, host.index, dst, std::nullopt)) {
      p.push_back("host route " + dst.ToString() + " dev " + e.host_veth + " is missing");
    }
  }
  for (const auto& s : e.host_sysctls) {
    if (s.optional) continue;
    auto it =
        std::find_if(o.host_sysctls.begin(), o.host_sysctls.end(), [&](const auto& kv) { return kv.first == s.key; });
    if (it == o.host_sysctls.end() || !it->second) {
      p.push_back("sysctl " + s.key + " is missing");
    } else if (*it->second != s.value) {
      p.push_back("sysctl " + s.key + " is " + *it->second + ", expected " + s.value);
    }
  }
  return p;
}

}  // namespace netiface::veth_workload
