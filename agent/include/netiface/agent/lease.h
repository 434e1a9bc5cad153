// flannel's lease records: the key under <prefix>/subnets/ and the JSON value, exactly as flanneld
// writes and reads them, so that flanneld and netiface-agent can share one etcd.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "netiface/cni/ip.h"

namespace netiface::agent {

inline constexpr std::string_view kDefaultPrefix = "/coreos.com/network";

// A leased subnet: IPv4, optionally with an IPv6 subnet (dual stack).
struct SubnetKey {
  cni::IpNet v4;  // network address and length
  std::optional<cni::IpNet> v6;
  bool operator==(const SubnetKey&) const = default;
  auto operator<=>(const SubnetKey&) const = default;
};
// "10.5.34.0-24", "10.5.34.0-24&fd00:0:0:22::-64": the last path element of the etcd key.
std::string FormatSubnetKey(const SubnetKey& k);
// nullopt when `name` is not a lease key (flanneld's regex: (\d+\.\d+.\d+.\d+)-(\d+)(?:&([a-f\d:]+)-(\d+))?$),
// or the address has host bits set, or it is not written as FormatSubnetKey writes it ("10.5.34.0-024":
// the registry addresses a lease by that form).
std::optional<SubnetKey> ParseSubnetKey(std::string_view name);

// "<prefix>/config", "<prefix>/subnets/", "<prefix>/subnets/<key>". `prefix` has no trailing '/'.
std::string ConfigKey(std::string_view prefix);
std::string SubnetsPrefix(std::string_view prefix);
std::string LeaseKey(std::string_view prefix, const SubnetKey& k);
// The SubnetKey of a full etcd key under SubnetsPrefix(prefix); nullopt for anything else.
std::optional<SubnetKey> SubnetKeyFromEtcdKey(std::string_view prefix, std::string_view etcd_key);

struct LeaseAttrs {
  std::optional<cni::IpAddr> public_ip;
  std::optional<cni::IpAddr> public_ipv6;
  std::string backend_type;        // "host-gw", "vxlan", ...
  nlohmann::json backend_data;     // null when none
  nlohmann::json backend_v6_data;  // flanneld's BackendV6Data (dual-stack vxlan); null when none
  bool operator==(const LeaseAttrs&) const = default;
};
// {"PublicIP":"192.0.2.1","PublicIPv6":null,"BackendType":"vxlan","BackendData":{"VNI":1,...}}: exactly
// what Go's json.Marshal writes for flanneld's LeaseAttrs, keys in its struct order. PublicIP is a value
// in Go, so it is always written ("0.0.0.0" when absent: flanneld cannot read a null there);
// PublicIPv6 is a pointer, null when absent; BackendType, BackendData and BackendV6Data are omitempty
// (left out when "" / null). Strings and values are encoded by cni::GoMarshal (cni/go_json.h).
std::string EncodeLeaseAttrs(const LeaseAttrs& a);
// Accepts what flanneld writes (keys matched case-insensitively; PublicIP "0.0.0.0" or null reads as
// absent). Throws std::invalid_argument naming the problem when the value is not such JSON.
LeaseAttrs DecodeLeaseAttrs(std::string_view json_text);

// A lease as it is in etcd.
struct Lease {
  SubnetKey subnet;
  LeaseAttrs attrs;
  int64_t etcd_lease = 0;    // the etcd lease the key is bound to
  int64_t mod_revision = 0;  // the key's mod_revision: guards every later change of it
  bool operator==(const Lease&) const = default;
};

}  // namespace netiface::agent
