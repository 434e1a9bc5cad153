// The loopback plugin's kernel side: lo of CNI_NETNS through libnetlink. Nothing is decided here.
#include "netiface/loopback/kernel_ops.h"

#include <sys/socket.h>

#include "netiface/cni/error.h"
#include "netiface/loopback/loopback.h"
#include "netiface/netlink/addr.h"
#include "netiface/netlink/link.h"

namespace netiface::loopback {

nl::Socket* KernelOps::Container() {
  if (!opened_) {
    opened_ = true;
    if (!args_.netns.empty()) {
      if (auto ns = nl::NetNs::Open(args_.netns)) sock_ = nl::Socket::OpenIn(*ns);
    }
  }
  return sock_ ? &*sock_ : nullptr;
}

nl::Socket& KernelOps::RequireContainer() {
  nl::Socket* s = Container();
  if (!s) throw cni::Error(cni::kInvalidEnv, "CNI_NETNS: " + args_.netns + " does not exist");
  return *s;
}

Observed KernelOps::Observe() {
  nl::Socket& s = RequireContainer();
  auto lo = nl::FindLink(s, kLoopbackName);
  if (!lo) throw cni::Error(cni::kInvalidEnv, "CNI_NETNS: no link \"lo\" in " + args_.netns);
  Observed o{.up = lo->admin_up};
  for (const auto& a : nl::ListAddresses(s, lo->index, AF_UNSPEC)) {
    (a.local.family() == AF_INET ? o.v4 : o.v6).push_back(a.local);
  }
  return o;
}

void KernelOps::SetUp() { nl::SetLinkUp(RequireContainer(), kLoopbackName); }

bool KernelOps::SetDown() {
  nl::Socket* s = Container();
  if (!s) return false;
  nl::SetLinkDown(*s, kLoopbackName);
  return true;
}

}  // namespace netiface::loopback
