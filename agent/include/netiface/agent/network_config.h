// The network config flanneld reads from <prefix>/config, with flanneld's defaults and validation.
// Keys are matched case-insensitively, as Go's encoding/json does ("network" sets Network).
#pragma once

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "netiface/cni/ip.h"

namespace netiface::agent {

// A config that cannot be used. The message names the key and the value ("SubnetMin 10.5.1.128 is not
// on a SubnetLen (24) boundary").
class ConfigError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct NetworkConfig {
  bool enable_ipv4 = true;
  bool enable_ipv6 = false;
  cni::IpNet network;                      // IPv4 cluster network (a network address), when enable_ipv4
  int subnet_len = 0;                      // defaulted as flanneld does
  cni::IpAddr subnet_min;                  // the network address of the lowest subnet a node may lease
  cni::IpAddr subnet_max;                  // ... of the highest
  std::optional<cni::IpNet> ipv6_network;  // when enable_ipv6
  int ipv6_subnet_len = 0;
  cni::IpAddr ipv6_subnet_min;
  cni::IpAddr ipv6_subnet_max;
  std::string backend_type;  // Backend.Type, lower-case; "udp" when Backend is missing (flanneld)
  nlohmann::json backend;    // the Backend object as written (an empty object when missing)
};

// Parses and validates <prefix>/config. Throws ConfigError.
NetworkConfig ParseNetworkConfig(std::string_view json_text);

// The subnets of `cfg` that a node may lease, in order, as (network address, subnet_len).
// Count and membership, without materialising the list. SubnetFits takes an IPv4 or an IPv6 subnet
// (false for a family the config does not enable, or with host bits set); SubnetCount counts the IPv4
// subnets (the IPv6 ones when IPv4 is off, saturating at UINT64_MAX).
bool SubnetFits(const NetworkConfig& cfg, const cni::IpNet& subnet);
uint64_t SubnetCount(const NetworkConfig& cfg);

}  // namespace netiface::agent
