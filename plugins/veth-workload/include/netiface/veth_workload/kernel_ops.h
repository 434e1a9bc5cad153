// The real Ops: IPAM by delegation (cni::DelegateAdd / cni::Delegate with the request's config and
// environment), libnetlink with one socket per namespace (opened on first use), nat.h, and the
// endpoint store under the config's dataDir. The host namespace is the one this process runs in.
#pragma once

#include <optional>
#include <string>

#include "netiface/cni/ipam_delegate.h"
#include "netiface/cni/skel.h"
#include "netiface/netlink/netns.h"
#include "netiface/netlink/socket.h"
#include "netiface/netlink/sysctl.h"
#include "netiface/veth_workload/config.h"
#include "netiface/veth_workload/endpoint_store.h"
#include "netiface/veth_workload/ops.h"

namespace netiface::veth_workload {

// Bound on the wait for the host veth's IPv6 link-local address (no DAD: it appears at once).
inline constexpr int kLinkLocalTimeoutMs = 2000;

class KernelOps : public Ops {
 public:
  // Reads only the config keys it needs (ipam type, dataDir); `args` must outlive the object.
  explicit KernelOps(const cni::CmdArgs& args);

  void StartIpamAdd() override;
  cni::Result WaitIpamAdd() override;
  bool IpamAddFinished() override { return ipam_.AddFinished(); }
  void IpamDel() override;
  std::function<void()> StartIpamDel() override;
  void IpamCheck() override;
  void IpamStatus() override;
  void IpamGc() override;

  void Prepare(const std::string& ifname) override;
  bool DeleteHostVeth(const std::string& name) override;
  std::string CreateVeth(const Plan& plan) override;
  void ConfigureContainer(const Plan& plan) override;
  void ConfigureHost(const Plan& plan) override;
  bool DeleteContainerLink(const std::string& ifname) override;
  Observed Observe(const std::string& host_veth, const std::string& ifname,
                   const std::vector<std::string>& sysctl_keys) override;

  void NatApply(const nat::Spec& spec) override;
  bool NatRemove(const nat::Tag& tag) override;
  void NatVerify(const nat::Spec& spec) override;
  void NatGc(const std::string& network, const std::vector<cni::Attachment>& valid) override;

  void DraftRecord(const std::string& folder, const std::string& name) override;
  void WriteRecord(const EndpointRecord& r) override;
  std::optional<EndpointRecord> ReadRecord(const std::string& folder, const std::string& name) override;
  std::optional<EndpointRecord> FindRecord(const std::string& container_id, const std::string& ifname) override;
  bool RemoveRecord(const std::string& folder, const std::string& name, const std::string& container_id,
                    const std::string& ifname) override;
  std::vector<EndpointRecord> RemoveStaleRecords(const std::vector<cni::Attachment>& valid,
                                                 std::vector<std::string>& errors) override;

 private:
  nl::Socket& Host();
  // The container namespace of CNI_NETNS, nullptr when it does not exist (or CNI_NETNS is empty).
  const nl::NetNs* ContainerNs();
  // A socket in the container namespace. REQUIRES: ContainerNs() != nullptr.
  nl::Socket& Container();
  // The container namespace's sysctls. REQUIRES: ContainerNs() != nullptr.
  nl::Sysctls& ContainerSysctls();
  void WriteSysctls(nl::Sysctls& to, const std::vector<Sysctl>& sysctls);

  const cni::CmdArgs& args_;
  cni::IpamDelegate ipam_;
  EndpointStore store_;
  std::unique_ptr<cni::AtomicFile> record_draft_;
  std::optional<nl::Socket> host_;
  bool ns_opened_ = false;
  std::optional<nl::NetNs> ns_;
  std::optional<nl::Socket> container_;
  nl::Sysctls host_sysctls_{nullptr};
  std::optional<nl::Sysctls> container_sysctls_;
  int host_index_ = 0;       // of the host veth, once created
  int container_index_ = 0;  // of the container end, once created
};

}  // namespace netiface::veth_workload
