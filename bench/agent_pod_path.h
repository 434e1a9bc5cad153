// The two ends of the bench's pod-to-pod path besides the agent's node. The far end is a second node
// made by hand with ip and bridge (no second agent: the bench writes that node's lease itself, so it
// knows when it was put): a node namespace on the underlay, with its own flannel.1 for vxlan, and a pod
// namespace behind it. The near end is a pod on the agent's node, wired as the flannel plugin would (a
// veth to the node, the subnet's first address on the node's side).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "agent_peers.h"
#include "agent_procs.h"
#include "agent_rig.h"

namespace netiface::bench::agent {

inline constexpr char kRemoteIp[] = "192.0.2.2";
inline constexpr char kRemoteMac[] = "0e:6e:62:ff:00:02";

class RemoteNode {
 public:
  // Namespaces nab-r-<tag> (eth0 = kRemoteIp on the underlay's bridge; flannel.1: VNI 1, local
  // kRemoteIp, port 8472, learning off, MAC kRemoteMac; forwarding on) and nab-rp-<tag> (its pod). For
  // every one of `subnets` the node holds .1/24 on its veth to the pod and the pod .2/24, so any of
  // them can be the subnet of the lease the bench writes for this node. Throws when ip fails.
  RemoteNode(const Rig& rig, const std::vector<Peer>& subnets);
  // The way back to the agent's node for host-gw: `subnet` ("10.0.7.1/24") via kNodeIp dev eth0.
  // Replaces the way back set before.
  void RouteBackHostGw(const std::string& subnet);
  // For vxlan: `subnet` via its network address dev flannel.1 onlink, that address's permanent
  // neighbour `vtep_mac`, and the FDB entry `vtep_mac` dst kNodeIp. Replaces the way back set before.
  void RouteBackVxlan(const std::string& subnet, const std::string& vtep_mac);

 private:
  void DropRouteBack();
  std::unique_ptr<Netns> node_, pod_;
  std::string back_;  // the route back set last ("10.0.7.0/24"), "" when none
};

class LocalPod {
 public:
  // Namespace nab-p-<tag> with eth0 = `subnet`.2/24 and a default route via .1, which is on the
  // node's veth "vpod"; forwarding on in the node. `subnet` is FLANNEL_SUBNET ("10.0.7.1/24").
  LocalPod(const Rig& rig, const std::string& subnet);
  std::string path() const { return pod_->path(); }

 private:
  std::unique_ptr<Netns> pod_;
};

// "10.0.7.1/24" -> "10.0.7.<n>". Throws std::runtime_error for anything but an IPv4 /24.
std::string HostIn(const std::string& subnet, int n);

}  // namespace netiface::bench::agent
