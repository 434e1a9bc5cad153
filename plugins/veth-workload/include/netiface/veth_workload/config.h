// veth-workload's configuration and the per-request inputs (identity, requested MAC, addresses that
// bypass IPAM, floating IPs). Pure: parsing never touches the system, except ResolveNodename.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "netiface/cni/config.h"
#include "netiface/cni/ip.h"
#include "netiface/cni/mac.h"
#include "netiface/cni/result.h"
#include "netiface/cni/skel.h"

namespace netiface::veth_workload {

inline constexpr std::string_view kDefaultDataDir = "/var/lib/cni/veth-workload";
inline constexpr std::string_view kDefaultVethPrefix = "cali";
inline constexpr int kDefaultMtu = 1500;
// A prefix leaves at least this many hex digits of the SHA-1 in a 15-character name.
inline constexpr size_t kMinHashDigits = 4;
inline constexpr size_t kMaxLinkName = 15;

struct Config {
  std::string network;  // NetConf name
  std::string cni_version;
  nlohmann::json ipam;  // the "ipam" object (non-empty "type")
  std::string ipam_type;
  int mtu = kDefaultMtu;
  int num_queues = 1;
  std::string veth_prefix{kDefaultVethPrefix};
  bool include_default_routes = false;
  bool allow_ip_forwarding = false;  // container side ip_forward / all.forwarding
  std::string nodename;              // "" = not configured
  std::string nodename_file;         // "" = not configured
  std::string data_dir{kDefaultDataDir};
  bool feature_ip_addrs_no_ipam = false;  // featureControl.ipAddrsNoIpam
  bool feature_floating_ips = false;      // featureControl.floatingIps
  bool ip_masq = false;
  nlohmann::json ip_masq_backend;  // accepted whatever it is; nftables is the only backend
  std::optional<cni::Dns> dns;     // set and non-empty: replaces the IPAM result's DNS
};

// Reads veth-workload's keys from conf.raw; unknown keys are ignored. Throws
// cni::Error(kInvalidConfig) naming the key for a missing ipam section or a key with a wrong type or
// value.
Config ParseConfig(const cni::NetConf& conf);

// The node name: "nodename", else the first line of "nodenameFile", else the host name. Throws
// cni::Error(kInvalidConfig) naming the key when the file cannot be read, is empty, or the name is
// not a valid name (cni::IsValidName: it becomes part of a file name).
std::string ResolveNodename(const Config& c);

// Who an attachment belongs to: a Kubernetes pod when CNI_ARGS names both K8S_POD_NAMESPACE and
// K8S_POD_NAME, else the container ID.
struct Identity {
  std::string node;
  std::string pod_namespace;  // "" unless k8s
  std::string pod;            // "" unless k8s
  std::string container_id;
  std::string ifname;
  bool IsK8s() const { return !pod.empty(); }
  bool operator==(const Identity&) const = default;
};

// The CNI_ARGS keys we know; others need IgnoreUnknown=1|true.
const std::vector<std::string_view>& KnownCniArgs();

// Throws cni::Error(kInvalidEnv) for malformed CNI_ARGS or a pod namespace/name that is not a valid
// name.
Identity ParseIdentity(const cni::CmdArgs& args, const std::string& node);

// What ADD is asked for beyond the config.
struct AddRequest {
  std::string mac;                                          // lower-case, "" = kernel's choice
  std::optional<std::vector<cni::IpNet>> ip_addrs_no_ipam;  // set: IPAM is bypassed
  std::vector<cni::IpAddr> floating_ips;                    // external addresses mapped to the pod
  bool requests_ips = false;                                // CNI_ARGS IP, args.cni.ips or runtimeConfig.ips
};

// MAC: runtimeConfig.mac, else args.cni.mac, else CNI_ARGS MAC= (unicast, not all-zero).
// args.cni.ipAddrsNoIpam ["ip" | "ip/len", ...] needs featureControl.ipAddrsNoIpam and cannot be
// combined with requested IPs; args.cni.floatingIps ["ip", ...] needs featureControl.floatingIps.
// Throws cni::Error(kInvalidConfig) naming the key, cni::Error(kInvalidEnv) for CNI_ARGS.
AddRequest ParseAddRequest(const Config& c, const cni::CmdArgs& args);

using cni::NormalizeMac;  // netiface/cni/mac.h

}  // namespace netiface::veth_workload
