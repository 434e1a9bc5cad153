// Unknown config keys: a misspelt key (`isGatway`) is otherwise silently ignored. Configs stay accepted
// (one config is read by several plugins and by runtimes): skel logs one warning per unknown key, naming
// the nearest known one. The known keys are a plugin's README key table (cmake/readme_keys.cmake makes
// it a header) plus the ones every plugin reads (KeysEveryPluginReads).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace netiface::cni {

// cniVersion, name, type, ipam, dns, args, runtimeConfig, capabilities, prevResult, the GC attachment
// lists and the log keys (log.h).
const std::vector<std::string>& KeysEveryPluginReads();

// The warnings for the keys of `conf` at `section` ("" the top level, "ipam" the ipam object) that
// neither `documented` (dotted paths: "ipam.subnet" names "subnet" in section "ipam") nor, at the top
// level, KeysEveryPluginReads() names: `unknown key "isGatway" (did you mean "isGateway"?), ignored`.
std::vector<std::string> UnknownKeyWarnings(const nlohmann::json& conf, const std::vector<std::string>& documented,
                                            std::string_view section = "");

// The known key closest to `key` (case-insensitive edit distance, at most a third of the key's length and
// at least 2), or "" when none is that close.
std::string NearestKey(std::string_view key, const std::vector<std::string>& known);

}  // namespace netiface::cni
