// The real Ops: libnetlink in the host namespace (the calling thread's) and in CNI_NETNS, the IPAM
// plugin as a child process, nftables through nat/. One per verb call (cni::BindVerbs).
#pragma once

#include <optional>
#include <string>

#include "netiface/bridge/ops.h"
#include "netiface/cni/ipam_delegate.h"
#include "netiface/cni/skel.h"
#include "netiface/netlink/netns.h"
#include "netiface/netlink/socket.h"

namespace netiface::bridge {

class KernelOps : public Ops {
 public:
  // Opens nothing yet: sockets and the namespace are opened on first use, so that DEL without a
  // namespace and STATUS never touch one. `args` must outlive this object.
  explicit KernelOps(const cni::CmdArgs& args);
  ~KernelOps() override;

  void StartIpamAdd() override;
  cni::Result WaitIpamAdd() override;
  void IpamDel() override;
  void StartIpamDel() override;
  void WaitIpamDel() override;
  void IpamCheck() override;
  void IpamStatus() override;
  void IpamGc() override;

  void Prepare(const std::string& ifname) override;
  nl::LinkInfo EnsureBridge(const Config& c) override;
  std::string CreateVeth(const Config& c, const nl::LinkInfo& br, const std::string& ifname,
                         const std::string& mac) override;
  bool DeleteHostVeth(const std::string& name) override;
  void ConfigureContainer(const Config& c, const std::string& ifname, const Plan& p) override;
  void ConfigureGateway(const Config& c, const nl::LinkInfo& br, const Plan& p) override;
  AttachedLinks WaitUp(const std::string& host_veth, const std::string& ifname) override;
  bool DeleteContainerLink(const std::string& ifname) override;
  Observed Observe(const Config& c, const std::string& ifname, const std::set<int>& tables,
                   const std::optional<nat::Spec>& masq) override;

  void NatApply(const nat::Spec& spec) override;
  bool NatRemove(const nat::Tag& tag) override;
  void NatGc(const std::string& network, const std::vector<cni::Attachment>& valid) override;

 private:
  nl::Socket& Host();
  // The container namespace, opened once; nullopt when CNI_NETNS is empty or gone.
  const std::optional<nl::NetNs>& ContainerNs();
  // REQUIRES: ContainerNs() is set.
  nl::Socket& Container();

  const cni::CmdArgs& args_;
  cni::IpamDelegate ipam_;
  std::optional<nl::Socket> host_, container_;
  std::optional<std::optional<nl::NetNs>> ns_;
};

}  // namespace netiface::bridge
