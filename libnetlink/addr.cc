#include "netiface/netlink/addr.h"

#include <linux/if_addr.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <sys/socket.h>

#include <chrono>
#include <thread>

#include "netiface/cni/error.h"
#include "nl_util.h"

namespace netiface::nl {
namespace {

using detail::AddrPtr;

AddrPtr MakeAddr(int ifindex, const cni::IpNet& net) {
  AddrPtr a(detail::NotNull(rtnl_addr_alloc(), "address"));
  rtnl_addr_set_ifindex(a.get(), ifindex);
  rtnl_addr_set_family(a.get(), net.family());
  detail::NlAddrPtr local = detail::ToNlAddr(net);
  Check(rtnl_addr_set_local(a.get(), local.get()), "invalid address " + net.ToString());
  rtnl_addr_set_prefixlen(a.get(), net.prefix_len());
  return a;
}

// For the scope of one dump: the kernel applies the request's filters (here ifa_index) itself, which
// it does only on a socket that asked for strict checking (Linux 4.20+). Without it a dump returns every
// address of the namespace, one or two per bridge port or host veth, which made a bridge ADD on a node
// of 150 pods spend 45% of its instructions parsing addresses it then dropped. Where the option is
// missing the dump is the old one; the caller filters in any case.
class StrictDump {
 public:
  explicit StrictDump(Socket& s) : fd_(nl_socket_get_fd(s.get())) { on_ = Set(1); }
  ~StrictDump() {
    if (on_) Set(0);
  }
  StrictDump(const StrictDump&) = delete;
  StrictDump& operator=(const StrictDump&) = delete;

 private:
  bool Set(int v) { return ::setsockopt(fd_, SOL_NETLINK, NETLINK_GET_STRICT_CHK, &v, sizeof v) == 0; }
  int fd_;
  bool on_ = false;
};

}  // namespace

void AddAddress(Socket& s, int ifindex, const cni::IpNet& addr, bool nodad) {
  AddrPtr a = MakeAddr(ifindex, addr);
  // As the reference plugins (vishvananda/netlink): IPv4 gets the broadcast address up to /30.
  if (addr.addr().is_v4() && addr.prefix_len() < 31) {
    detail::NlAddrPtr brd = detail::ToNlAddr(addr.LastAddr(), 32);
    rtnl_addr_set_broadcast(a.get(), brd.get());
  }
  if (nodad && !addr.addr().is_v4()) rtnl_addr_set_flags(a.get(), IFA_F_NODAD);
  int rc = rtnl_addr_add(s.get(), a.get(), NLM_F_EXCL);
  if (IsExists(rc)) return;  // the same address (and prefix) is already there
  Check(rc, "failed to add address " + addr.ToString() + " to link #" + std::to_string(ifindex));
}

bool DeleteAddress(Socket& s, int ifindex, const cni::IpNet& addr) {
  AddrPtr a = MakeAddr(ifindex, addr);
  int rc = rtnl_addr_delete(s.get(), a.get(), 0);
  if (IsNotFound(rc)) return false;
  Check(rc, "failed to delete address " + addr.ToString() + " from link #" + std::to_string(ifindex));
  return true;
}

std::vector<AddrInfo> ListAddresses(Socket& s, int ifindex, int family) {
  detail::MsgPtr msg(detail::NotNull(nlmsg_alloc_simple(RTM_GETADDR, NLM_F_DUMP), "message"));
  ifaddrmsg hdr{};
  hdr.ifa_family = static_cast<unsigned char>(family);
  hdr.ifa_index = static_cast<uint32_t>(ifindex);
  Check(nlmsg_append(msg.get(), &hdr, sizeof hdr, NLMSG_ALIGNTO), "failed to build address dump");
  std::vector<AddrInfo> out;
  StrictDump strict(s);
  int rc = detail::Transact(s, std::move(msg), [&](nl_msg* m) {
    if (nlmsg_hdr(m)->nlmsg_type != RTM_NEWADDR) return;
    detail::ParseReply(m, [&](nl_object* obj) {
      auto* a = reinterpret_cast<rtnl_addr*>(obj);
      int af = rtnl_addr_get_family(a);
      if (af != AF_INET && af != AF_INET6) return;
      if (family != AF_UNSPEC && af != family) return;
      if (ifindex != 0 && rtnl_addr_get_ifindex(a) != ifindex) return;
      AddrInfo info;
      info.ifindex = rtnl_addr_get_ifindex(a);
      info.local = cni::IpNet(detail::FromNlAddr(rtnl_addr_get_local(a), af), rtnl_addr_get_prefixlen(a));
      info.scope = rtnl_addr_get_scope(a);
      info.flags = static_cast<int>(rtnl_addr_get_flags(a));
      out.push_back(info);
    });
  });
  Check(rc, "failed to list addresses");
  return out;
}

void WaitForDad(Socket& s, int ifindex, int timeout_ms) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  for (;;) {
    bool tentative = false;
    for (const AddrInfo& a : ListAddresses(s, ifindex, AF_INET6)) {
      if (a.flags & IFA_F_DADFAILED) {
        throw cni::Error(cni::kNetlink, "duplicate address detection failed for " + a.local.ToString());
      }
      tentative = tentative || (a.flags & IFA_F_TENTATIVE);
    }
    if (!tentative) return;
    if (std::chrono::steady_clock::now() > deadline) {
      throw cni::Error(cni::kNetlink, "IPv6 addresses still tentative after " + std::to_string(timeout_ms) + " ms");
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

std::optional<cni::IpAddr> WaitForLinkLocal(Socket& s, int ifindex, int timeout_ms, std::chrono::microseconds poll) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  for (;;) {
    for (const AddrInfo& a : ListAddresses(s, ifindex, AF_INET6)) {
      if (a.local.addr().IsLinkLocal() && !(a.flags & (IFA_F_TENTATIVE | IFA_F_DADFAILED))) {
        return a.local.addr();
      }
    }
    if (std::chrono::steady_clock::now() >= deadline) return std::nullopt;
    std::this_thread::sleep_for(poll);
  }
}

}  // namespace netiface::nl
