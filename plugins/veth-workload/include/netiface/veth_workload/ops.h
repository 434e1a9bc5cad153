// The side effects of veth-workload's verbs behind one interface: IPAM delegation, the kernel
// (host and container namespaces), nftables and the endpoint store. KernelOps (kernel_ops.h) is the
// real one; tests use doubles that record calls or fail at a chosen step.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "netiface/cni/config.h"
#include "netiface/cni/result.h"
#include "netiface/nat/nat.h"
#include "netiface/netlink/link.h"
#include "netiface/netlink/route.h"
#include "netiface/veth_workload/endpoint_store.h"
#include "netiface/veth_workload/plan.h"

namespace netiface::veth_workload {

// The kernel state CHECK compares with what ADD built.
struct Observed {
  bool netns_exists = false;
  std::optional<nl::LinkInfo> container_link;
  std::vector<cni::IpNet> container_addresses;  // on container_link
  std::vector<nl::RouteInfo> container_routes;  // main table of the container, both families
  std::optional<nl::LinkInfo> host_link;
  std::vector<nl::RouteInfo> host_routes;  // main-table host routes through host_link
  std::vector<std::pair<std::string, std::optional<std::string>>> host_sysctls;  // key, value (nullopt: missing)
};

class Ops {
 public:
  virtual ~Ops() = default;

  // --- IPAM: the plugin of ipam.type, with this request's config and environment. ---
  // Starts IPAM ADD in its own process, so that ADD can create the veth pair while IPAM allocates;
  // WaitIpamAdd() returns its result or throws its error. The Ops owns the running child: an undo
  // needs nothing but the Ops to finish it.
  virtual void StartIpamAdd() = 0;
  virtual cni::Result WaitIpamAdd() = 0;
  // The started IPAM ADD has finished (it ran in this process): WaitIpamAdd() returns at once.
  virtual bool IpamAddFinished() { return false; }
  // Waits for a started IPAM ADD first (its failure is not this call's), then runs IPAM DEL: a release
  // racing its allocation could free the address before it is taken and leak it.
  virtual void IpamDel() = 0;
  // Starts IPAM DEL and returns what waits for it (and throws its error), so that DEL can overlap the
  // release with the kernel's wait for the veth delete. The default runs IpamDel() at once.
  virtual std::function<void()> StartIpamDel() {
    IpamDel();
    return [] {};
  }
  virtual void IpamCheck() = 0;
  virtual void IpamStatus() = 0;
  virtual void IpamGc() = 0;

  // --- Kernel. ---
  // ADD, before any change: the container namespace exists and has no link named `ifname`, the
  // endpoint store can be created. Throws cni::Error (kInvalidEnv, kInvalidConfig, kIoFailure).
  virtual void Prepare(const std::string& ifname) = 0;
  // Deletes the host-side link `name`; false when there was none.
  virtual bool DeleteHostVeth(const std::string& name) = 0;
  // Creates the pair (host end plan.host_veth with kHostVethMac, container end plan.id.ifname with
  // plan.requested_mac) with each end directly in its namespace, writes the link sysctls and brings
  // both ends up; returns the container end's MAC. Needs only MakeLinkPlan's part of the plan. Leaves
  // nothing behind when it throws.
  virtual std::string CreateVeth(const Plan& plan) = 0;
  // Container sysctls, addresses, routes.
  virtual void ConfigureContainer(const Plan& plan) = 0;
  // Host sysctls, host routes, and with IPv6 the bounded wait for the link-local gateway.
  virtual void ConfigureHost(const Plan& plan) = 0;
  // DEL: deletes `ifname` in the container namespace (and with it the pair); false when the
  // namespace or the link is already gone.
  virtual bool DeleteContainerLink(const std::string& ifname) = 0;
  // CHECK: the state of the attachment, `sysctl_keys` read in the host namespace.
  virtual Observed Observe(const std::string& host_veth, const std::string& ifname,
                           const std::vector<std::string>& sysctl_keys) = 0;

  // --- NAT (nat.h), in the host namespace. ---
  // One nftables transaction: all or nothing, so it leaves nothing when it throws.
  virtual void NatApply(const nat::Spec& spec) = 0;
  virtual bool NatRemove(const nat::Tag& tag) = 0;
  virtual void NatVerify(const nat::Spec& spec) = 0;
  virtual void NatGc(const std::string& network, const std::vector<cni::Attachment>& valid) = 0;

  // --- Endpoint store (endpoint_store.h). ---
  // Creates the record's file ahead of its content, while IPAM runs; WriteRecord uses it. Never throws:
  // without it WriteRecord creates the file itself. The default does nothing.
  virtual void DraftRecord(const std::string& /*folder*/, const std::string& /*name*/) {}
  virtual void WriteRecord(const EndpointRecord& r) = 0;
  virtual std::optional<EndpointRecord> ReadRecord(const std::string& folder, const std::string& name) = 0;
  virtual std::optional<EndpointRecord> FindRecord(const std::string& container_id, const std::string& ifname) = 0;
  // Removes the attachment (container_id, ifname)'s link, and the record <folder>/<name> when it is that
  // container's (a newer sandbox of the same pod may have replaced it); drafts of <folder>/<name> left by
  // a killed ADD go too. DEL calls it also when there is no record.
  virtual bool RemoveRecord(const std::string& folder, const std::string& name, const std::string& container_id,
                            const std::string& ifname) = 0;
  virtual std::vector<EndpointRecord> RemoveStaleRecords(const std::vector<cni::Attachment>& valid,
                                                         std::vector<std::string>& errors) = 0;
};

}  // namespace netiface::veth_workload
