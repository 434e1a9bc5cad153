// Everything the bandwidth plugin's verbs read or change outside their own memory. KernelOps
// (kernel_ops.h) is the real one; the unit tests use an in-memory double that can fail any call.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "netiface/netlink/link.h"
#include "netiface/netlink/tc.h"

namespace netiface::bandwidth {

// What CHECK compares with the plan: one read of the host end and of the ifb.
struct Observed {
  std::vector<nl::QdiscInfo> host_qdiscs;
  std::vector<nl::RedirectFilterInfo> host_filters;  // under the host end's ingress qdisc
  std::optional<nl::LinkInfo> ifb;
  std::vector<nl::QdiscInfo> ifb_qdiscs;
};

class Ops {
 public:
  virtual ~Ops() = default;
  // The host-namespace link that is the veth peer of `ifname` in the container namespace; nullopt when
  // the namespace, the link or its peer is gone. Throws Error(kInvalidEnv) when CNI_NETNS is not a netns.
  virtual std::optional<nl::LinkInfo> HostPeer(const std::string& ifname) = 0;
  // The psched clock (/proc/net/psched) in ticks per microsecond.
  virtual double TicksPerUsec() = 0;
  // --- Host namespace; each call is one netlink request: it changes all or nothing. ---
  virtual void AddRootTbf(int ifindex, const nl::TbfParams& p) = 0;
  virtual bool DeleteRootQdisc(int ifindex) = 0;
  virtual void AddIngressQdisc(int ifindex) = 0;
  virtual bool DeleteIngressQdisc(int ifindex) = 0;  // and the filters under it
  virtual void AddRedirect(int ifindex, int target_ifindex) = 0;
  // The ifb device, up, as the kernel reports it once made.
  virtual nl::LinkInfo CreateIfb(const std::string& name, int mtu) = 0;
  virtual bool DeleteLink(const std::string& name) = 0;  // false when absent
  virtual Observed Observe(int host_ifindex, const std::string& ifb) = 0;
};

}  // namespace netiface::bandwidth
