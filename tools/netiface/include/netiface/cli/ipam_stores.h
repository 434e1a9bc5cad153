// Where a network's host-local store is, found in its config the way its plugins find it, and how full
// it is: what `netiface ipam ls NETWORK` reads when no --data-dir is given. Pure, but for the file
// reader it is handed (flannel's ranges are in subnet.env, not in the config).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "netiface/cli/ipam_ls.h"
#include "netiface/cni/config.h"
#include "netiface/ipam/range.h"

namespace netiface::cli {

// One plugin's host-local section.
struct IpamStore {
  std::string plugin;                      // the plugin of the conflist whose IPAM it is
  std::string data_dir;                    // ipam.dataDir, or host-local's default
  std::vector<ipam::RangeSet> range_sets;  // what it allocates from; empty when not known
  std::string why_unknown;                 // why range_sets is empty ("" when it is not)
};

// Reads a file: its content, nullopt when it does not exist; throws cni::Error when unreadable.
using FileReader = std::function<std::optional<std::string>(const std::string& path)>;

// The host-local stores of the plugins of `list`: each plugin's "ipam" section of type host-local, and
// for flannel the one it renders for its delegate from subnet.env. Other IPAM types are left out.
std::vector<IpamStore> IpamStoresOf(const cni::NetConfList& list, const FileReader& read);

struct RangeUsage {
  std::string range_set;  // as written: "subnet 10.1.0.0/24 (10.1.0.1-10.1.0.254)"
  uint64_t capacity = 0;  // addresses it can hand out (gateways excluded)
  uint64_t reserved = 0;  // reservations in it
  uint64_t free = 0;
  bool operator==(const RangeUsage&) const = default;
};

// For each range set of `store`, how many of `reservations` it holds.
std::vector<RangeUsage> UsageOf(const IpamStore& store, const std::vector<Reservation>& reservations);

// "RANGE SET  CAPACITY  RESERVED  FREE" columns.
std::string FormatUsageTable(const std::vector<RangeUsage>& usage);
nlohmann::json UsageToJson(const std::vector<RangeUsage>& usage);

}  // namespace netiface::cli
