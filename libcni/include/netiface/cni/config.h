// Network configuration as the runtime hands it to a plugin, and conflists as the runtime reads them.
// Unknown keys are kept in raw: a plugin reads its own keys from there.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "netiface/cni/result.h"

namespace netiface::cni {

// One attachment: what GC's valid list names.
struct Attachment {
  std::string container_id;
  std::string ifname;
  bool operator==(const Attachment&) const = default;
  auto operator<=>(const Attachment&) const = default;
};

// The config one plugin receives on stdin.
struct NetConf {
  nlohmann::json raw;       // the whole object, unknown keys included
  std::string cni_version;  // "0.1.0" when absent (spec)
  std::string name;
  std::string type;
  nlohmann::json ipam;  // object, or null when absent
  std::optional<Dns> dns;
  nlohmann::json runtime_config;      // object (empty when absent)
  nlohmann::json args;                // object (empty when absent)
  std::optional<Result> prev_result;  // parsed at cni_version
  // GC only: cni.dev/valid-attachments, or the older cni.dev/attachments. nullopt when neither is set.
  std::optional<std::vector<Attachment>> valid_attachments;

  // ipam.type, or "" when there is no ipam section.
  std::string IpamType() const;
};

// Parses stdin bytes. Throws Error(kDecodeFailure) on invalid JSON or a non-object,
// Error(kInvalidConfig) when a well-known key has the wrong type or the name is invalid,
// Error(kIncompatibleVersion) when cniVersion is not a version we speak.
NetConf ParseNetConf(std::string_view bytes);

// Network and container names: alphanumeric first, then alphanumerics, '_', '.', '-'
// (never "." or ".."): they reach file paths.
bool IsValidName(std::string_view s);

struct NetConfList {
  nlohmann::json raw;
  std::string cni_version;  // the highest of cniVersion and cniVersions that we speak
  std::string name;
  bool disable_check = false;
  bool disable_gc = false;
  std::vector<nlohmann::json> plugins;
};

// Parses a conflist, or a single-plugin .conf (wrapped as a list of one). Throws Error(kInvalidConfig)
// naming the key on every violation of the spec's rules.
NetConfList ParseNetConfList(std::string_view bytes);

// CNI_ARGS "K=V;K=V". Keys other than `known` are an Error(kInvalidEnv) unless IgnoreUnknown=1|true.
class CniArgs {
 public:
  static CniArgs Parse(std::string_view s, const std::vector<std::string_view>& known);
  std::optional<std::string> Get(std::string_view key) const;

 private:
  std::vector<std::pair<std::string, std::string>> kv_;
};

}  // namespace netiface::cni
