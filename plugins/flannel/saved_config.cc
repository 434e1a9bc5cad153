#include "netiface/flannel/saved_config.h"

#include <errno.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <set>

#include "netiface/cni/error.h"
#include "netiface/cni/file.h"
#include "netiface/cni/log.h"
#include "netiface/flannel/delegate.h"

namespace netiface::flannel {
namespace {

nlohmann::json ParseOrNull(const std::string& text, const std::string& path) {
  auto j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) {
    log::Warn("flannel: saved delegate config {} is not a JSON object; ignoring it", path);
    return nullptr;
  }
  return j;
}

}  // namespace

std::optional<SavedConfig> LoadSavedConfig(const std::string& data_dir, const std::string& container_id,
                                           const std::string& ifname) {
  for (const std::string& path :
       {SavedConfigPath(data_dir, container_id, ifname), LegacyConfigPath(data_dir, container_id)}) {
    if (auto text = cni::ReadFileIfExists(path)) return SavedConfig{ParseOrNull(*text, path), path};
  }
  return std::nullopt;
}

void SaveConfig(const std::string& path, const std::string& data_dir, const std::string& conf) {
  cni::MakeDirs(data_dir, 0700);
  // In place with one fsync rather than WriteFileAtomic's temp file + rename + folder fsync: the rename
  // needs a second journal commit (~4 ms on ext4, most of an ADD). A torn file is harmless here: DEL
  // treats an unparsable saved config as a missing one and renders the delegate config again.
  cni::WriteFileDurable(path, conf, 0600);
}

void RemoveSavedConfig(const std::string& path) {
  if (::unlink(path.c_str()) != 0 && errno != ENOENT) {
    throw cni::Error(cni::kIoFailure, "cannot remove " + path, std::strerror(errno));
  }
}

std::vector<std::string> StaleSavedConfigs(const std::string& data_dir, const std::string& network,
                                           const std::vector<cni::Attachment>& valid) {
  std::set<std::string> keep;
  for (const auto& a : valid) {
    keep.insert(a.container_id + "-" + a.ifname);
    keep.insert(a.container_id);
  }
  std::vector<std::string> stale;
  std::error_code ec;
  for (std::filesystem::directory_iterator it(data_dir, ec), end; !ec && it != end; it.increment(ec)) {
    std::string name = it->path().filename().string();
    // Hidden names and WriteFileAtomic's temporaries are not saved configs.
    if (name.empty() || name[0] == '.' || name.find(".tmp-") != std::string::npos || keep.count(name)) continue;
    std::string path = data_dir + "/" + name;
    std::optional<std::string> text;
    try {
      text = cni::ReadFileIfExists(path);
    } catch (const cni::Error&) {
      continue;  // a folder or an unreadable file: not ours to judge
    }
    if (!text) continue;
    auto j = nlohmann::json::parse(*text, nullptr, false);
    if (!j.is_object()) continue;
    auto n = j.find("name");
    if (n != j.end() && n->is_string() && *n == network) stale.push_back(path);
  }
  return stale;
}

}  // namespace netiface::flannel
