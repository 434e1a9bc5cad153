// Everything the bridge plugin's verbs change or read outside their own memory, behind one interface:
// the IPAM delegate, the kernel (host and container namespaces) and nftables. KernelOps (kernel_ops.h) is
// the real one; the unit tests use an in-memory double that can fail any call.
#pragma once

#include <optional>
#include <set>
#include <string>
#include <vector>

#include "netiface/bridge/config.h"
#include "netiface/bridge/plan.h"
#include "netiface/cni/config.h"
#include "netiface/cni/result.h"
#include "netiface/nat/nat.h"
#include "netiface/netlink/link.h"
#include "netiface/netlink/route.h"

namespace netiface::bridge {

// What CHECK compares with prevResult: one read of the kernel and of the rules.
struct Observed {
  std::optional<nl::LinkInfo> bridge;           // the link named Config::bridge, of any kind
  std::optional<nl::LinkInfo> container_link;   // CNI_IFNAME in the container namespace
  std::optional<nl::LinkInfo> host_peer;        // container_link's peer in the host namespace
  std::vector<cni::IpNet> container_addresses;  // on container_link, both families
  std::vector<nl::RouteInfo> container_routes;  // the container's routes in the tables asked for
  std::optional<std::string> nat_problem;       // ipMasq: why the rules differ; nullopt: as expected
};

// The two ends of an attachment once the host end is up, as the result reports them.
struct AttachedLinks {
  nl::LinkInfo host;
  nl::LinkInfo container;
};

class Ops {
 public:
  virtual ~Ops() = default;

  // --- IPAM: the plugin of ipam.type with this request's config and environment. ---
  // Starts IPAM ADD in its own process; WaitIpamAdd() returns its result or throws its error.
  virtual void StartIpamAdd() = 0;
  virtual cni::Result WaitIpamAdd() = 0;
  // Waits for a started IPAM ADD first (its failure is not this call's), then runs IPAM DEL: a release
  // racing its allocation could free the address before it is taken and leak it.
  virtual void IpamDel() = 0;
  // Starts IPAM DEL, so that it overlaps the kernel's unregistering of the deleted veth; WaitIpamDel()
  // throws its error.
  virtual void StartIpamDel() = 0;
  virtual void WaitIpamDel() = 0;
  virtual void IpamCheck() = 0;
  virtual void IpamStatus() = 0;
  virtual void IpamGc() = 0;

  // --- Kernel. ---
  // ADD, before any change: the container namespace exists and has no link named `ifname`.
  // Throws cni::Error(kInvalidEnv) naming the variable.
  virtual void Prepare(const std::string& ifname) = 0;
  // The bridge, created when missing (its MAC then pinned, accept_ra and accept_dad off) or reused, promiscuous when
  // asked, up. Throws cni::Error(kInvalidConfig) when the name is taken by another kind of link. The
  // bridge is shared: nothing undoes this step.
  virtual nl::LinkInfo EnsureBridge(const Config& c) = 0;
  // The pair under a free random host name, the container end `ifname` (with `mac` unless empty) made
  // directly in the container namespace, the host end a port of `br` (hairpin as configured); the DAD
  // sysctls of the container end; both ends up. Returns the host end's name. Leaves nothing when it
  // throws; deleting the host end removes both.
  virtual std::string CreateVeth(const Config& c, const nl::LinkInfo& br, const std::string& ifname,
                                 const std::string& mac) = 0;
  // Returns false when there was no such link.
  virtual bool DeleteHostVeth(const std::string& name) = 0;
  // The container end's address sysctls, addresses (with enabledad: waits until they leave the
  // tentative state) and routes.
  virtual void ConfigureContainer(const Config& c, const std::string& ifname, const Plan& p) = 0;
  // isGateway: the gateway addresses on the bridge (PlanBridgeAddrs) and forwarding on. The addresses
  // are shared by every attachment of the bridge: nothing undoes this step.
  virtual void ConfigureGateway(const Config& c, const nl::LinkInfo& br, const Plan& p) = 0;
  // Waits until the host end is operationally up (cni::Error(kNetlink) after the reference's 2.5 s)
  // and returns both ends as the kernel reports them then.
  virtual AttachedLinks WaitUp(const std::string& host_veth, const std::string& ifname) = 0;
  // DEL: deletes `ifname` in the container namespace, and with it the pair. False when the namespace
  // or the link is gone already.
  virtual bool DeleteContainerLink(const std::string& ifname) = 0;
  // CHECK: the state of the attachment; container routes of `tables` (0 = main). Throws
  // cni::Error(kInvalidEnv) when the container namespace does not exist. With c.ip_masq and addresses,
  // masquerade for `masq` is verified too.
  virtual Observed Observe(const Config& c, const std::string& ifname, const std::set<int>& tables,
                           const std::optional<nat::Spec>& masq) = 0;

  // --- NAT (nat.h), in the host namespace. ---
  // One nftables transaction: all or nothing, so it leaves nothing when it throws.
  virtual void NatApply(const nat::Spec& spec) = 0;
  virtual bool NatRemove(const nat::Tag& tag) = 0;
  virtual void NatGc(const std::string& network, const std::vector<cni::Attachment>& valid) = 0;
};

}  // namespace netiface::bridge
