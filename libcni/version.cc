#include "netiface/cni/version.h"

#include <algorithm>
#include <charconv>

namespace netiface::cni {
namespace {

// A run of 1..9 decimal digits (no sign, no spaces).
std::optional<int> ParseComponent(std::string_view s) {
  if (s.empty() || s.size() > 9) return std::nullopt;
  if (s.find_first_not_of("0123456789") != std::string_view::npos) return std::nullopt;
  int v = 0;
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || ptr != s.data() + s.size()) return std::nullopt;
  return v;
}

}  // namespace

std::optional<SpecVersion> SpecVersion::Parse(std::string_view s) {
  SpecVersion v;
  int* parts[3] = {&v.major, &v.minor, &v.patch};
  int n = 0;
  while (true) {
    if (n == 3) return std::nullopt;
    size_t dot = s.find('.');
    auto c = ParseComponent(s.substr(0, dot));
    if (!c) return std::nullopt;
    *parts[n++] = *c;
    if (dot == std::string_view::npos) break;
    s.remove_prefix(dot + 1);
  }
  if (n < 2) return std::nullopt;
  return v;
}

std::string SpecVersion::ToString() const {
  return std::to_string(major) + "." + std::to_string(minor) + "." + std::to_string(patch);
}

bool IsSupportedVersion(std::string_view v) {
  return std::find(kSupportedVersions.begin(), kSupportedVersions.end(), v) != kSupportedVersions.end();
}

int CompareVersions(std::string_view a, std::string_view b) {
  auto va = SpecVersion::Parse(a);
  auto vb = SpecVersion::Parse(b);
  if (!va && !vb) return 0;
  if (!va) return -1;
  if (!vb) return 1;
  if (*va < *vb) return -1;
  if (*vb < *va) return 1;
  return 0;
}

}  // namespace netiface::cni
