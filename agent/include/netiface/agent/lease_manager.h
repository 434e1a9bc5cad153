// flanneld's lease algorithm, without its bugs: the choice is a pure function of the leases, the
// config, this node's public IP and the previous subnet; Acquire runs it against a Registry and retries
// a lost race.
#pragma once

#include <cstdint>
#include <optional>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "netiface/agent/registry.h"

namespace netiface::agent {

inline constexpr int64_t kDefaultLeaseTtlSeconds = 24 * 3600;

struct Choice {
  enum Kind { kReuse, kCreate, kOutOfSubnets } kind = kOutOfSubnets;
  // kReuse: a lease that already holds this node's public IP and fits the config (renew it).
  std::optional<Lease> reuse;
  // kCreate: the subnet to create (the previous one when free, else a random free one).
  SubnetKey subnet;
  // Leases holding this node's public IP that do not fit the config (flanneld deletes them).
  std::vector<Lease> stale_own;
};

// Reuse > previous subnet (when free and it fits) > a random one of up to 100 free subnets from
// SubnetMin upward. A lease "holds this node's public IP" when attrs.public_ip == public_ip.
Choice ChooseSubnet(const NetworkConfig& cfg, const std::vector<Lease>& leases, const cni::IpAddr& public_ip,
                    const std::optional<SubnetKey>& previous, std::mt19937_64& rng);

class OutOfSubnets : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Takes a lease for this node: ChooseSubnet, then create (or renew the reused lease); a lost race
// re-lists and chooses again, up to `max_attempts` times. Stale own leases are deleted first (guarded by
// their mod_revision). A reused lease bound to no etcd lease (an operator's reservation) is renewed with
// TTL 0, so it stays unbound. REQUIRES: mine.public_ip (else std::invalid_argument).
// Throws OutOfSubnets ("out of subnets: all N subnets of 10.5.0.0/16 are leased"), or etcd::Error from
// the registry, or std::runtime_error when every attempt lost a race.
Lease AcquireLease(Registry& registry, const NetworkConfig& cfg, const LeaseAttrs& mine,
                   const std::optional<SubnetKey>& previous, int64_t ttl_seconds, std::mt19937_64& rng,
                   int max_attempts = 10);

// When to renew a lease of `ttl_seconds`, in seconds from when it was granted: `margin_seconds` before
// it expires (flanneld's rule); half way when the margin is not shorter than the TTL (a test's short TTL
// under the default 60 min margin). 0 for a TTL <= 0 (nothing to renew).
int64_t RenewAfterSeconds(int64_t ttl_seconds, int64_t margin_seconds);

}  // namespace netiface::agent
