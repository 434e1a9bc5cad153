#include "netiface/netlink/vxlan.h"

#include <linux/if.h>

#include <algorithm>
#include <cctype>

#include <netlink/route/link/vxlan.h>

#include "netiface/cni/error.h"
#include "netiface/cni/ifname.h"
#include "nl_util.h"

namespace netiface::nl {
namespace {

using detail::LinkPtr;
using detail::NlAddrPtr;

constexpr uint32_t kMaxVni = (1u << 24) - 1;

void Validate(const VxlanSpec& spec) {
  auto bad = [&](const std::string& why) {
    throw cni::Error(cni::kInvalidConfig, "invalid vxlan device \"" + spec.name + "\": " + why);
  };
  if (!cni::IsValidIfname(spec.name)) bad("invalid name");
  if (spec.vni > kMaxVni) bad("VNI " + std::to_string(spec.vni) + " is not below 2^24");
  if (spec.port < 0 || spec.port > 65535) bad("port " + std::to_string(spec.port) + " out of range");
  if (spec.mtu < 0) bad("negative MTU");
  if (spec.lower_ifindex < 0) bad("negative lower device index");
}

std::string Lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s;
}

VxlanInfo ToVxlanInfo(rtnl_link* l) {
  VxlanInfo info;
  info.index = rtnl_link_get_ifindex(l);
  if (const char* n = rtnl_link_get_name(l)) info.name = n;
  info.mtu = static_cast<int>(rtnl_link_get_mtu(l));
  info.mac = detail::FormatMac(rtnl_link_get_addr(l));
  info.admin_up = rtnl_link_get_flags(l) & IFF_UP;
  uint32_t u = 0;
  if (rtnl_link_vxlan_get_id(l, &u) >= 0) info.vni = u;
  if (rtnl_link_vxlan_get_link(l, &u) >= 0) info.lower_ifindex = static_cast<int>(u);
  if (rtnl_link_vxlan_get_port(l, &u) >= 0) info.port = static_cast<int>(u);
  if (rtnl_link_vxlan_get_flags(l, &u) >= 0) info.gbp = u & RTNL_LINK_VXLAN_F_GBP;
  info.learning = rtnl_link_vxlan_get_learning(l) > 0;
  nl_addr* raw = nullptr;
  if (rtnl_link_vxlan_get_local(l, &raw) >= 0 && raw != nullptr) {
    NlAddrPtr local(raw);  // a copy the caller owns
    info.local = detail::FromNlAddr(local.get(), nl_addr_get_family(local.get()));
  }
  return info;
}

}  // namespace

void CreateVxlan(Socket& s, const VxlanSpec& spec) {
  Validate(spec);
  std::string what = "failed to create vxlan device " + spec.name;
  LinkPtr l(detail::NotNull(rtnl_link_vxlan_alloc(), "vxlan link"));
  rtnl_link_set_name(l.get(), spec.name.c_str());
  Check(rtnl_link_vxlan_set_id(l.get(), spec.vni), what);
  Check(rtnl_link_vxlan_set_learning(l.get(), spec.learning ? 1 : 0), what);
  if (spec.port > 0) Check(rtnl_link_vxlan_set_port(l.get(), static_cast<uint32_t>(spec.port)), what);
  if (spec.lower_ifindex > 0) Check(rtnl_link_vxlan_set_link(l.get(), static_cast<uint32_t>(spec.lower_ifindex)), what);
  if (spec.gbp) Check(rtnl_link_vxlan_set_flags(l.get(), RTNL_LINK_VXLAN_F_GBP, 1), what);
  if (spec.local)
    Check(rtnl_link_vxlan_set_local(l.get(), detail::ToNlAddr(*spec.local, spec.local->bits()).get()), what);
  if (spec.mtu > 0) rtnl_link_set_mtu(l.get(), static_cast<unsigned int>(spec.mtu));
  if (!spec.mac.empty()) rtnl_link_set_addr(l.get(), detail::ParseMac(spec.mac).get());
  nl_msg* raw = nullptr;
  Check(rtnl_link_build_add_request(l.get(), NLM_F_CREATE | NLM_F_EXCL, &raw), what);
  Check(detail::Transact(s, detail::MsgPtr(raw), [](nl_msg*) {}), what);
}

std::optional<VxlanInfo> FindVxlan(Socket& s, const std::string& name) {
  if (name.empty() || name.size() >= IFNAMSIZ) return std::nullopt;
  std::string what = "failed to look up vxlan device " + name;
  nl_msg* raw = nullptr;
  Check(rtnl_link_build_get_request(0, name.c_str(), &raw), what);
  std::optional<VxlanInfo> out;
  std::string other_kind;
  int rc = detail::Transact(s, detail::MsgPtr(raw), [&](nl_msg* m) {
    if (nlmsg_hdr(m)->nlmsg_type != RTM_NEWLINK) return;
    detail::ParseReply(m, [&](nl_object* obj) {
      auto* l = reinterpret_cast<rtnl_link*>(obj);
      if (rtnl_link_is_vxlan(l)) {
        out = ToVxlanInfo(l);
      } else {
        const char* kind = rtnl_link_get_type(l);
        other_kind = kind != nullptr ? kind : "device";
      }
    });
  });
  if (IsNotFound(rc)) return std::nullopt;
  Check(rc, what);
  if (!out && !other_kind.empty()) {
    throw cni::Error(cni::kInvalidConfig, "link " + name + " exists but is not a vxlan device (" + other_kind + ")");
  }
  return out;
}

std::vector<std::string> VxlanDifferences(const VxlanSpec& want, const VxlanInfo& have) {
  std::vector<std::string> out;
  int want_port = want.port == 0 ? kVxlanDefaultPort : want.port;
  if (want.name != have.name) out.push_back("name");
  if (want.vni != have.vni) out.push_back("vni");
  if (want.local != have.local) out.push_back("local");
  if (want.lower_ifindex != have.lower_ifindex) out.push_back("lower_ifindex");
  if (want_port != have.port) out.push_back("port");
  if (want.learning != have.learning) out.push_back("learning");
  if (want.gbp != have.gbp) out.push_back("gbp");
  if (want.mtu > 0 && want.mtu != have.mtu) out.push_back("mtu");
  if (!want.mac.empty() && Lower(want.mac) != Lower(have.mac)) out.push_back("mac");
  return out;
}

}  // namespace netiface::nl
