// The bandwidth plugin's configuration and plan: the reference's keys read from a NetConf, and the token
// buckets they become, computed with the reference's formulas. Pure.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "netiface/cni/config.h"
#include "netiface/netlink/tc.h"

namespace netiface::bandwidth {

// One direction: rate in bits per second, burst in bits; both 0 = not shaped.
struct Limit {
  uint64_t rate = 0;
  uint64_t burst = 0;
  bool active() const { return rate > 0 && burst > 0; }
  bool operator==(const Limit&) const = default;
};

struct Config {
  std::string network;
  std::string cni_version;
  Limit ingress;  // traffic to the container: tbf on the host end
  Limit egress;   // traffic from the container: redirected to the ifb, tbf there
};

// The keys from the top level of the config when any of them is set there (as the reference, whose
// embedded entry then shadows runtimeConfig), else from runtimeConfig.bandwidth. Throws
// Error(kInvalidConfig) for a value that is not a non-negative integer, a rate without a burst or the
// other way round, a burst of 4 GB or more (burst/8 >= 2^32), a rate of 2^32 bit/s or more, a rate or
// burst below 8 (less than a byte), and for unshapedSubnets / shapedSubnets (not supported).
Config ParseConfig(const cni::NetConf& conf);

// The psched clock's ticks per microsecond from /proc/net/psched's text, as the reference's netlink
// library derives it. Throws Error(kIoFailure) on text it cannot read.
double TicksPerUsec(std::string_view psched);

// The tbf for `l` (REQUIRES: l.active() and ParseConfig accepted it): rate/8 bytes per second, the
// buffer = the time to send burst/8 bytes (whole microseconds) in ticks, the limit = 25 ms at the rate
// plus the burst in bytes. Throws Error(kInvalidConfig) when the buffer or limit leave 32 bits.
nl::TbfParams PlanTbf(const Limit& l, double ticks_per_usec);

// The ifb device's name: "bwp" + the first 12 hex digits of SHA-512(network + container id).
std::string IfbName(std::string_view network, std::string_view container_id);

}  // namespace netiface::bandwidth
