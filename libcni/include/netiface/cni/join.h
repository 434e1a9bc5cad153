// Messages of several failures in one text: "first; second; third". Header-only.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace netiface::cni {

inline constexpr std::string_view kMessageSeparator = "; ";

// Appends `part` to `list`, after a separator when `list` is not empty.
inline void AppendMessage(std::string& list, std::string_view part) {
  if (!list.empty()) list += kMessageSeparator;
  list += part;
}

// The parts joined by "; " ("" for none).
inline std::string JoinMessages(const std::vector<std::string>& parts) {
  std::string out;
  for (size_t i = 0; i < parts.size(); ++i) {
    if (i) out += kMessageSeparator;
    out += parts[i];
  }
  return out;
}

}  // namespace netiface::cni
