// flanneld's tryAcquireLease (pkg/subnet/etcd/local_manager.go) as a pure choice plus a retry loop that,
// unlike flanneld's, does retry a lost create race; the create is guarded by the listing's revision
// (Registry::CreateLease), so two nodes choosing at once cannot share an IPv6 subnet.
#include "netiface/agent/lease_manager.h"

#include <sys/socket.h>

#include <algorithm>

#include <fmt/format.h>

#include "netiface/cni/fault.h"
#include "netiface/cni/log.h"
#include "u128.h"

namespace netiface::agent {
namespace {

using internal::FromU128;
using internal::ToU128;
using internal::U128;
constexpr size_t kMaxCandidates = 100;

// The address range [first, last] of a subnet.
struct Span {
  U128 first, last;
};
Span SpanOf(const cni::IpNet& n) { return {ToU128(n.Network().addr()), ToU128(n.Network().LastAddr())}; }

// Up to kMaxCandidates subnets of `len` in [min, max] that overlap none of `taken`, lowest first.
// Cost: sorting `taken`, then one step per candidate or per taken span.
std::vector<cni::IpNet> FreeSubnets(int family, const cni::IpAddr& min, const cni::IpAddr& max, int len,
                                    std::vector<Span> taken) {
  std::sort(taken.begin(), taken.end(), [](const Span& a, const Span& b) { return a.first < b.first; });
  const U128 size = U128{1} << ((family == AF_INET ? 32 : 128) - len);
  std::vector<cni::IpNet> out;
  size_t t = 0;
  U128 s = ToU128(min);
  const U128 end = ToU128(max);
  while (s <= end && out.size() < kMaxCandidates) {
    while (t < taken.size() && taken[t].last < s) ++t;
    // A span starting inside [s, s+size) covers this candidate; a later one may still end before s.
    bool blocked = false;
    U128 resume = s;
    for (size_t i = t; i < taken.size() && taken[i].first <= s + size - 1; ++i) {
      if (taken[i].last >= s) {
        blocked = true;
        resume = std::max(resume, taken[i].last);
      }
    }
    if (!blocked) {
      out.emplace_back(FromU128(family, s), len);
      if (end - s < size) break;  // s is the last subnet (also: s + size would wrap at the top)
      s += size;
      continue;
    }
    const U128 next = (resume | (size - 1)) + 1;  // the first aligned subnet after the blocking span
    if (next <= s) break;                         // wrapped past the top of the address space
    s = next;
  }
  return out;
}

template <typename T>
const T& Pick(const std::vector<T>& v, std::mt19937_64& rng) {
  return v[std::uniform_int_distribution<size_t>(0, v.size() - 1)(rng)];
}

// Whether a lease's (or the previous) subnet pair suits the config: the IPv4 subnet fits, and the IPv6
// one fits when IPv6 is on and is absent when it is off (flanneld's isIPv6SubnetConfigCompat).
bool PairFits(const NetworkConfig& cfg, const SubnetKey& k) {
  if (!SubnetFits(cfg, k.v4)) return false;
  return cfg.enable_ipv6 ? k.v6 && SubnetFits(cfg, *k.v6) : !k.v6;
}

bool Overlaps(const std::vector<Lease>& leases, const SubnetKey& k) {
  for (const Lease& l : leases) {
    if (l.subnet.v4.Overlaps(k.v4)) return true;
    if (k.v6 && l.subnet.v6 && l.subnet.v6->Overlaps(*k.v6)) return true;
  }
  return false;
}

}  // namespace

Choice ChooseSubnet(const NetworkConfig& cfg, const std::vector<Lease>& leases, const cni::IpAddr& public_ip,
                    const std::optional<SubnetKey>& previous, std::mt19937_64& rng) {
  if (!cfg.enable_ipv4) {
    throw ConfigError(
        "EnableIPv4 false: flanneld's etcd leases are keyed by an IPv4 subnet, so an IPv6-only "
        "network cannot be leased from etcd");
  }
  Choice c;
  for (const Lease& l : leases) {
    if (l.attrs.public_ip != public_ip) continue;
    if (!PairFits(cfg, l.subnet)) {
      c.stale_own.push_back(l);
    } else if (!c.reuse) {
      c.reuse = l;
    }
  }
  if (c.reuse) {
    c.kind = Choice::kReuse;
    c.subnet = c.reuse->subnet;
    return c;
  }
  if (previous && PairFits(cfg, *previous) && !Overlaps(leases, *previous)) {
    c.kind = Choice::kCreate;
    c.subnet = *previous;
    return c;
  }
  std::vector<Span> taken4, taken6;
  for (const Lease& l : leases) {
    taken4.push_back(SpanOf(l.subnet.v4));
    if (l.subnet.v6) taken6.push_back(SpanOf(*l.subnet.v6));
  }
  std::vector<cni::IpNet> free4 = FreeSubnets(AF_INET, cfg.subnet_min, cfg.subnet_max, cfg.subnet_len, taken4);
  std::vector<cni::IpNet> free6;
  if (cfg.enable_ipv6) {
    free6 = FreeSubnets(AF_INET6, cfg.ipv6_subnet_min, cfg.ipv6_subnet_max, cfg.ipv6_subnet_len, taken6);
  }
  if (free4.empty() || (cfg.enable_ipv6 && free6.empty())) {
    c.kind = Choice::kOutOfSubnets;
    return c;
  }
  c.kind = Choice::kCreate;
  c.subnet.v4 = Pick(free4, rng);
  if (cfg.enable_ipv6) c.subnet.v6 = Pick(free6, rng);
  return c;
}

Lease AcquireLease(Registry& registry, const NetworkConfig& cfg, const LeaseAttrs& mine,
                   const std::optional<SubnetKey>& previous, int64_t ttl_seconds, std::mt19937_64& rng,
                   int max_attempts) {
  if (!mine.public_ip) throw std::invalid_argument("cannot acquire a lease: this node's lease has no PublicIP");
  max_attempts = std::max(max_attempts, 1);
  for (int attempt = 1; attempt <= max_attempts; ++attempt) {
    LeaseSnapshot snap = registry.ListLeases();
    for (const SubnetKey& k : snap.unreadable) snap.leases.push_back(Lease{k, {}, 0, 0});  // taken, by nobody we know
    Choice c = ChooseSubnet(cfg, snap.leases, *mine.public_ip, previous, rng);
    for (const Lease& stale : c.stale_own) {
      const bool deleted = registry.DeleteLease(stale);
      log::Info("lease {} of this node ({}) does not fit the network config: {}", FormatSubnetKey(stale.subnet),
                mine.public_ip->ToString(), deleted ? "deleted" : "changed meanwhile, left alone");
    }
    std::optional<Lease> got;
    switch (c.kind) {
      case Choice::kOutOfSubnets:
        throw OutOfSubnets(fmt::format("out of subnets: all {} subnets of {} are leased (SubnetMin {}, SubnetMax {})",
                                       SubnetCount(cfg), cfg.network.ToString(), cfg.subnet_min.ToString(),
                                       cfg.subnet_max.ToString()));
      case Choice::kReuse:
        // A lease bound to no etcd lease is an operator's reservation: it stays unbound.
        got = registry.RenewLease(*c.reuse, mine, c.reuse->etcd_lease == 0 ? 0 : ttl_seconds);
        break;
      case Choice::kCreate:
        got = registry.CreateLease(c.subnet, mine, ttl_seconds, snap.revision);
        break;
    }
    if (got) {
      cni::fault::Point("lease " + FormatSubnetKey(got->subnet));
      return *got;
    }
    log::Info("lost the race for subnet {} (attempt {} of {}), choosing again", FormatSubnetKey(c.subnet), attempt,
              max_attempts);
  }
  throw std::runtime_error(
      fmt::format("could not acquire a lease: lost the race for a subnet {} times in a row", max_attempts));
}

int64_t RenewAfterSeconds(int64_t ttl_seconds, int64_t margin_seconds) {
  if (ttl_seconds <= 0) return 0;
  // flanneld's rule (renew `margin` before expiry); a margin that leaves no time at all (a test's short TTL
  // under the default 60 min margin) renews half way instead.
  if (margin_seconds > 0 && margin_seconds < ttl_seconds) return ttl_seconds - margin_seconds;
  return std::max<int64_t>(ttl_seconds / 2, 1);
}

}  // namespace netiface::agent
