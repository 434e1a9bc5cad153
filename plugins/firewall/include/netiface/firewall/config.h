// The firewall plugin's configuration and plan: the reference's keys read from a NetConf, and the rules'
// spec (nat/firewall.h) for one attachment. Pure.
#pragma once

#include <string>

#include "netiface/cni/config.h"
#include "netiface/cni/result.h"
#include "netiface/nat/firewall.h"

namespace netiface::firewall {

struct Config {
  std::string network;
  std::string cni_version;
  bool same_bridge = false;  // ingressPolicy "same-bridge"; false: "open" (the default)
};

// backend: absent, "" or "iptables" (its semantics, in nftables); "firewalld" is refused, as is any other
// value. ingressPolicy: absent, "", "open" or "same-bridge". iptablesAdminChainName and firewalldZone must
// be strings when set (README: why nftables needs no admin chain). Throws Error(kInvalidConfig).
Config ParseConfig(const cni::NetConf& conf);

// The attachment's rules: every address of `prev` (the reference accepts all of them); with same-bridge
// the bridge is prev's first interface, as the reference takes it. Throws Error(kInvalidConfig) when prev
// has no address, or, with same-bridge, no first interface or one that is in a sandbox.
nat::FirewallSpec PlanSpec(const Config& c, const std::string& container_id, const std::string& ifname,
                           const cni::Result& prev);

}  // namespace netiface::firewall
