// The flannel meta plugin's configuration and the delegate config it renders from it and subnet.env.
// Everything here is pure.
#pragma once

#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "netiface/cni/config.h"
#include "netiface/flannel/subnet_env.h"

namespace netiface::flannel {

inline constexpr std::string_view kDefaultSubnetFile = "/run/flannel/subnet.env";
inline constexpr std::string_view kDefaultDataDir = "/var/lib/cni/flannel";

struct Config {
  std::string name;
  std::string cni_version;       // the parsed version ("0.1.0" when absent)
  bool has_cni_version = false;  // the key was present in the config
  std::string subnet_file{kDefaultSubnetFile};
  std::string data_dir{kDefaultDataDir};
  nlohmann::json delegate = nlohmann::json::object();  // the user's "delegate" object
  nlohmann::json ipam;                                 // the user's "ipam" object, or null
  nlohmann::json runtime_config;                       // object, empty when absent
  nlohmann::json raw;                                  // the whole config (GC's attachment lists are copied from it)
};

// Throws cni::Error(kInvalidConfig) naming the key: subnetFile/dataDir not strings, delegate or ipam
// not objects, delegate containing "name" or "ipam", delegate.type not a string.
Config ParseConfig(const cni::NetConf& conf);

// The delegate's config: the user's delegate with defaults filled in (type "bridge", ipMasq =
// !FLANNEL_IPMASQ, mtu = FLANNEL_MTU, isGateway true for bridge), name = the network name, cniVersion and
// runtimeConfig copied, and ipam = the user's ipam (dataDir and other keys kept) with type defaulting to
// host-local, ranges replaced by one range set per present FLANNEL_SUBNET / FLANNEL_IPV6_SUBNET, and
// routes = the user's routes plus one {dst} per FLANNEL_NETWORK / FLANNEL_IPV6_NETWORK entry.
nlohmann::json RenderDelegate(const Config& c, const SubnetEnv& env);

// The delegate's "type" of a rendered or saved delegate config. Throws cni::Error(kInvalidConfig).
std::string DelegateType(const nlohmann::json& delegate);

// Where ADD saves the delegate config: <dataDir>/<containerID>-<ifname>.
std::string SavedConfigPath(const std::string& data_dir, const std::string& container_id, const std::string& ifname);
// Where the reference flannel plugin saved it: <dataDir>/<containerID>.
std::string LegacyConfigPath(const std::string& data_dir, const std::string& container_id);

}  // namespace netiface::flannel
