// Published ports (the portmap plugin): DNAT of a host port to a container's port, for traffic arriving
// from outside (prerouting) and opened by the host itself (output, 127.0.0.1 included), and the hairpin
// masquerade that makes a container reach its own published port and 127.0.0.1 reach any. In the same
// table inet netiface as the attachments' masquerade, in chains of their own, every rule tagged
// "netiface-portmap:<network>:<containerID>:<ifname>": removing one attachment's port mappings never
// touches another's, nor the masquerade rules of the same attachment. Acts in the current network
// namespace; one transaction per call; the table's flock (table.h).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "netiface/cni/config.h"
#include "netiface/cni/ip.h"
#include "netiface/nat/nat.h"

namespace netiface::nat {

struct PortMapping {
  uint16_t host_port = 0;       // 1..65535
  uint16_t container_port = 0;  // 1..65535
  std::string protocol;         // "tcp", "udp" or "sctp"
  // Only packets to this host address; unset or unspecified (0.0.0.0, ::): any local address of the
  // family. A host address of one family maps only that family's container address.
  std::optional<cni::IpAddr> host_ip;
  bool operator==(const PortMapping&) const = default;
};

// A match on the packet's source or destination prefix that every DNAT rule of the family must also
// satisfy ("ip saddr != 192.0.2.0/24").
struct AddrMatch {
  bool source = true;  // saddr; false: daddr
  bool negate = false;
  cni::IpNet prefix;
  bool operator==(const AddrMatch&) const = default;
};

struct PortMapSpec {
  Tag tag;
  // The container's address per family (at most one IPv4 and one IPv6): where the ports are forwarded.
  std::vector<cni::IpAddr> container_addrs;
  std::vector<PortMapping> mappings;
  // Hairpin and localhost masquerade (the reference's "snat", default on).
  bool snat = true;
  std::vector<AddrMatch> conditions_v4;
  std::vector<AddrMatch> conditions_v6;
};

// Makes the tag's port-mapping rules exactly those of `spec`; writes nothing when they already are.
// Throws cni::Error(kNatFailure).
void ApplyPortMap(const PortMapSpec& spec);
// Removes every port-mapping rule of the tag (and chains/table left empty). False when there was none.
bool RemovePortMap(const Tag& tag);
// The planned rules that are missing or changed, as "<chain>: <rule>"; empty when all are in place.
std::vector<std::string> MissingPortMapRules(const PortMapSpec& spec);
// Throws cni::Error(kNatFailure) naming every missing rule as "<chain>: <rule>".
void VerifyPortMap(const PortMapSpec& spec);
// Removes the port-mapping rules of `network` whose (container ID, ifname) is not in `valid`.
void GcPortMap(const std::string& network, const std::vector<cni::Attachment>& valid);

}  // namespace netiface::nat
