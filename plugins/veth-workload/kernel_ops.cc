#include "netiface/veth_workload/kernel_ops.h"

#include <linux/if_addr.h>
#include <linux/rtnetlink.h>
#include <sys/socket.h>

#include <algorithm>
#include <chrono>
#include <memory>
#include <thread>

#include "netiface/cni/error.h"
#include "netiface/cni/exec.h"
#include "netiface/cni/log.h"
#include "netiface/nat/nat.h"
#include "netiface/netlink/addr.h"
#include "netiface/netlink/link.h"
#include "netiface/netlink/route.h"
#include "netiface/netlink/sysctl.h"

namespace netiface::veth_workload {
namespace {

// dataDir as the verb will have validated it; the default otherwise.
std::string DataDirOf(const cni::NetConf& conf) {
  auto it = conf.raw.find("dataDir");
  if (it != conf.raw.end() && it->is_string() && !it->get<std::string>().empty()) return it->get<std::string>();
  return std::string(kDefaultDataDir);
}

}  // namespace

KernelOps::KernelOps(const cni::CmdArgs& args)
    : args_(args), ipam_(args), store_(DataDirOf(args.conf), args.conf.name) {}

// --- IPAM ---

void KernelOps::StartIpamAdd() { ipam_.StartAdd(); }
cni::Result KernelOps::WaitIpamAdd() { return ipam_.WaitAdd(); }
void KernelOps::IpamDel() { ipam_.Del(); }
std::function<void()> KernelOps::StartIpamDel() {
  ipam_.StartDel();
  return [this] { ipam_.WaitDel(); };
}
void KernelOps::IpamCheck() { ipam_.Check(); }
void KernelOps::IpamStatus() { ipam_.Status(); }
void KernelOps::IpamGc() { ipam_.Gc(); }

// --- Sockets and namespaces ---

nl::Socket& KernelOps::Host() {
  if (!host_) host_ = nl::Socket::Open();
  return *host_;
}

const nl::NetNs* KernelOps::ContainerNs() {
  if (!ns_opened_) {
    ns_opened_ = true;
    if (!args_.netns.empty()) ns_ = nl::NetNs::Open(args_.netns);
  }
  return ns_ ? &*ns_ : nullptr;
}

nl::Socket& KernelOps::Container() {
  if (!container_) container_ = nl::Socket::OpenIn(*ContainerNs());
  return *container_;
}

nl::Sysctls& KernelOps::ContainerSysctls() {
  if (!container_sysctls_) container_sysctls_.emplace(ContainerNs(), &Container());
  return *container_sysctls_;
}

void KernelOps::WriteSysctls(nl::Sysctls& to, const std::vector<Sysctl>& sysctls) {
  // An optional key may be absent; a denied or refused write is an error either way.
  for (const auto& s : sysctls) {
    if (!s.optional) {
      to.Require(s.key, s.value);
    } else if (!to.Write(s.key, s.value)) {
      log::Debug("veth-workload: optional sysctl {} is absent", s.key);
    }
  }
}

// --- ADD ---

void KernelOps::Prepare(const std::string& ifname) {
  if (!ContainerNs()) throw cni::Error(cni::kInvalidEnv, "CNI_NETNS " + args_.netns + " does not exist");
  if (nl::FindLink(Container(), ifname)) {
    throw cni::Error(cni::kInvalidEnv, "CNI_IFNAME: interface " + ifname + " already exists in " + args_.netns);
  }
  store_.Prepare();
  Host();
}

bool KernelOps::DeleteHostVeth(const std::string& name) {
  auto link = nl::FindLink(Host(), name);
  if (!link) return false;
  if (link->kind != "veth") {
    throw cni::Error(cni::kInvalidConfig,
                     "host link " + name + " exists and is not a veth (kind \"" + link->kind + "\")");
  }
  return nl::DeleteLink(Host(), name);
}

std::string KernelOps::CreateVeth(const Plan& plan) {
  nl::CreateVeth(Host(), {.name = plan.host_veth,
                          .peer_name = plan.id.ifname,
                          .peer_ns = ContainerNs(),
                          .mtu = plan.mtu,
                          .num_queues = plan.num_queues,
                          .mac = std::string(kHostVethMac),
                          .peer_mac = plan.requested_mac});
  try {
    // The container end's IFLA_LINK is the host end's index: one lookup gives both.
    auto ctr = nl::FindLink(Container(), plan.id.ifname);
    if (!ctr || ctr->peer_index <= 0) {
      throw cni::Error(cni::kNetlink,
                       "veth end " + plan.id.ifname + " not found in " + args_.netns + " after creation");
    }
    container_index_ = ctr->index;
    host_index_ = ctr->peer_index;
    // Up now, while IPAM may still run: bringing a link up is, after creating the pair, the kernel's
    // slowest step here (IPv6 address generation and multicast joins run inside the request).
    WriteSysctls(ContainerSysctls(), plan.container_link_sysctls);
    WriteSysctls(host_sysctls_, plan.host_link_sysctls);
    nl::SetLinkUp(Container(), plan.id.ifname);
    nl::SetLinkUp(Host(), plan.host_veth);
    return ctr->mac;
  } catch (...) {
    nl::DeleteLink(Host(), plan.host_veth);
    throw;
  }
}

void KernelOps::ConfigureContainer(const Plan& plan) {
  nl::Socket& s = Container();
  WriteSysctls(ContainerSysctls(), plan.container_sysctls);
  for (const auto& a : plan.addresses) nl::AddAddress(s, container_index_, a, /*nodad=*/true);
  for (const auto& r : plan.container_routes) {
    // IPv4 routes via 169.254.1.1 are onlink: they stay on this interface even when the /32 to the
    // gateway is on another one (a second attachment of the pod; every host veth answers alike).
    nl::RouteSpec spec{.dst = r.dst,
                       .gw = r.gw,
                       .ifindex = container_index_,
                       .scope = r.gw ? -1 : RT_SCOPE_LINK,
                       .onlink = r.gw && r.gw->is_v4()};
    if (nl::AddRoute(s, spec) == nl::AddRouteOutcome::kAdded || !r.gw) continue;
    throw cni::Error(cni::kNetlink, "route " + r.dst.ToString() + " already exists in " + args_.netns +
                                        " (through another interface of the container?)");
  }
}

void KernelOps::ConfigureHost(const Plan& plan) {
  nl::Socket& s = Host();
  // What CreateVeth wrote already is not written again.
  std::vector<Sysctl> rest;
  for (const auto& sc : plan.host_sysctls) {
    auto& done = plan.host_link_sysctls;
    if (std::find_if(done.begin(), done.end(),
                     [&](const Sysctl& d) { return d.key == sc.key && d.value == sc.value; }) == done.end()) {
      rest.push_back(sc);
    }
  }
  WriteSysctls(host_sysctls_, rest);
  for (const auto& dst : plan.host_routes) {
    nl::RouteSpec spec{.dst = dst, .ifindex = host_index_, .scope = RT_SCOPE_LINK};
    if (nl::AddRoute(s, spec) == nl::AddRouteOutcome::kAdded) continue;
    // Already there: fine through our veth, a conflict through any other interface.
    for (const auto& r : nl::ListRoutes(s, dst.family())) {
      if (r.dst != dst || r.ifindex == host_index_) continue;
      auto other = nl::FindLinkByIndex(s, r.ifindex);
      throw cni::Error(cni::kNetlink, "route " + dst.ToString() + " already exists for an interface other than " +
                                          plan.host_veth + ": " +
                                          (other ? other->name : "#" + std::to_string(r.ifindex)));
    }
  }
  if (plan.has_v6) {
    // Polled every 100 us: without DAD the address comes within a fraction of a millisecond, and the
    // default 5 ms period would dominate an IPv6 ADD.
    auto ll = nl::WaitForLinkLocal(s, host_index_, kLinkLocalTimeoutMs, std::chrono::microseconds(100));
    if (!ll) {
      throw cni::Error(cni::kNetlink, "host veth " + plan.host_veth + " has no IPv6 link-local address after " +
                                          std::to_string(kLinkLocalTimeoutMs) + " ms");
    }
    if (ll->ToString() != kGatewayV6) {
      throw cni::Error(cni::kNetlink, "host veth " + plan.host_veth + " has link-local address " + ll->ToString() +
                                          ", expected " + std::string(kGatewayV6));
    }
  }
}

// --- DEL and CHECK ---

bool KernelOps::DeleteContainerLink(const std::string& ifname) {
  if (!ContainerNs()) return false;
  return nl::DeleteLink(Container(), ifname);
}

Observed KernelOps::Observe(const std::string& host_veth, const std::string& ifname,
                            const std::vector<std::string>& sysctl_keys) {
  Observed o;
  o.netns_exists = ContainerNs() != nullptr;
  if (o.netns_exists) {
    o.container_link = nl::FindLink(Container(), ifname);
    if (o.container_link) {
      for (const auto& a : nl::ListAddresses(Container(), o.container_link->index, AF_UNSPEC)) {
        o.container_addresses.push_back(a.local);
      }
      o.container_routes = nl::ListRoutes(Container(), AF_UNSPEC);
    }
  }
  o.host_link = nl::FindLink(Host(), host_veth);
  if (o.host_link) {
    for (auto& r : nl::ListRoutes(Host(), AF_UNSPEC)) {
      if (r.ifindex == o.host_link->index) o.host_routes.push_back(r);
    }
    for (const auto& k : sysctl_keys) o.host_sysctls.emplace_back(k, host_sysctls_.Read(k));
  }
  return o;
}

// --- NAT ---

void KernelOps::NatApply(const nat::Spec& spec) { nat::Apply(spec); }
bool KernelOps::NatRemove(const nat::Tag& tag) { return nat::Remove(tag); }
void KernelOps::NatVerify(const nat::Spec& spec) { nat::Verify(spec); }
void KernelOps::NatGc(const std::string& network, const std::vector<cni::Attachment>& valid) {
  nat::Gc(network, valid);
}

// --- Endpoint store ---

void KernelOps::DraftRecord(const std::string& folder, const std::string& name) {
  try {
    record_draft_ = store_.Draft(folder, name);
  } catch (const cni::Error& e) {
    log::Debug("veth-workload: endpoint record not drafted ahead: {}", e.what());
  }
}
void KernelOps::WriteRecord(const EndpointRecord& r) { store_.Write(r, std::move(record_draft_)); }
std::optional<EndpointRecord> KernelOps::ReadRecord(const std::string& folder, const std::string& name) {
  return store_.Read(folder, name);
}
std::optional<EndpointRecord> KernelOps::FindRecord(const std::string& container_id, const std::string& ifname) {
  return store_.FindByAttachment(container_id, ifname);
}
bool KernelOps::RemoveRecord(const std::string& folder, const std::string& name, const std::string& container_id,
                             const std::string& ifname) {
  return store_.RemoveIfOwned(folder, name, container_id, ifname);
}
std::vector<EndpointRecord> KernelOps::RemoveStaleRecords(const std::vector<cni::Attachment>& valid,
                                                          std::vector<std::string>& errors) {
  return store_.RemoveStale(valid, errors);
}

}  // namespace netiface::veth_workload
