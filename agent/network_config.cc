// flanneld's ParseConfig + CheckNetworkConfig (pkg/subnet/config.go), with messages that name the key
// and the value. IPv4 and IPv6 follow the same rules with different numbers (FamilyRules).
#include "netiface/agent/network_config.h"

#include <sys/socket.h>

#include <algorithm>
#include <cctype>
#include <limits>

#include <fmt/format.h>

#include "json_fold.h"
#include "u128.h"

namespace netiface::agent {
namespace {

using Json = nlohmann::ordered_json;
using internal::FromU128;
using internal::ToU128;
using internal::U128;

struct FamilyRules {
  int family;
  const char* network_key;
  const char* len_key;
  const char* min_key;
  const char* max_key;
  int max_subnet_len;   // longer subnets are rejected: a bridge and a tunnel device need room
  int min_network_len;  // a longer network cannot hold four useful subnets
  int default_len;      // the default SubnetLen when the network is large enough for it
};

constexpr FamilyRules kV4{AF_INET, "Network", "SubnetLen", "SubnetMin", "SubnetMax", 30, 28, 24};
constexpr FamilyRules kV6{AF_INET6, "IPv6Network", "IPv6SubnetLen", "IPv6SubnetMin", "IPv6SubnetMax", 126, 124, 64};

const char* FamilyName(int family) { return family == AF_INET ? "IPv4" : "IPv6"; }

// A value as it appears in the message: strings bare, everything else as JSON.
std::string Shown(const Json& v) { return v.is_string() ? v.get<std::string>() : v.dump(); }

U128 SubnetSize(int family, int subnet_len) { return U128{1} << ((family == AF_INET ? 32 : 128) - subnet_len); }

bool GetBool(const Json& root, const char* key, bool fallback) {
  const Json* v = internal::FindFold(root, key);
  if (!v) return fallback;
  if (!v->is_boolean()) throw ConfigError(fmt::format("{} {} is not a boolean", key, v->dump()));
  return v->get<bool>();
}

std::optional<cni::IpNet> GetNetwork(const Json& root, const char* key, int family) {
  const Json* v = internal::FindFold(root, key);
  if (!v) return std::nullopt;
  std::optional<cni::IpNet> net;
  if (v->is_string()) net = cni::IpNet::Parse(v->get<std::string>());
  if (!net || net->family() != family) {
    throw ConfigError(fmt::format("{} {} is not an {} network in CIDR notation", key, Shown(*v), FamilyName(family)));
  }
  return net->Network();  // as Go's net.ParseCIDR, host bits are dropped
}

int GetLen(const Json& root, const char* key, int family) {
  const Json* v = internal::FindFold(root, key);
  if (!v) return 0;
  const int bits = family == AF_INET ? 32 : 128;
  if (!v->is_number_integer() || v->get<int64_t>() < 0 || (v->is_number_unsigned() && v->get<uint64_t>() > 1000)) {
    throw ConfigError(fmt::format("{} {} is not a prefix length", key, v->dump()));
  }
  const int64_t len = v->get<int64_t>();
  if (len > bits)
    throw ConfigError(
        fmt::format("{} {} is not a prefix length: an {} prefix is at most /{}", key, len, FamilyName(family), bits));
  return static_cast<int>(len);
}

std::optional<cni::IpAddr> GetAddr(const Json& root, const char* key, int family) {
  const Json* v = internal::FindFold(root, key);
  if (!v) return std::nullopt;
  std::optional<cni::IpAddr> a;
  if (v->is_string()) a = cni::IpAddr::Parse(v->get<std::string>());
  if (!a || a->family() != family) {
    throw ConfigError(fmt::format("{} {} is not an {} address", key, Shown(*v), FamilyName(family)));
  }
  return a;
}

struct FamilyConfig {
  cni::IpNet network;
  int subnet_len = 0;
  cni::IpAddr min, max;
};

FamilyConfig CheckFamily(const Json& root, const FamilyRules& r) {
  std::optional<cni::IpNet> network = GetNetwork(root, r.network_key, r.family);
  if (!network) throw ConfigError(fmt::format("{} is missing from the network config", r.network_key));
  if (network->prefix_len() == 0 && ToU128(network->addr()) == 0) {
    throw ConfigError(fmt::format("{} {} is not a usable network", r.network_key, network->ToString()));
  }
  FamilyConfig fc;
  fc.network = *network;
  const int prefix = network->prefix_len();
  fc.subnet_len = GetLen(root, r.len_key, r.family);
  if (fc.subnet_len > 0) {
    if (fc.subnet_len > r.max_subnet_len) {
      throw ConfigError(
          fmt::format("{} {} is too long: at most {} (a subnet needs room for a bridge, a tunnel "
                      "device and pods)",
                      r.len_key, fc.subnet_len, r.max_subnet_len));
    }
    if (fc.subnet_len < prefix + 2) {
      throw ConfigError(
          fmt::format("{} {} is too short for {} {}: it must be at least {} (four subnets, the first "
                      "of which is never leased)",
                      r.len_key, fc.subnet_len, r.network_key, network->ToString(), prefix + 2));
    }
  } else if (prefix > r.min_network_len) {
    throw ConfigError(fmt::format("{} {} is too small: the smallest useful network is a /{}", r.network_key,
                                  network->ToString(), r.min_network_len));
  } else {
    fc.subnet_len = prefix <= r.default_len - 2 ? r.default_len : prefix + 2;
  }

  const U128 size = SubnetSize(r.family, fc.subnet_len);
  const U128 first = ToU128(network->addr());
  const U128 last = ToU128(network->LastAddr());
  auto bound = [&](const char* key, U128 fallback) {
    std::optional<cni::IpAddr> a = GetAddr(root, key, r.family);
    if (!a || ToU128(*a) == 0) return FromU128(r.family, fallback);  // Go: the zero address means unset
    if (!network->Contains(*a)) {
      throw ConfigError(fmt::format("{} {} is outside {} {}", key, a->ToString(), r.network_key, network->ToString()));
    }
    if (ToU128(*a) % size != 0) {
      throw ConfigError(
          fmt::format("{} {} is not on a {} ({}) boundary", key, a->ToString(), r.len_key, fc.subnet_len));
    }
    return *a;
  };
  fc.min = bound(r.min_key, first + size);  // the first subnet holds the network address: never leased
  fc.max = bound(r.max_key, last + 1 - size);
  if (ToU128(fc.min) > ToU128(fc.max)) {
    throw ConfigError(fmt::format("{} {} is above {} {}", r.min_key, fc.min.ToString(), r.max_key, fc.max.ToString()));
  }
  return fc;
}

void ParseBackend(const Json& root, NetworkConfig& cfg) {
  const Json* backend = internal::FindFold(root, "Backend");
  if (!backend) {
    cfg.backend_type = "udp";
    cfg.backend = nlohmann::json::object();
    return;
  }
  if (!backend->is_object()) throw ConfigError(fmt::format("Backend {} is not an object", backend->dump()));
  const Json* type = internal::FindFold(*backend, "Type");
  if (!type) throw ConfigError("Backend.Type is missing from the network config");
  if (!type->is_string() || type->get<std::string>().empty()) {
    throw ConfigError(fmt::format("Backend.Type {} is not a backend name", type->dump()));
  }
  cfg.backend_type = type->get<std::string>();
  std::transform(cfg.backend_type.begin(), cfg.backend_type.end(), cfg.backend_type.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  cfg.backend = nlohmann::json::parse(backend->dump());
}

}  // namespace

NetworkConfig ParseNetworkConfig(std::string_view json_text) {
  Json root;
  try {
    root = Json::parse(json_text);
  } catch (const Json::exception& e) {
    throw ConfigError(std::string("invalid JSON in the network config: ") + e.what());
  }
  if (!root.is_object()) {
    throw ConfigError(fmt::format("the network config {} is not a JSON object", root.dump().substr(0, 80)));
  }
  NetworkConfig cfg;
  cfg.enable_ipv4 = GetBool(root, "EnableIPv4", true);
  cfg.enable_ipv6 = GetBool(root, "EnableIPv6", false);
  if (!cfg.enable_ipv4 && !cfg.enable_ipv6) {
    throw ConfigError("EnableIPv4 false and EnableIPv6 false: the network config enables no address family");
  }
  if (cfg.enable_ipv4) {
    FamilyConfig fc = CheckFamily(root, kV4);
    cfg.network = fc.network;
    cfg.subnet_len = fc.subnet_len;
    cfg.subnet_min = fc.min;
    cfg.subnet_max = fc.max;
  }
  if (cfg.enable_ipv6) {
    FamilyConfig fc = CheckFamily(root, kV6);
    cfg.ipv6_network = fc.network;
    cfg.ipv6_subnet_len = fc.subnet_len;
    cfg.ipv6_subnet_min = fc.min;
    cfg.ipv6_subnet_max = fc.max;
  }
  ParseBackend(root, cfg);
  return cfg;
}

bool SubnetFits(const NetworkConfig& cfg, const cni::IpNet& subnet) {
  if (subnet.HasHostBits()) return false;
  if (subnet.family() == AF_INET) {
    return cfg.enable_ipv4 && subnet.prefix_len() == cfg.subnet_len && cfg.subnet_min <= subnet.addr() &&
           subnet.addr() <= cfg.subnet_max;
  }
  return cfg.enable_ipv6 && subnet.prefix_len() == cfg.ipv6_subnet_len &&
         ToU128(cfg.ipv6_subnet_min) <= ToU128(subnet.addr()) && ToU128(subnet.addr()) <= ToU128(cfg.ipv6_subnet_max);
}

uint64_t SubnetCount(const NetworkConfig& cfg) {
  const bool v4 = cfg.enable_ipv4;
  if (!v4 && !cfg.enable_ipv6) return 0;
  const cni::IpAddr& min = v4 ? cfg.subnet_min : cfg.ipv6_subnet_min;
  const cni::IpAddr& max = v4 ? cfg.subnet_max : cfg.ipv6_subnet_max;
  const int len = v4 ? cfg.subnet_len : cfg.ipv6_subnet_len;
  if (ToU128(min) > ToU128(max) || len <= 0) return 0;
  const U128 n = (ToU128(max) - ToU128(min)) / SubnetSize(min.family(), len) + 1;
  return n > std::numeric_limits<uint64_t>::max() ? std::numeric_limits<uint64_t>::max() : static_cast<uint64_t>(n);
}

}  // namespace netiface::agent
