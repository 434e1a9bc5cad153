// The CLI's own flags for the capability arguments of the stock plugins, turned into the same JSON a
// runtime passes (and cnitool takes as CAP_ARGS): --publish for portmap's portMappings, --ingress-rate
// and friends for bandwidth's bandwidth, --mac for tuning's mac, --ip for host-local's ips. Pure.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace netiface::cli {

struct CapFlags {
  std::vector<std::string> publish;  // [HOSTIP:]HOSTPORT:CONTAINERPORT[/tcp|udp|sctp]
  std::optional<uint64_t> ingress_rate, ingress_burst, egress_rate, egress_burst;  // bits/s, bits
  std::string mac;
  std::vector<std::string> ips;  // ADDRESS[/PREFIX]
};

// One --publish value as a portMappings entry: {"hostPort","containerPort","protocol"[,"hostIP"]}.
// The host IP may be an IPv4 address or a bracketed IPv6 one ("[fd00::1]:8080:80"); protocol defaults
// to tcp. Throws cni::Error(kInvalidEnv) naming the value.
nlohmann::json ParsePublish(const std::string& value);

// `caps` (the --cap-args / CAP_ARGS object, may be empty) with the keys the flags set. A key set both
// ways is a usage error (cni::Error(kInvalidEnv)): the command line must say one thing.
nlohmann::json MergeCapFlags(nlohmann::json caps, const CapFlags& flags);

}  // namespace netiface::cli
