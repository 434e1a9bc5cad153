// Go's encoding/json matches object keys to struct fields ignoring case; flanneld's records are read
// that way, so ours are too. Private to agent_lib.
#pragma once

#include <cctype>
#include <string_view>

#include <nlohmann/json.hpp>

namespace netiface::agent::internal {

inline bool EqualFold(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(a[i])) != std::tolower(static_cast<unsigned char>(b[i]))) return false;
  }
  return true;
}

// The value of the last key of `obj` (an object, in document order) equal to `name` ignoring ASCII
// case, as Go's decoder keeps the last one it sees; nullptr when there is none or the value is null
// (Go leaves a field alone on null).
inline const nlohmann::ordered_json* FindFold(const nlohmann::ordered_json& obj, std::string_view name) {
  const nlohmann::ordered_json* found = nullptr;
  for (auto it = obj.begin(); it != obj.end(); ++it) {
    if (EqualFold(it.key(), name)) found = &it.value();
  }
  return found && !found->is_null() ? found : nullptr;
}

}  // namespace netiface::agent::internal
