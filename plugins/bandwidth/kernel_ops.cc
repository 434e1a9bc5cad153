// KernelOps over libnetlink: the container namespace only to find the veth peer, the rest in the host's.
#include "netiface/bandwidth/kernel_ops.h"

#include <fstream>
#include <sstream>

#include "netiface/bandwidth/plan.h"
#include "netiface/cni/error.h"
#include "netiface/netlink/link.h"

namespace netiface::bandwidth {

nl::Socket& KernelOps::Host() {
  if (!host_) host_ = nl::Socket::Open();
  return *host_;
}

std::optional<nl::LinkInfo> KernelOps::HostPeer(const std::string& ifname) {
  if (args_.netns.empty()) return std::nullopt;
  std::optional<nl::NetNs> ns = nl::NetNs::Open(args_.netns);
  if (!ns) return std::nullopt;
  nl::Socket container = nl::Socket::OpenIn(*ns);
  std::optional<nl::LinkInfo> link = nl::FindLink(container, ifname);
  if (!link || link->kind != "veth" || link->peer_index <= 0) return std::nullopt;
  return nl::FindLinkByIndex(Host(), link->peer_index);
}

double KernelOps::TicksPerUsec() {
  std::ifstream f("/proc/net/psched");
  std::stringstream text;
  text << f.rdbuf();
  return bandwidth::TicksPerUsec(text.str());
}

void KernelOps::AddRootTbf(int ifindex, const nl::TbfParams& p) { nl::AddRootTbf(Host(), ifindex, p); }
bool KernelOps::DeleteRootQdisc(int ifindex) { return nl::DeleteRootQdisc(Host(), ifindex); }
void KernelOps::AddIngressQdisc(int ifindex) { nl::AddIngressQdisc(Host(), ifindex); }
bool KernelOps::DeleteIngressQdisc(int ifindex) { return nl::DeleteIngressQdisc(Host(), ifindex); }
void KernelOps::AddRedirect(int ifindex, int target_ifindex) { nl::AddRedirectFilter(Host(), ifindex, target_ifindex); }

nl::LinkInfo KernelOps::CreateIfb(const std::string& name, int mtu) {
  nl::CreateIfb(Host(), name, mtu);
  std::optional<nl::LinkInfo> l = nl::FindLink(Host(), name);
  if (!l) throw cni::Error(cni::kNetlink, "ifb " + name + " vanished after its creation");
  return *l;
}

bool KernelOps::DeleteLink(const std::string& name) { return nl::DeleteLink(Host(), name); }

Observed KernelOps::Observe(int host_ifindex, const std::string& ifb) {
  Observed o;
  o.host_qdiscs = nl::ListQdiscs(Host(), host_ifindex);
  o.host_filters = nl::ListIngressFilters(Host(), host_ifindex);
  o.ifb = nl::FindLink(Host(), ifb);
  if (o.ifb) o.ifb_qdiscs = nl::ListQdiscs(Host(), o.ifb->index);
  return o;
}

}  // namespace netiface::bandwidth
