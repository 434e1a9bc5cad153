// flannel's vxlan backend as pure planning: its config keys, the device, the VTEP MAC, and what one
// remote lease needs on this node. The kernel side (creating the device, applying the entries) uses
// libnetlink's vxlan, neighbour and FDB calls.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "netiface/agent/lease.h"
#include "netiface/agent/network_config.h"
#include "netiface/agent/peer_entries.h"
#include "netiface/netlink/route.h"

namespace netiface::agent {

// "Backend": {"Type": "vxlan", "VNI": 1, "Port": 8472, "GBP": false, "DirectRouting": false, "MTU": 0},
// keys matched case-insensitively as flanneld's decoder does. Port 0 is the kernel's default (8472).
struct VxlanConfig {
  uint32_t vni = 1;
  int port = 0;
  bool gbp = false;
  bool direct_routing = false;
  int mtu = 0;  // 0: the uplink's MTU minus the encapsulation
};
// Throws ConfigError naming the key and the value (VNI outside 0..16777215, Port outside 0..65535, MTU
// below 68 or above 65535, a value of the wrong JSON type).
VxlanConfig ParseVxlanConfig(const nlohmann::json& backend);

// "flannel.<VNI>" (IPv4) and "flannel-v6.<VNI>" (IPv6), flanneld's names.
std::string VxlanDeviceName(uint32_t vni, bool ipv6);

// The device MTU: the configured one, else the uplink's minus 50 (IPv4 underlay) or 70 (IPv6 underlay).
int VxlanMtu(const VxlanConfig& cfg, int uplink_mtu, bool ipv6_underlay);

// A VTEP MAC that depends only on the node's public IP and the VNI: the same across agent restarts and
// across re-creation of the device (a reboot), so peers' FDB entries never go stale. Locally administered,
// unicast ("0e:..." style): the first 6 bytes of SHA-256("netiface-vtep" NUL public_ip NUL vni) with bit 1
// of the first byte set and bit 0 cleared.
std::string StableVtepMac(const cni::IpAddr& public_ip, uint32_t vni);

// What this node publishes: {"VNI": 1, "VtepMAC": "0e:..."}.
nlohmann::json VxlanBackendData(uint32_t vni, const std::string& vtep_mac);

// This node as the plan sees it.
struct VxlanLocal {
  uint32_t vni = 1;
  int device_ifindex = 0;  // flannel.<VNI>
  int uplink_ifindex = 0;
  cni::IpNet uplink_net;                  // the uplink's address with its prefix: DirectRouting's "same segment"
  int device6_ifindex = 0;                // flannel-v6.<VNI>; 0: IPv6 is off
  std::optional<cni::IpNet> uplink_net6;  // the uplink's IPv6 address with its prefix
  bool direct_routing = false;
  int protocol = 78;  // the agent's route protocol
};

// What one remote vxlan lease needs: either encapsulation (neighbour + FDB + onlink route through the
// device) or, with DirectRouting and the peer on the uplink's own subnet, a plain route via its public IP.
struct VxlanPeerPlan {
  bool direct = false;
  cni::IpAddr neigh_ip;  // the peer's subnet address (network address of its subnet)
  std::string mac;       // the peer's VtepMAC
  cni::IpAddr fdb_dst;   // the peer's public IP
  nl::RouteSpec route;   // <subnet> via <subnet address> dev flannel.<VNI> onlink, or via public IP
  bool operator==(const VxlanPeerPlan& o) const {
    return direct == o.direct && neigh_ip == o.neigh_ip && mac == o.mac && fdb_dst == o.fdb_dst &&
           route.dst == o.route.dst && route.gw == o.route.gw && route.ifindex == o.route.ifindex &&
           route.onlink == o.route.onlink;
  }
};
// One family of a peer: IPv4 from PublicIP, BackendData and the IPv4 subnet; IPv6 from PublicIPv6,
// BackendV6Data and the IPv6 subnet (neighbour = NDP entry, FDB destination = the IPv6 underlay address).
// nullopt (with *why) for a lease that is not for this backend: another backend type, another VNI, no
// public IP of that family, no subnet of that family, no or an invalid VtepMAC.
std::optional<VxlanPeerPlan> PlanVxlanPeer(const Lease& peer, const VxlanLocal& local, bool ipv6, std::string* why);
inline std::optional<VxlanPeerPlan> PlanVxlanPeer(const Lease& peer, const VxlanLocal& local, std::string* why) {
  return PlanVxlanPeer(peer, local, false, why);
}

// Everything a peer needs, both families: nullopt (with *why) when its IPv4 side cannot be planned (the
// lease is not for us); the IPv6 side is added when this node runs IPv6 (device6_ifindex) and the peer's
// lease has one (a peer without it is reached over IPv4 only, as with flanneld).
std::optional<PeerEntries> VxlanEntries(const Lease& peer, const VxlanLocal& local, std::string* why);

}  // namespace netiface::agent
