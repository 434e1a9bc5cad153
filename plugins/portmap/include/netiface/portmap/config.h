// The portmap plugin's configuration, as the reference portmap reads it, and the pure choices made from
// it and from prevResult: which container address per family, the nat::PortMapSpec of an attachment.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "netiface/cni/config.h"
#include "netiface/cni/result.h"
#include "netiface/nat/portmap.h"
#include "netiface/netlink/route.h"

namespace netiface::portmap {

struct Config {
  std::string cni_version;
  std::string network;
  std::vector<nat::PortMapping> mappings;  // runtimeConfig.portMappings
  bool snat = true;                        // hairpin and localhost masquerade
  std::vector<nat::AddrMatch> conditions_v4;
  std::vector<nat::AddrMatch> conditions_v6;
};

// Reads and validates every key (README.md lists them). Throws cni::Error(kInvalidConfig) naming the key:
// a port outside 1..65535, a protocol other than tcp/udp/sctp, a hostIP that is no address, markMasqBit
// outside 0..31 or with externalSetMarkChain, externalSetMarkChain at all (nftables marks nothing), a
// backend other than nftables/iptables, a condition outside the supported subset.
Config ParseConfig(const cni::NetConf& conf);

// One condition list (conditionsV4/V6: iptables match words, one or several per string) as address
// matches of `family`: "[!] -s|--source|-d|--destination PREFIX" repeated. Throws kInvalidConfig naming
// `key` and the word it cannot translate.
std::vector<nat::AddrMatch> ParseConditions(const std::vector<std::string>& words, int family, const char* key);

// The container's first address per family in prevResult, as the reference picks them: an IP whose
// interface index names an interface other than `ifname`, or one outside a sandbox, is skipped.
std::vector<cni::IpAddr> ContainerAddrs(const cni::Result& prev, const std::string& ifname);

// The rules of one attachment.
nat::PortMapSpec MakeSpec(const Config& c, const std::string& container_id, const std::string& ifname,
                          const std::vector<cni::IpAddr>& addrs);

// The index of the host interface through which `addr` is routed: the longest matching prefix among the
// main table's routes (nullopt when none matches). For route_localnet on the container's host side.
std::optional<int> RoutedIfindex(const std::vector<nl::RouteInfo>& routes, const cni::IpAddr& addr);

}  // namespace netiface::portmap
