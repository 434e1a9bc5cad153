// The Linux interface-name rule, once: 1..15 bytes (IFNAMSIZ - 1), not "." or "..", no '/', ':',
// whitespace or NUL (the kernel's dev_valid_name). skel reports CNI_IFNAME's problem in the
// reference's words; libnetlink and the plugins only need the verdict. Header-only.
#pragma once

#include <cctype>
#include <string_view>

namespace netiface::cni {

enum class IfnameProblem { kNone, kEmpty, kTooLong, kDotName, kBadCharacter };

inline IfnameProblem CheckIfname(std::string_view name) {
  if (name.empty()) return IfnameProblem::kEmpty;
  if (name.size() > 15) return IfnameProblem::kTooLong;
  if (name == "." || name == "..") return IfnameProblem::kDotName;
  for (unsigned char c : name) {
    if (c == '/' || c == ':' || c == 0 || std::isspace(c)) return IfnameProblem::kBadCharacter;
  }
  return IfnameProblem::kNone;
}

inline bool IsValidIfname(std::string_view name) { return CheckIfname(name) == IfnameProblem::kNone; }

}  // namespace netiface::cni
