// The canonical in-memory Result (spec 1.1 shape) and its conversion to and from every version.
// Plugins build a Result; only skel and the runtime turn it into JSON of a given version.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "netiface/cni/ip.h"

namespace netiface::cni {

struct Interface {
  std::string name;
  std::string mac;
  std::string sandbox;      // netns path for a container-side interface, empty on the host
  std::optional<int> mtu;   // 1.1.0+
  std::string socket_path;  // 1.1.0+
  std::string pci_id;       // 1.1.0+
  bool operator==(const Interface&) const = default;
};

struct IpConfig {
  std::optional<int> interface;  // index into Result::interfaces
  IpNet address;                 // address with its prefix length
  std::optional<IpAddr> gateway;
  bool operator==(const IpConfig&) const = default;
};

struct Route {
  IpNet dst;
  std::optional<IpAddr> gw;
  std::optional<int> mtu, advmss, priority, table, scope;  // 1.1.0+
  bool operator==(const Route&) const = default;
};

struct Dns {
  std::vector<std::string> nameservers;
  std::string domain;
  std::vector<std::string> search;
  std::vector<std::string> options;
  bool empty() const { return nameservers.empty() && domain.empty() && search.empty() && options.empty(); }
  bool operator==(const Dns&) const = default;
};

struct Result {
  std::vector<Interface> interfaces;
  std::vector<IpConfig> ips;
  std::vector<Route> routes;
  Dns dns;
  bool operator==(const Result&) const = default;
};

// JSON of a Dns object as the spec writes it ({} when empty); parsing is lenient on missing keys.
nlohmann::json DnsToJson(const Dns& d);
Dns DnsFromJson(const nlohmann::json& j);      // throws Error(kDecodeFailure)
Route RouteFromJson(const nlohmann::json& j);  // {dst, gw, ...}; throws Error(kDecodeFailure)
nlohmann::json RouteToJson(const Route& r, std::string_view version);

// Parses a result of the given spec version (0.1.0 .. 1.1.0). Throws Error(kDecodeFailure) when the
// JSON does not have that version's shape, Error(kIncompatibleVersion) for an unknown version.
Result ParseResult(const nlohmann::json& j, std::string_view version);
// Parses using the result's own "cniVersion" key.
Result ParseResult(const nlohmann::json& j);

// Renders the result in the given version's shape, with "cniVersion" set. 0.1/0.2 keep the first IP of
// each family and attach routes by family; throws Error(kIncompatibleVersion, "cannot convert: no valid
// IP addresses") when none is left. 0.3.x/0.4.0 add ips[].version; 1.0.0 drops 1.1-only fields.
nlohmann::json ResultToJson(const Result& r, std::string_view version);
// Whether every result at `version` must carry an IP address (0.1.0 and 0.2.0: ResultToJson throws for
// one without). An ADD that may have no address to report refuses such a version while it validates,
// before its first change. Throws Error(kIncompatibleVersion) for an unknown version.
bool ResultNeedsAnAddress(std::string_view version);

// The exact bytes a plugin prints: 4-space indent, no trailing newline (as the reference plugins).
std::string PrintJson(const nlohmann::json& j);

}  // namespace netiface::cni
