// host-local's configuration: the `ipam` section of a network config plus the requested addresses from
// CNI_ARGS, args.cni.ips and runtimeConfig.ips, parsed and validated as the reference's LoadIPAMConfig
// (backend/allocator/config.go) does. Pure: reads no files.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "netiface/cni/config.h"
#include "netiface/cni/ip.h"
#include "netiface/cni/result.h"
#include "netiface/ipam/range.h"

namespace netiface::ipam {

inline constexpr std::string_view kDefaultDataDir = "/var/lib/cni/networks";
inline constexpr int kDefaultLockTimeoutMs = 5000;

// The CNI_ARGS keys host-local accepts (others need IgnoreUnknown=1).
const std::vector<std::string_view>& KnownCniArgs();

// What every verb needs to find the store.
struct StoreConfig {
  std::string network;                          // the network name: the folder under data_dir
  std::string data_dir;                         // ipam.dataDir, default kDefaultDataDir
  int lock_timeout_ms = kDefaultLockTimeoutMs;  // ipam.lockTimeoutMs
};

struct IpamConfig {
  StoreConfig store;
  std::string cni_version;
  // runtimeConfig.ipRanges, then the legacy single range, then ipam.ranges. Index = rangeSetIndex.
  std::vector<RangeSet> range_sets;
  std::vector<cni::Route> routes;  // ipam.routes, copied into the result
  std::string resolv_conf;         // ipam.resolvConf, "" when unset
  // Requested addresses (CNI_ARGS IP, then args.cni.ips, then runtimeConfig.ips; duplicates dropped),
  // already matched to range sets: requested[i] is the address wanted from range_sets[i].
  std::vector<std::optional<cni::IpAddr>> requested;
};

// Only the keys DEL and GC need (type, dataDir, lockTimeoutMs): they must work even when the ranges in
// the config have since become invalid. Throws Error(kInvalidConfig) naming the key and the value.
StoreConfig ParseStoreConfig(const cni::NetConf& conf);

// Everything ADD, CHECK and STATUS need. `cni_args` is the raw CNI_ARGS. Throws Error(kInvalidConfig)
// naming the key and the value for: no ipam section, a key of the wrong type, an invalid range or range
// set, overlapping range sets, more than one range set of a family before cniVersion 0.3.0, no range
// set at all, a requested address that is not an address, lies in no range set, is a range's gateway,
// or shares a range set with another requested address. Error(kInvalidEnv) for malformed CNI_ARGS.
IpamConfig ParseIpamConfig(const cni::NetConf& conf, std::string_view cni_args);

// resolv.conf text -> DNS (nameserver, domain, search, options), as the reference's parseResolvConf.
cni::Dns ParseResolvConf(std::string_view text);

}  // namespace netiface::ipam
