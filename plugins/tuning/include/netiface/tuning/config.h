// The tuning plugin's configuration: the reference's keys (top level, CNI_ARGS MAC, runtimeConfig.mac,
// args.cni) read from a NetConf into one validated value, and sysctl keys turned into /proc/sys paths
// that cannot leave the container's net.* tree. Pure.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "netiface/cni/config.h"

namespace netiface::tuning {

inline constexpr const char* kDefaultDataDir = "/run/cni/tuning";

struct Config {
  std::string cni_version;
  std::string data_dir = kDefaultDataDir;  // where the original values are saved
  // (path under /proc/sys with '/' separators, value), in key order, IFNAME already substituted.
  std::vector<std::pair<std::string, std::string>> sysctls;
  std::optional<std::string> mac;  // "aa:bb:cc:dd:ee:ff", unicast
  bool promisc = false;            // the reference's bool: false means "leave it" at ADD, "must be off" at CHECK
  std::optional<int> mtu;
  std::optional<bool> allmulti;
  std::optional<uint32_t> txqlen;

  // Whether ADD changes an attribute of the link (what the reference saves a backup for).
  bool ChangesLink() const { return mac || promisc || mtu || allmulti || txqlen; }
  bool operator==(const Config&) const = default;
};

// Precedence as the reference: the top-level keys, then CNI_ARGS MAC=, then runtimeConfig.mac, then
// args.cni.{sysctl,mac,promisc,mtu,allmulti,txQLen} (args.cni.sysctl entries are added to / replace the
// top-level ones). Throws Error(kInvalidConfig) for a value of the wrong type, a MAC that is not a
// unicast 6-byte address, an MTU outside 68..65535, a txQLen outside 0..2^32-1, a relative dataDir, and
// every sysctl key SysctlPath refuses or two keys naming the same file; Error(kInvalidEnv) for CNI_ARGS
// it cannot parse.
Config ParseConfig(const cni::NetConf& conf, std::string_view cni_args, std::string_view ifname);

// A sysctl key as the reference reads it ("net.ipv4.conf.IFNAME.arp_filter") or, when it contains '/',
// as sysctl(8) reads slash-separated keys, whose dots are part of the names ("net/ipv4/conf/eth0.100/
// rp_filter"): the path below /proc/sys. The first "IFNAME" becomes `ifname`. Throws
// Error(kInvalidConfig) unless the path starts with net/ and has no empty, "." or ".." part: nothing
// outside the network namespace's own net.* tree. (ParseConfig also refuses control characters in values.)
std::string SysctlPath(std::string_view key, std::string_view ifname);

// `<dataDir>/<containerID>_<ifname>.json`: the reference's name for the saved values.
std::string BackupPath(const Config& c, std::string_view container_id, std::string_view ifname);

}  // namespace netiface::tuning
