// The delegate configs flannel keeps between ADD and DEL, one file per attachment under dataDir.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "netiface/cni/config.h"

namespace netiface::flannel {

struct SavedConfig {
  nlohmann::json conf;  // the delegate config; null when the file did not parse
  std::string path;     // the file it came from
};

// Our file for (container ID, ifname), else the reference plugin's file for the container ID; nullopt
// when neither exists. An unparsable file is returned with a null conf (and logged). Throws
// cni::Error(kIoFailure) when a file exists but cannot be read.
std::optional<SavedConfig> LoadSavedConfig(const std::string& data_dir, const std::string& container_id,
                                           const std::string& ifname);

// Writes the file (0600, fsynced) in data_dir, which is created 0700 when missing. Throws
// cni::Error(kIoFailure).
void SaveConfig(const std::string& path, const std::string& data_dir, const std::string& conf);

// Removes the file; a file that is already gone is fine. Throws cni::Error(kIoFailure).
void RemoveSavedConfig(const std::string& path);

// The saved configs in data_dir that belong to `network` (their "name") and to no attachment in `valid`
// (neither <cid>-<ifname> nor the reference's <cid>). Files that do not parse are never listed.
std::vector<std::string> StaleSavedConfigs(const std::string& data_dir, const std::string& network,
                                           const std::vector<cni::Attachment>& valid);

}  // namespace netiface::flannel
