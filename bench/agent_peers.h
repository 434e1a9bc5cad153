// The leases agent-bench writes for other nodes, in flanneld's format, with what the agent must make of
// each in the kernel. Pure.
#pragma once

#include <string>
#include <vector>

#include "netiface/agent/lease.h"

namespace netiface::bench::agent {

struct Peer {
  netiface::agent::SubnetKey subnet;  // always 10.<second>.<third>.0/24
  std::string dst;                    // "10.200.3.0/24": the route's destination
  std::string gw;                     // the route's gateway: PublicIP (host-gw), the subnet's address (vxlan, onlink)
  std::string public_ip;              // the node's PublicIP
  std::string vtep_mac;               // vxlan: BackendData.VtepMAC, lower case; "" for host-gw
  std::string key, value;             // in etcd
  // "10.200.3.<n>".
  std::string Host(int n) const;
};

// host-gw: {"PublicIP":<public_ip>,"PublicIPv6":null,"BackendType":"host-gw"}.
Peer HostGwPeer(int second, int third, const std::string& public_ip);
// vxlan on VNI 1: BackendData {"VNI":1,"VtepMAC":<mac>}.
Peer VxlanPeer(int second, int third, const std::string& public_ip, const std::string& mac);

// `n` background leases 10.100.0.0/24 upward (the agent takes its own from 10.0.1.0/24 up).
// host-gw: gateways 192.0.2.2 .. 192.0.2.250 on the node's eth0 subnet, many leases each (GatewayFor).
std::vector<Peer> HostGwOthers(int n);
// vxlan: one node per lease, as in a real cluster: PublicIP 198.18.<i / 250>.<1 + i % 250> (reached
// through the default route; nothing is ever sent there), VtepMAC 0e:6e:62:01:<i>.
std::vector<Peer> VxlanOthers(int n);
// 192.0.2.<2 + i % 249>.
std::string GatewayFor(int i);

}  // namespace netiface::bench::agent
