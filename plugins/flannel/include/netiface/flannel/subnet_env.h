// flanneld's node lease file, /run/flannel/subnet.env: KEY=VALUE lines. Parsing is pure.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "netiface/cni/ip.h"

namespace netiface::flannel {

struct SubnetEnv {
  std::vector<cni::IpNet> networks;       // FLANNEL_NETWORK: comma-separated, as networks, de-duplicated
  std::optional<cni::IpNet> subnet;       // FLANNEL_SUBNET as its network (10.1.17.1/24 -> 10.1.17.0/24)
  std::vector<cni::IpNet> ipv6_networks;  // FLANNEL_IPV6_NETWORK, likewise
  std::optional<cni::IpNet> ipv6_subnet;  // FLANNEL_IPV6_SUBNET, likewise
  int mtu = 0;                            // FLANNEL_MTU
  bool ipmasq = false;                    // FLANNEL_IPMASQ: only "true" is true
};

// Parses the text of the file at `path` (named in errors). Unknown keys, blank lines and '#' comments are
// ignored. Required: FLANNEL_NETWORK or FLANNEL_IPV6_NETWORK, FLANNEL_SUBNET or FLANNEL_IPV6_SUBNET,
// FLANNEL_MTU, FLANNEL_IPMASQ. Throws cni::Error(kInvalidConfig) naming the file and the key that is
// malformed or missing.
SubnetEnv ParseSubnetEnv(std::string_view text, const std::string& path);

// Reads and parses the file. A missing file is cni::Error(kTryAgainLater) (flanneld has not written its
// lease yet); unreadable is kIoFailure; malformed as ParseSubnetEnv.
SubnetEnv LoadSubnetEnv(const std::string& path);

}  // namespace netiface::flannel
