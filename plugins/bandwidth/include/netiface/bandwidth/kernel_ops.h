// The real Ops: libnetlink in the host namespace (the calling thread's) and in CNI_NETNS.
#pragma once

#include <optional>

#include "netiface/bandwidth/ops.h"
#include "netiface/cni/skel.h"
#include "netiface/netlink/netns.h"
#include "netiface/netlink/socket.h"

namespace netiface::bandwidth {

class KernelOps : public Ops {
 public:
  // Opens nothing yet. `args` must outlive this object.
  explicit KernelOps(const cni::CmdArgs& args) : args_(args) {}

  std::optional<nl::LinkInfo> HostPeer(const std::string& ifname) override;
  double TicksPerUsec() override;
  void AddRootTbf(int ifindex, const nl::TbfParams& p) override;
  bool DeleteRootQdisc(int ifindex) override;
  void AddIngressQdisc(int ifindex) override;
  bool DeleteIngressQdisc(int ifindex) override;
  void AddRedirect(int ifindex, int target_ifindex) override;
  nl::LinkInfo CreateIfb(const std::string& name, int mtu) override;
  bool DeleteLink(const std::string& name) override;
  Observed Observe(int host_ifindex, const std::string& ifb) override;

 private:
  nl::Socket& Host();

  const cni::CmdArgs& args_;
  std::optional<nl::Socket> host_;
};

}  // namespace netiface::bandwidth
