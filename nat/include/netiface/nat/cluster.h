// The node agent's rules for a whole cluster network (flanneld's masquerade and forward rules), in the
// same table inet netiface as the attachments' NAT, in chains of their own. Acts in the current network
// namespace; one transaction per call; the same flock as the attachment calls.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "netiface/cni/ip.h"

namespace netiface::nat {

struct ClusterFamily {
  cni::IpNet network;  // the cluster network (e.g. 10.5.0.0/16)
  cni::IpNet subnet;   // this node's pod subnet (e.g. 10.5.34.0/24)
};

struct ClusterRules {
  // Names the group: its rules carry the comment "netiface-agent:<owner>" (a safe token), which no
  // attachment's comment ("netiface:...") can equal or prefix.
  std::string owner = "cluster";
  std::optional<ClusterFamily> v4;
  std::optional<ClusterFamily> v6;
  // flanneld's masquerade (iptables semantics), per family, in chain cluster_postrouting (nat,
  // postrouting, srcnat):
  //   meta mark & 0x4000 == 0x4000 return          (kube-proxy marks these for its own masquerade)
  //   saddr SUBNET daddr NETWORK return             (pod -> cluster: keep the pod's address)
  //   saddr NETWORK daddr SUBNET return             (cluster -> pod)
  //   saddr != NETWORK daddr SUBNET return          (outside -> pod: e.g. a published port)
  //   saddr NETWORK daddr != 224.0.0.0/4 masquerade fully-random   (ff00::/8 for IPv6)
  //   saddr != NETWORK daddr NETWORK masquerade fully-random       (the node itself -> remote pods)
  bool masquerade = false;
  // Accept forwarding from and to the cluster network, in chain cluster_forward (filter, forward,
  // priority filter). An accept here cannot override another table's drop (nftables evaluates every
  // base chain of a hook); it is what flanneld's FORWARD rules amount to on a node whose policy accepts.
  bool forward = false;
};

// Makes the group's rules exactly those of `rules` (none when both switches are off), keeping their
// position; nothing is written when they already are. Throws cni::Error(kNatFailure).
void ApplyClusterRules(const ClusterRules& rules);
// Removes every rule of the group (and chains/table left empty). False when there was none.
bool RemoveClusterRules(const std::string& owner = "cluster");
// The planned rules that are missing or changed, as "<chain>: <rule>"; empty when all are in place.
std::vector<std::string> MissingClusterRules(const ClusterRules& rules);

}  // namespace netiface::nat
