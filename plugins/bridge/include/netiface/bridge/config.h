// The bridge plugin's configuration: the reference bridge's keys read from a NetConf. Pure.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "netiface/cni/config.h"
#include "netiface/cni/mac.h"
#include "netiface/cni/result.h"

namespace netiface::bridge {

inline constexpr std::string_view kDefaultBridgeName = "cni0";

struct Config {
  std::string network;  // the network name (NetConf name)
  std::string cni_version;
  std::string bridge{kDefaultBridgeName};
  bool is_gateway = false;  // true also when is_default_gateway
  bool is_default_gateway = false;
  bool force_address = false;
  int mtu = 0;  // 0: kernel default
  bool hairpin = false;
  bool promisc = false;
  bool ip_masq = false;
  std::string ip_masq_backend;  // accepted for compatibility; the nat library picks nftables
  bool enable_dad = false;
  std::string ipam_type;        // "" = no IPAM (layer 2 only)
  std::optional<cni::Dns> dns;  // set and non-empty: replaces the IPAM result's DNS
};

// Reads the keys from conf.raw. Unknown keys are ignored. Throws cni::Error(kInvalidConfig) naming the key
// when a key has the wrong type or value, and cni::Error(kUnsupportedField) for a reference feature that is
// switched on but not implemented (vlan, vlanTrunk, macspoofchk, portIsolation, disableContainerInterface).
// Does not judge combinations: see ValidateForAdd.
Config ParseConfig(const cni::NetConf& conf);

// The checks only ADD needs (DEL must work with whatever was accepted before): hairpinMode and promiscMode
// are exclusive (cni::Error(kInvalidConfig)); without IPAM the version must be able to express a result
// without an IP address, 0.3.0 or later (cni::Error(kIncompatibleVersion)).
void ValidateForAdd(const Config& c);

// The requested container MAC: runtimeConfig.mac, else args.cni.mac, else CNI_ARGS MAC=; "" when none.
// Returned lower-case "aa:bb:cc:dd:ee:ff". Throws cni::Error(kInvalidConfig) for a malformed MAC and
// cni::Error(kInvalidEnv) for malformed CNI_ARGS.
std::string RequestedMac(const cni::NetConf& conf, std::string_view cni_args);

using cni::NormalizeMac;  // netiface/cni/mac.h

}  // namespace netiface::bridge
