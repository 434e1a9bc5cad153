// Spec versions: parsing, ordering and the feature gates of the skel.
#pragma once

#include <array>
#include <optional>
#include <string>
#include <string_view>

namespace netiface::cni {

// Every spec version this suite speaks, oldest first.
inline constexpr std::array<std::string_view, 7> kSupportedVersions = {"0.1.0", "0.2.0", "0.3.0", "0.3.1",
                                                                       "0.4.0", "1.0.0", "1.1.0"};
inline constexpr std::string_view kCurrentVersion = "1.1.0";

struct SpecVersion {
  int major = 0, minor = 0, patch = 0;
  // Accepts "X.Y.Z" (and "X.Y" as X.Y.0). Returns nullopt on anything else.
  static std::optional<SpecVersion> Parse(std::string_view s);
  std::string ToString() const;
  auto operator<=>(const SpecVersion&) const = default;
};

bool IsSupportedVersion(std::string_view v);
// Semver comparison of two version strings; unparsable strings sort before everything.
int CompareVersions(std::string_view a, std::string_view b);
inline bool VersionAtLeast(std::string_view v, std::string_view min) { return CompareVersions(v, min) >= 0; }

}  // namespace netiface::cni
