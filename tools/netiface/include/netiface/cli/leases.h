// `netiface leases`: the flannel network's subnet leases as they are in etcd (flanneld's layout, the same
// one netiface-agent writes): subnet, public IP, backend, time left.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "netiface/agent/lease.h"

namespace netiface::cli {

// A key bound to no etcd lease: an operator's reservation.
inline constexpr int64_t kNeverExpires = INT64_MAX;

struct LeaseRow {
  agent::Lease lease;
  int64_t ttl_left = -1;  // seconds; -1: expired; kNeverExpires: a reservation
};

// "23h59m58s", "4m0s", "12s", "expired", "never".
std::string FormatTtl(int64_t seconds);
// A table with a header: SUBNET PUBLIC-IP BACKEND TIME-LEFT (and IPV6-SUBNET when any lease has one).
std::string FormatLeaseTable(const std::vector<LeaseRow>& rows);
// [{"subnet":"10.5.1.0/24","ipv6Subnet":null,"publicIP":"192.0.2.1","publicIPv6":null,"backendType":"host-gw",
//   "backendData":null,"ttlSeconds":86399,"etcdLease":"694d7a5b1c2e3f40"}, ...]; ttlSeconds null: never expires
nlohmann::json LeasesToJson(const std::vector<LeaseRow>& rows);

}  // namespace netiface::cli
