#include "netiface/veth_workload/plan.h"

#include <algorithm>

#include "netiface/cni/error.h"
#include "netiface/cni/log.h"
#include "netiface/veth_workload/naming.h"

namespace netiface::veth_workload {
namespace {

cni::IpAddr Addr(std::string_view s) { return *cni::IpAddr::Parse(s); }

void AddUnique(std::vector<cni::IpNet>& v, const cni::IpNet& n) {
  if (std::find(v.begin(), v.end(), n) == v.end()) v.push_back(n);
}

}  // namespace

std::vector<cni::IpNet> DefaultRoutes(bool has_v4, bool has_v6) {
  std::vector<cni::IpNet> out;
  if (has_v4) out.push_back(*cni::IpNet::Parse("0.0.0.0/0"));
  if (has_v6) out.push_back(*cni::IpNet::Parse("::/0"));
  return out;
}

std::vector<Sysctl> ContainerLinkSysctls(const std::string& ifname) {
  return {{"net/ipv6/conf/" + ifname + "/accept_dad", "0", /*optional=*/true}};
}

std::vector<Sysctl> HostLinkSysctls(const std::string& veth) {
  const std::string v6 = "net/ipv6/conf/" + veth + "/";
  return {{v6 + "accept_dad", "0", true}, {v6 + "addr_gen_mode", "0", true}, {v6 + "accept_ra", "0", true}};
}

std::vector<Sysctl> ContainerSysctls(const std::string& ifname, bool has_v4, bool has_v6, bool allow_forwarding) {
  std::string fwd = allow_forwarding ? "1" : "0";
  std::vector<Sysctl> out;
  if (has_v6) {
    out.push_back({"net/ipv6/conf/" + ifname + "/disable_ipv6", "0"});
    out.push_back({"net/ipv6/conf/all/forwarding", fwd});
  }
  if (has_v4) out.push_back({"net/ipv4/ip_forward", fwd});
  return out;
}

std::vector<Sysctl> HostSysctls(const std::string& veth, bool has_v4, bool has_v6) {
  std::vector<Sysctl> out;
  if (has_v4) {
    out.push_back({"net/ipv4/conf/" + veth + "/proxy_arp", "1"});
    out.push_back({"net/ipv4/neigh/" + veth + "/proxy_delay", "0"});
    out.push_back({"net/ipv4/conf/" + veth + "/forwarding", "1"});
    out.push_back({"net/ipv4/conf/" + veth + "/route_localnet", "1"});
  }
  std::string v6 = "net/ipv6/conf/" + veth + "/";
  if (has_v6) {
    out.push_back({v6 + "disable_ipv6", "0"});
    out.push_back({v6 + "accept_dad", "0"});
    out.push_back({v6 + "addr_gen_mode", "0"});
    out.push_back({v6 + "proxy_ndp", "1"});
    out.push_back({v6 + "forwarding", "1"});
  }
  out.push_back({v6 + "accept_ra", "0", /*optional=*/!has_v6});
  return out;
}

cni::Result NoIpamResult(const std::vector<cni::IpNet>& addrs) {
  cni::Result r;
  for (const auto& a : addrs) r.ips.push_back({.address = a});
  return r;
}

Plan MakePlan(const Config& c, const Identity& id, const AddRequest& req, const cni::Result& ipam,
              const std::string& netns) {
  Plan p = MakeLinkPlan(c, id, req, netns, &ipam);
  PlanAddresses(p, c, req, ipam);
  return p;
}

Plan MakeLinkPlan(const Config& c, const Identity& id, const AddRequest& req, const std::string& netns,
                  const cni::Result* known) {
  Plan p;
  p.id = id;
  p.network = c.network;
  p.netns = netns;
  p.host_veth = HostVethName(c.veth_prefix, id);
  p.endpoint_name = EndpointName(id);
  p.requested_mac = req.mac;
  p.mtu = c.mtu;
  p.num_queues = c.num_queues;
  const bool may_have_v6 =
      known == nullptr || std::any_of(known->ips.begin(), known->ips.end(),
                                      [](const cni::IpConfig& ip) { return !ip.address.addr().is_v4(); });
  if (may_have_v6) p.container_link_sysctls = ContainerLinkSysctls(id.ifname);
  p.host_link_sysctls = HostLinkSysctls(p.host_veth);
  return p;
}

void PlanAddresses(Plan& p, const Config& c, const AddRequest& req, const cni::Result& ipam) {
  const Identity& id = p.id;
  for (const auto& ip : ipam.ips) {
    cni::IpNet host = cni::IpNet::Host(ip.address.addr());
    if (std::find(p.addresses.begin(), p.addresses.end(), host) != p.addresses.end()) continue;
    p.addresses.push_back(host);
    p.subnets.push_back(ip.address);
    (ip.address.addr().is_v4() ? p.has_v4 : p.has_v6) = true;
  }
  if (p.addresses.empty()) {
    throw cni::Error(cni::kInvalidConfig, "veth-workload: IPAM plugin \"" + c.ipam_type + "\" returned no IP address");
  }
  if (p.has_v6 && c.mtu < kMinMtuV6) {
    throw cni::Error(cni::kInvalidConfig, "veth-workload: \"mtu\" must be at least 1280 for IPv6",
                     std::to_string(c.mtu));
  }

  // Routes: IPAM's, or the defaults when it gives none; the defaults too with includeDefaultRoutes.
  std::vector<cni::IpNet> dsts;
  for (const auto& r : ipam.routes) AddUnique(dsts, r.dst.Network());
  if (dsts.empty() || c.include_default_routes) {
    for (const auto& d : DefaultRoutes(p.has_v4, p.has_v6)) AddUnique(dsts, d);
  }
  const cni::IpAddr gw4 = Addr(kGatewayV4), gw6 = Addr(kGatewayV6);
  const cni::IpNet gw4_host = cni::IpNet::Host(gw4);
  if (p.has_v4) p.container_routes.push_back({gw4_host, std::nullopt});
  for (const auto& d : dsts) {
    bool v4 = d.addr().is_v4();
    if ((v4 && !p.has_v4) || (!v4 && !p.has_v6)) {
      log::Warn("veth-workload: skipping route {}: the pod has no address of its family", d.ToString());
      continue;
    }
    if (d == gw4_host) continue;
    p.container_routes.push_back({d, v4 ? gw4 : gw6});
  }

  p.container_sysctls = ContainerSysctls(id.ifname, p.has_v4, p.has_v6, c.allow_ip_forwarding);
  p.host_sysctls = HostSysctls(p.host_veth, p.has_v4, p.has_v6);
  p.host_routes = p.addresses;

  p.nat_spec.tag = {c.network, id.container_id, id.ifname};
  if (c.ip_masq) p.nat_spec.masquerade = p.subnets;
  for (const auto& ext : req.floating_ips) {
    auto internal = std::find_if(p.addresses.begin(), p.addresses.end(),
                                 [&](const cni::IpNet& a) { return a.family() == ext.family(); });
    if (internal == p.addresses.end()) {
      throw cni::Error(cni::kInvalidConfig,
                       "veth-workload: floating IP " + ext.ToString() + " has no pod address of its family");
    }
    p.nat_spec.floating_ips.emplace_back(ext, internal->addr());
  }
  p.nat = !p.nat_spec.masquerade.empty() || !p.nat_spec.floating_ips.empty();
  p.dns = c.dns ? *c.dns : ipam.dns;
}

cni::Result BuildResult(const Plan& p, const std::string& container_mac) {
  cni::Result r;
  r.interfaces.push_back({.name = p.host_veth, .mac = std::string(kHostVethMac), .mtu = p.mtu});
  r.interfaces.push_back({.name = p.id.ifname, .mac = container_mac, .sandbox = p.netns, .mtu = p.mtu});
  const cni::IpAddr gw4 = Addr(kGatewayV4), gw6 = Addr(kGatewayV6);
  for (const auto& a : p.addresses) {
    r.ips.push_back({.interface = 1, .address = a, .gateway = a.addr().is_v4() ? gw4 : gw6});
  }
  for (const auto& route : p.container_routes) {
    if (route.gw) r.routes.push_back({.dst = route.dst, .gw = route.gw});
  }
  r.dns = p.dns;
  return r;
}

EndpointRecord BuildRecord(const Plan& p, const std::string& container_mac) {
  EndpointRecord r;
  r.name = p.endpoint_name;
  r.network = p.network;
  r.node = p.id.node;
  r.orchestrator = p.id.IsK8s() ? "k8s" : "cni";
  r.pod_namespace = p.id.pod_namespace;
  r.pod = p.id.pod;
  r.container_id = p.id.container_id;
  r.ifname = p.id.ifname;
  r.netns = p.netns;
  r.host_veth = p.host_veth;
  r.container_mac = container_mac;
  r.ip_networks = p.addresses;
  r.masquerade = p.nat_spec.masquerade;
  r.ip_nats = p.nat_spec.floating_ips;
  return r;
}

nat::Spec NatSpecOf(const EndpointRecord& r) {
  nat::Spec s;
  s.tag = {r.network, r.container_id, r.ifname};
  s.masquerade = r.masquerade;
  s.floating_ips = r.ip_nats;
  return s;
}

}  // namespace netiface::veth_workload
