#include "netiface/cni/config_keys.h"

#include <algorithm>
#include <cctype>
#include <set>

namespace netiface::cni {
namespace {

// Levenshtein distance, ignoring case.
size_t Distance(std::string_view a, std::string_view b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diagonal = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      size_t above = row[j];
      bool same =
          std::tolower(static_cast<unsigned char>(a[i - 1])) == std::tolower(static_cast<unsigned char>(b[j - 1]));
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (same ? 0 : 1)});
      diagonal = above;
    }
  }
  return row[b.size()];
}

// The names `documented` gives to keys of `section`.
std::vector<std::string> KnownAt(const std::vector<std::string>& documented, std::string_view section) {
  std::set<std::string> names;
  for (const auto& path : documented) {
    std::string_view rest = path;
    if (!section.empty()) {
      std::string prefix = std::string(section) + ".";
      if (rest.substr(0, prefix.size()) != prefix) continue;
      rest.remove_prefix(prefix.size());
    }
    names.insert(std::string(rest.substr(0, rest.find('.'))));
    names.insert(std::string(rest));  // keys with a dot of their own: "cni.dev/attachments"
  }
  if (section.empty()) names.insert(KeysEveryPluginReads().begin(), KeysEveryPluginReads().end());
  return {names.begin(), names.end()};
}

}  // namespace

const std::vector<std::string>& KeysEveryPluginReads() {
  static const std::vector<std::string> keys = {"cniVersion",
                                                "name",
                                                "type",
                                                "ipam",
                                                "dns",
                                                "args",
                                                "runtimeConfig",
                                                "capabilities",
                                                "prevResult",
                                                "cni.dev/valid-attachments",
                                                "cni.dev/attachments",
                                                "logLevel",
                                                "logFile",
                                                "logFileMaxSize",
                                                "logFileMaxCount"};
  return keys;
}

std::string NearestKey(std::string_view key, const std::vector<std::string>& known) {
  size_t limit = std::max<size_t>(2, key.size() / 3), best = limit + 1;
  std::string nearest;
  for (const auto& k : known) {
    size_t d = Distance(key, k);
    if (d < best) {
      best = d;
      nearest = k;
    }
  }
  return nearest;
}

std::vector<std::string> UnknownKeyWarnings(const nlohmann::json& conf, const std::vector<std::string>& documented,
                                            std::string_view section) {
  const nlohmann::json* obj = &conf;
  if (!section.empty()) {
    auto it = conf.is_object() ? conf.find(std::string(section)) : conf.end();
    if (it == conf.end()) return {};
    obj = &*it;
  }
  if (!obj->is_object()) return {};
  const std::vector<std::string> known = KnownAt(documented, section);
  std::vector<std::string> out;
  for (const auto& [key, value] : obj->items()) {
    if (std::binary_search(known.begin(), known.end(), key)) continue;
    std::string where = section.empty() ? key : std::string(section) + "." + key;
    std::string w = "unknown key \"" + where + "\"";
    if (std::string nearest = NearestKey(key, known); !nearest.empty()) {
      w += " (did you mean \"" + (section.empty() ? nearest : std::string(section) + "." + nearest) + "\"?)";
    }
    out.push_back(w + ", ignored");
  }
  return out;
}

}  // namespace netiface::cni
