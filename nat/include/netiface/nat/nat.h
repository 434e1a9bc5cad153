// Outbound masquerade and floating IPs through libnftables (loaded with dlopen on first use, so plugins
// that need no NAT pay nothing at process start). Everything lives in one table of ours,
// "inet netiface"; every rule is tagged with (network, container ID, ifname) so that removing one
// attachment's rules never touches another's. Acts in the current network namespace.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "netiface/cni/config.h"
#include "netiface/cni/ip.h"

namespace netiface::nat {

struct Tag {
  std::string network;
  std::string container_id;
  std::string ifname;
};

struct Spec {
  Tag tag;
  // Attachment addresses with their subnet's prefix length: traffic from addr to anything outside
  // addr's network (and outside 224.0.0.0/4 resp. ff00::/8) is masqueraded.
  std::vector<cni::IpNet> masquerade;
  // external -> internal (same family): DNAT in, SNAT out.
  std::vector<std::pair<cni::IpAddr, cni::IpAddr>> floating_ips;
};

// Installs the attachment's rules; idempotent (re-applying replaces them). Throws cni::Error(kNatFailure).
void Apply(const Spec& spec);
// Removes every rule of the tag. Returns false when there was none. Never throws for absence.
bool Remove(const Tag& tag);
// Throws cni::Error(kNatFailure) naming what is missing when the rules of `spec` are not all present.
void Verify(const Spec& spec);
// Removes the rules of `network` whose (container ID, ifname) is not in `valid`.
void Gc(const std::string& network, const std::vector<cni::Attachment>& valid);

}  // namespace netiface::nat
