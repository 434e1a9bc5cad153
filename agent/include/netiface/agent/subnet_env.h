// subnet.env, as flanneld writes it and plugins/flannel reads it.
#pragma once

#include <optional>
#include <string>

#include "netiface/cni/ip.h"

namespace netiface::agent {

struct SubnetEnvValues {
  std::optional<cni::IpNet> network;       // FLANNEL_NETWORK (the cluster network)
  std::optional<cni::IpNet> subnet;        // FLANNEL_SUBNET: the lease's subnet (rendered as its first host
                                           // with its length: 10.5.34.0/24 -> 10.5.34.1/24)
  std::optional<cni::IpNet> ipv6_network;  // FLANNEL_IPV6_NETWORK
  std::optional<cni::IpNet> ipv6_subnet;   // FLANNEL_IPV6_SUBNET
  int mtu = 0;                             // FLANNEL_MTU
  bool ipmasq = false;                     // FLANNEL_IPMASQ
};

// The lines in flanneld's order: FLANNEL_NETWORK, FLANNEL_SUBNET, FLANNEL_IPV6_NETWORK,
// FLANNEL_IPV6_SUBNET (both only when set), FLANNEL_MTU, FLANNEL_IPMASQ.
std::string RenderSubnetEnv(const SubnetEnvValues& v);
// Writes it atomically: temp file in the same folder, fsync, rename, folder fsync; mode 0644. Creates
// the folder. Throws cni::Error(kIoFailure) naming the path.
void WriteSubnetEnv(const std::string& path, const SubnetEnvValues& v);
// The previous subnet a node had: FLANNEL_SUBNET (and FLANNEL_IPV6_SUBNET) of an existing file, masked
// to the network. nullopt when the file is missing or unreadable, or has no valid IPv4 FLANNEL_SUBNET.
struct PreviousSubnet {
  cni::IpNet v4;
  std::optional<cni::IpNet> v6;
};
std::optional<PreviousSubnet> ReadPreviousSubnet(const std::string& path);

}  // namespace netiface::agent
