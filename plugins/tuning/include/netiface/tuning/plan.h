// What the tuning verbs decide, as values: the link attributes and sysctls before an ADD (the backup,
// in the reference's file format plus the sysctls), and CHECK's comparison. Pure.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "netiface/tuning/config.h"

namespace netiface::tuning {

// The container interface's attributes that tuning can change, as the kernel reports them.
struct LinkState {
  std::string mac;
  int mtu = 0;
  bool promisc = false;
  bool allmulti = false;
  uint32_t txqlen = 0;
  bool operator==(const LinkState&) const = default;
};

// The original values, saved before the first change and put back by DEL. The file is the reference's
// (keys mac, promisc, mtu, allmulti, indented by one space), so that either plugin's DEL restores after
// either's ADD; txQLen and sysctl are ours (the reference's reader ignores unknown keys).
struct Backup {
  std::optional<std::string> mac;
  std::optional<bool> promisc;
  std::optional<int> mtu;
  std::optional<bool> allmulti;
  std::optional<uint32_t> txqlen;
  std::map<std::string, std::string> sysctls;  // /proc/sys path -> value before the ADD
  bool empty() const { return !mac && !promisc && !mtu && !allmulti && !txqlen && sysctls.empty(); }
  bool operator==(const Backup&) const = default;
};

// The backup an ADD of `c` writes: the current value of everything it is about to change. Values an
// earlier backup of the same attachment holds are kept (they are the originals: a repeated ADD must not
// record its own changes as such).
Backup PlanBackup(const Config& c, const LinkState& now, const std::map<std::string, std::string>& sysctls_now,
                  const std::optional<Backup>& earlier);

std::string BackupToJson(const Backup& b);
// Reads a backup of either plugin. Throws Error(kDecodeFailure) when it is not one.
Backup BackupFromJson(std::string_view text);

// CHECK (pure): every way the link and sysctls differ from `c`, as the reference compares them (sysctl
// values without the trailing newline; promisc: false means it must be off).
std::vector<std::string> Compare(const Config& c, const LinkState& link,
                                 const std::map<std::string, std::optional<std::string>>& sysctls);

}  // namespace netiface::tuning
