// What an ADD builds, computed as a value from the config, the request and the IPAM result: the veth
// pair, the container's addresses, routes and sysctls, the host's sysctls and routes, the NAT rules,
// the endpoint record and the printed result. Pure; the Ops implementation applies it.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "netiface/cni/ip.h"
#include "netiface/cni/result.h"
#include "netiface/nat/nat.h"
#include "netiface/veth_workload/config.h"
#include "netiface/veth_workload/endpoint_store.h"

namespace netiface::veth_workload {

inline constexpr std::string_view kHostVethMac = "ee:ee:ee:ee:ee:ee";
inline constexpr std::string_view kGatewayV4 = "169.254.1.1";
// The host veth's EUI-64 link-local address for kHostVethMac (addr_gen_mode=0 pins it).
inline constexpr std::string_view kGatewayV6 = "fe80::ecee:eeff:feee:eeee";
inline constexpr int kMinMtuV6 = 1280;

struct Sysctl {
  std::string key;  // '/'-separated under /proc/sys
  std::string value;
  bool optional = false;  // a missing key is only logged (e.g. IPv6 compiled out)
  bool operator==(const Sysctl&) const = default;
};

struct PlannedRoute {
  cni::IpNet dst;                 // a network (no host bits)
  std::optional<cni::IpAddr> gw;  // nullopt: scope link on the container interface
  bool operator==(const PlannedRoute&) const = default;
};

struct Plan {
  Identity id;
  std::string network;
  std::string netns;
  std::string host_veth;
  std::string endpoint_name;
  std::string requested_mac;  // "" = kernel's choice
  int mtu = kDefaultMtu;
  int num_queues = 1;
  std::vector<cni::IpNet> addresses;  // /32 and /128, in IPAM order
  std::vector<cni::IpNet> subnets;    // the same addresses with the prefix IPAM gave
  bool has_v4 = false, has_v6 = false;
  std::vector<Sysctl> container_link_sysctls;  // before the links go up, while IPAM may run
  std::vector<Sysctl> host_link_sysctls;       //   (they need no address)
  std::vector<Sysctl> container_sysctls;       // once the addresses are known
  std::vector<PlannedRoute> container_routes;  // in order: 169.254.1.1/32 scope link first
  std::vector<Sysctl> host_sysctls;            // everything CHECK expects on the host veth
  std::vector<cni::IpNet> host_routes;         // <ip>/32|128 dev <host veth> scope link
  bool nat = false;                            // nat_spec has rules to install
  nat::Spec nat_spec;
  cni::Dns dns;
};

// The pod's default routes, one per family it has an address of.
std::vector<cni::IpNet> DefaultRoutes(bool has_v4, bool has_v6);
// The sysctls the links go up with, before IPAM has answered: IPv6 DAD off on both ends and, on the
// host end, the EUI-64 link-local address (fe80::ecee:eeff:feee:eeee) and no router advertisements.
// All optional (IPv6 may be compiled out) and inert for an IPv4-only pod.
std::vector<Sysctl> ContainerLinkSysctls(const std::string& ifname);
std::vector<Sysctl> HostLinkSysctls(const std::string& veth);
// Container sysctls once the families are known: v6 disable_ipv6=0 on the interface; ip_forward and
// ipv6 all.forwarding set to `allow_forwarding`, each only for a family the pod has.
std::vector<Sysctl> ContainerSysctls(const std::string& ifname, bool has_v4, bool has_v6, bool allow_forwarding);
// Host sysctls for the host veth: v4 proxy_arp=1, neigh proxy_delay=0, forwarding=1, route_localnet=1;
// v6 disable_ipv6=0, accept_dad=0, addr_gen_mode=0, proxy_ndp=1, forwarding=1; accept_ra=0 always
// (optional without IPv6), so that a pod can never send the host router advertisements.
std::vector<Sysctl> HostSysctls(const std::string& veth, bool has_v4, bool has_v6);

// The IPAM result for args.cni.ipAddrsNoIpam: the addresses alone.
cni::Result NoIpamResult(const std::vector<cni::IpNet>& addrs);

// A plan in two steps, so that ADD can create the pair while IPAM allocates:
// the link part (names, MTU, queues, MAC, what precedes link up), which needs no address. `known`: the
// addresses when they are in already (IPAM ran in this process, or the request bypasses it); then the
// container's IPv6 link settings are planned only for an attachment with IPv6, else in case it has;
Plan MakeLinkPlan(const Config& c, const Identity& id, const AddRequest& req, const std::string& netns,
                  const cni::Result* known = nullptr);
// then everything that follows from the addresses. Throws cni::Error(kInvalidConfig) when the IPAM
// result has no address, the MTU is below 1280 with IPv6, or a floating IP has no pod address of its
// family.
void PlanAddresses(Plan& p, const Config& c, const AddRequest& req, const cni::Result& ipam);
// Both steps.
Plan MakePlan(const Config& c, const Identity& id, const AddRequest& req, const cni::Result& ipam,
              const std::string& netns);

// The ADD result: interfaces [host veth, container interface], ips on interface 1 with the
// link-local gateways, the routes via them, DNS.
cni::Result BuildResult(const Plan& p, const std::string& container_mac);
EndpointRecord BuildRecord(const Plan& p, const std::string& container_mac);
// The NAT rules recorded for an attachment.
nat::Spec NatSpecOf(const EndpointRecord& r);

}  // namespace netiface::veth_workload
