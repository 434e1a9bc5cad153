// The runtime's per-attachment result cache, in Go libcni's layout and byte format, so that this
// runtime, podman, containerd and cnitool read each other's entries:
//   <cache dir>/results/<network>-<containerID>-<ifname>
//   {"kind":"cniCacheV1","containerId":..,"config":<base64 of the conflist bytes>,"ifName":..,
//    "networkName":..,"netns":..,"cniArgs":[[k,v],...],"capabilityArgs":{..},"result":{..}}
// (Go's encoding/json of libcni's cachedInfo: that field order, compact, map keys sorted, HTML
// characters escaped, empty netns/cniArgs/capabilityArgs/result omitted.)
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace netiface::cni {

inline constexpr std::string_view kDefaultCacheDir = "/var/lib/cni";
inline constexpr std::string_view kCacheKindV1 = "cniCacheV1";

using ArgPairs = std::vector<std::pair<std::string, std::string>>;

struct CacheEntry {
  std::string container_id;
  std::string ifname;
  std::string network_name;
  std::string netns;   // "" when unknown (entries written by libcni before 1.2)
  std::string config;  // the exact conflist bytes the attachment was added with
  ArgPairs cni_args;
  nlohmann::json capability_args;  // object, or null when none
  nlohmann::json result;           // the final ADD result as the plugin printed it, or null
  bool legacy = false;             // read from a pre-cniCacheV1 file (the whole file is the result)
  bool operator==(const CacheEntry&) const = default;
};

// The file's bytes for `e`, exactly as Go's json.Marshal(cachedInfo) writes them.
std::string EncodeCacheEntry(const CacheEntry& e);
// Parses a cache file. A valid JSON object whose "kind" is not cniCacheV1 is a legacy entry: the
// whole object is the result and only `result` and `legacy` are set. Throws Error(kDecodeFailure)
// when the bytes are not a JSON object or a field has the wrong type.
CacheEntry DecodeCacheEntry(std::string_view bytes);

// Go's encoding/json rendering of a JSON value: compact, object keys sorted, '<' '>' '&' U+2028
// U+2029 escaped as \u00XX / \u20XX.
std::string GoJsonMarshal(const nlohmann::json& j);
// Standard base64 with padding (Go's []byte JSON encoding). Decode throws Error(kDecodeFailure).
std::string Base64Encode(std::string_view bytes);
std::string Base64Decode(std::string_view text);

class ResultCache {
 public:
  explicit ResultCache(std::string dir = std::string(kDefaultCacheDir)) : dir_(std::move(dir)) {}

  const std::string& dir() const { return dir_; }
  // <dir>/results/<network>-<containerID>-<ifname>. Throws Error(kInvalidConfig) when a part is
  // empty or contains '/' (it would leave the results folder).
  std::string PathFor(const std::string& network, const std::string& container_id, const std::string& ifname) const;

  // Creates <dir>/results (0700) if needed and replaces the entry atomically (0600).
  // Throws Error(kIoFailure).
  void Write(const CacheEntry& e) const;
  // nullopt when there is no entry. Throws Error(kDecodeFailure) for an unreadable entry and
  // Error(kIoFailure) when the file cannot be read.
  std::optional<CacheEntry> Read(const std::string& network, const std::string& container_id,
                                 const std::string& ifname) const;
  // Returns false when there was no entry. Throws Error(kIoFailure) on other failures.
  bool Remove(const std::string& network, const std::string& container_id, const std::string& ifname) const;
  // Every readable cniCacheV1 entry (sorted by file name), like libcni's GetCachedAttachments:
  // entries that cannot be parsed, legacy ones, those without ifName or networkName and
  // WriteFileAtomic temporaries (*.tmp-*) are skipped. `container_id` non-empty keeps only that container's entries.
  std::vector<CacheEntry> List(const std::string& container_id = {}) const;

 private:
  std::string dir_;
};

}  // namespace netiface::cni
