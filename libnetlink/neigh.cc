#include "netiface/netlink/neigh.h"

#include <linux/neighbour.h>
#include <linux/rtnetlink.h>
#include <sys/socket.h>

#include <algorithm>
#include <cctype>
#include <functional>
#include <memory>

#include <netlink/route/neighbour.h>

#include "netiface/cni/error.h"
#include "nl_util.h"

namespace netiface::nl {
namespace {

struct NeighDeleter {
  void operator()(rtnl_neigh* p) const noexcept { rtnl_neigh_put(p); }
};
using NeighPtr = std::unique_ptr<rtnl_neigh, NeighDeleter>;

NeighPtr NewNeigh(int ifindex, const std::string& what) {
  if (ifindex <= 0) throw cni::Error(cni::kInvalidConfig, what + ": invalid link index " + std::to_string(ifindex));
  NeighPtr n(detail::NotNull(rtnl_neigh_alloc(), "neighbour"));
  rtnl_neigh_set_ifindex(n.get(), ifindex);
  return n;
}

// The address of an NDA_DST by its length: libnl tags those of AF_BRIDGE entries with AF_BRIDGE.
std::optional<cni::IpAddr> DstOf(rtnl_neigh* n) {
  nl_addr* a = rtnl_neigh_get_dst(n);
  if (a == nullptr) return std::nullopt;
  unsigned int len = nl_addr_get_len(a);
  if (len != 4 && len != 16) return std::nullopt;
  return cni::IpAddr::FromBytes(len == 4 ? AF_INET : AF_INET6, nl_addr_get_binary_addr(a));
}

// One RTM_GETNEIGH dump of `family`; calls `fn` with every entry of `ifindex`.
void DumpNeigh(Socket& s, int family, int ifindex, const std::string& what,
               const std::function<void(rtnl_neigh*)>& fn) {
  detail::MsgPtr msg(detail::NotNull(nlmsg_alloc_simple(RTM_GETNEIGH, NLM_F_DUMP), "message"));
  ndmsg ndm{};
  ndm.ndm_family = static_cast<uint8_t>(family);
  Check(nlmsg_append(msg.get(), &ndm, sizeof ndm, NLMSG_ALIGNTO), what);
  int rc = detail::Transact(s, std::move(msg), [&](nl_msg* m) {
    if (nlmsg_hdr(m)->nlmsg_type != RTM_NEWNEIGH) return;
    detail::ParseReply(m, [&](nl_object* obj) {
      auto* n = reinterpret_cast<rtnl_neigh*>(obj);
      if (rtnl_neigh_get_ifindex(n) == ifindex) fn(n);
    });
  });
  Check(rc, what);
}

std::string Describe(const cni::IpAddr& dst, const std::string& mac, int ifindex) {
  return dst.ToString() + " (" + mac + ") on link #" + std::to_string(ifindex);
}

}  // namespace

void ReplaceNeighbor(Socket& s, const NeighSpec& spec) {
  std::string what = "failed to set neighbour " + Describe(spec.dst, spec.mac, spec.ifindex);
  NeighPtr n = NewNeigh(spec.ifindex, what);
  detail::NlAddrPtr mac = detail::ParseMac(spec.mac);
  rtnl_neigh_set_family(n.get(), spec.dst.family());
  Check(rtnl_neigh_set_dst(n.get(), detail::ToNlAddr(spec.dst, spec.dst.bits()).get()), what);
  rtnl_neigh_set_lladdr(n.get(), mac.get());
  rtnl_neigh_set_state(n.get(), NUD_PERMANENT);
  Check(rtnl_neigh_add(s.get(), n.get(), NLM_F_CREATE | NLM_F_REPLACE), what);
}

bool DeleteNeighbor(Socket& s, const NeighSpec& spec) {
  std::string what = "failed to delete neighbour " + spec.dst.ToString() + " on link #" + std::to_string(spec.ifindex);
  NeighPtr n = NewNeigh(spec.ifindex, what);
  rtnl_neigh_set_family(n.get(), spec.dst.family());
  Check(rtnl_neigh_set_dst(n.get(), detail::ToNlAddr(spec.dst, spec.dst.bits()).get()), what);
  int rc = rtnl_neigh_delete(s.get(), n.get(), 0);
  if (IsNotFound(rc)) return false;
  Check(rc, what);
  return true;
}

std::vector<NeighSpec> ListPermanentNeighbors(Socket& s, int ifindex) {
  std::vector<NeighSpec> out;
  DumpNeigh(s, AF_UNSPEC, ifindex, "failed to list neighbours of link #" + std::to_string(ifindex), [&](rtnl_neigh* n) {
    int family = rtnl_neigh_get_family(n);
    if (family != AF_INET && family != AF_INET6) return;
    if (!(rtnl_neigh_get_state(n) & NUD_PERMANENT)) return;
    auto dst = DstOf(n);
    if (!dst) return;
    out.push_back({ifindex, *dst, detail::FormatMac(rtnl_neigh_get_lladdr(n))});
  });
  return out;
}

void ReplaceFdb(Socket& s, const FdbSpec& spec) {
  std::string what = "failed to set FDB entry " + Describe(spec.dst, spec.mac, spec.ifindex);
  NeighPtr n = NewNeigh(spec.ifindex, what);
  detail::NlAddrPtr mac = detail::ParseMac(spec.mac);
  // libnl refuses an IP destination once the family is AF_BRIDGE: the destination goes first.
  Check(rtnl_neigh_set_dst(n.get(), detail::ToNlAddr(spec.dst, spec.dst.bits()).get()), what);
  rtnl_neigh_set_family(n.get(), AF_BRIDGE);
  rtnl_neigh_set_lladdr(n.get(), mac.get());
  rtnl_neigh_set_flags(n.get(), NTF_SELF);
  rtnl_neigh_set_state(n.get(), NUD_PERMANENT);
  Check(rtnl_neigh_add(s.get(), n.get(), NLM_F_CREATE | NLM_F_REPLACE), what);
}

bool DeleteFdb(Socket& s, const FdbSpec& spec) {
  std::string what = "failed to delete FDB entry " + Describe(spec.dst, spec.mac, spec.ifindex);
  NeighPtr n = NewNeigh(spec.ifindex, what);
  detail::NlAddrPtr mac = detail::ParseMac(spec.mac);
  // A vxlan acknowledges the deletion of a MAC it knows with another destination and keeps the
  // entry: only the dump tells whether (mac, dst) was there.
  std::string want_mac = detail::FormatMac(mac.get());
  auto present = ListFdb(s, spec.ifindex);
  if (std::none_of(present.begin(), present.end(),
                   [&](const FdbSpec& f) { return f.mac == want_mac && f.dst == spec.dst; })) {
    return false;
  }
  Check(rtnl_neigh_set_dst(n.get(), detail::ToNlAddr(spec.dst, spec.dst.bits()).get()), what);
  rtnl_neigh_set_family(n.get(), AF_BRIDGE);
  rtnl_neigh_set_lladdr(n.get(), mac.get());
  rtnl_neigh_set_flags(n.get(), NTF_SELF);
  int rc = rtnl_neigh_delete(s.get(), n.get(), 0);
  if (IsNotFound(rc)) return false;
  Check(rc, what);
  return true;
}

std::vector<FdbSpec> ListFdb(Socket& s, int ifindex) {
  std::vector<FdbSpec> out;
  DumpNeigh(s, AF_BRIDGE, ifindex, "failed to list FDB entries of link #" + std::to_string(ifindex),
            [&](rtnl_neigh* n) {
              auto dst = DstOf(n);
              std::string mac = detail::FormatMac(rtnl_neigh_get_lladdr(n));
              if (dst && !mac.empty()) out.push_back({ifindex, mac, *dst});
            });
  return out;
}

}  // namespace netiface::nl
