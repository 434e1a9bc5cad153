// Forwarding accepts and bridge isolation (the firewall plugin), in table inet netiface next to the
// masquerade and the port mappings, in chains of their own; every rule tagged
// "netiface-firewall:<network>:<containerID>:<ifname>", so that removing one attachment's rules never
// touches another's. Acts in the current network namespace; one transaction per call; the table's flock.
#pragma once

#include <string>
#include <vector>

#include "netiface/cni/config.h"
#include "netiface/cni/ip.h"
#include "netiface/nat/nat.h"

namespace netiface::nat {

struct FirewallSpec {
  Tag tag;
  // The container's addresses: forwarded traffic from them, and replies to them, is accepted.
  std::vector<cni::IpAddr> addrs;
  // ingressPolicy same-bridge: the bridge whose containers may not be reached from another such bridge.
  // "" = open.
  std::string isolated_bridge;
};

// Makes the tag's firewall rules exactly those of `spec`; writes nothing when they already are. Throws
// cni::Error(kNatFailure) (also for a bridge name that is not a safe token).
void ApplyFirewall(const FirewallSpec& spec);
// Removes every firewall rule of the tag (and chains/table left empty). False when there was none.
bool RemoveFirewall(const Tag& tag);
// The planned rules that are missing or changed, as "<chain>: <rule>"; empty when all are in place.
std::vector<std::string> MissingFirewallRules(const FirewallSpec& spec);
// Removes the firewall rules of `network` whose (container ID, ifname) is not in `valid`.
void GcFirewall(const std::string& network, const std::vector<cni::Attachment>& valid);

}  // namespace netiface::nat
