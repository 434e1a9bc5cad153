#include "netiface/netlink/link.h"

#include <linux/if.h>
#include <linux/if_link.h>
#include <linux/rtnetlink.h>

#include <chrono>
#include <cstring>
#include <thread>

#include <netlink/attr.h>
#include <netlink/route/link/bridge.h>

#include "netiface/cni/error.h"
#include "nl_util.h"

namespace netiface::nl {
namespace {

using detail::LinkPtr;
using detail::NewLink;

constexpr auto kPollInterval = std::chrono::milliseconds(5);

// IFLA_LINKINFO / IFLA_INFO_SLAVE_DATA / IFLA_BRPORT_MODE of a bridge port; libnl does not parse
// bridge slave data, and a single RTM_GETLINK carries no IFLA_PROTINFO.
bool ReadHairpin(nl_msg* m) {
  nlattr* tb[IFLA_MAX + 1] = {};
  if (nlmsg_parse(nlmsg_hdr(m), sizeof(ifinfomsg), tb, IFLA_MAX, nullptr) < 0) return false;
  if (tb[IFLA_LINKINFO] == nullptr) return false;
  nlattr* li[IFLA_INFO_MAX + 1] = {};
  if (nla_parse_nested(li, IFLA_INFO_MAX, tb[IFLA_LINKINFO], nullptr) < 0) return false;
  if (li[IFLA_INFO_SLAVE_KIND] == nullptr || li[IFLA_INFO_SLAVE_DATA] == nullptr) return false;
  if (std::strcmp(nla_get_string(li[IFLA_INFO_SLAVE_KIND]), "bridge") != 0) return false;
  nlattr* bp[IFLA_BRPORT_MAX + 1] = {};
  if (nla_parse_nested(bp, IFLA_BRPORT_MAX, li[IFLA_INFO_SLAVE_DATA], nullptr) < 0) return false;
  return bp[IFLA_BRPORT_MODE] != nullptr && nla_get_u8(bp[IFLA_BRPORT_MODE]) != 0;
}

LinkInfo ToLinkInfo(rtnl_link* l) {
  LinkInfo info;
  info.index = rtnl_link_get_ifindex(l);
  if (const char* n = rtnl_link_get_name(l)) info.name = n;
  if (const char* t = rtnl_link_get_type(l)) info.kind = t;
  info.mac = detail::FormatMac(rtnl_link_get_addr(l));
  info.mtu = static_cast<int>(rtnl_link_get_mtu(l));
  unsigned int flags = rtnl_link_get_flags(l);
  uint8_t oper = rtnl_link_get_operstate(l);
  info.admin_up = flags & IFF_UP;
  info.oper_up = oper == IF_OPER_UP || (oper == IF_OPER_UNKNOWN && (flags & IFF_RUNNING));
  info.master_index = rtnl_link_get_master(l);
  info.peer_index = rtnl_link_get_link(l);
  info.promisc = flags & IFF_PROMISC;
  info.allmulti = flags & IFF_ALLMULTI;
  info.txqlen = rtnl_link_get_txqlen(l);
  return info;
}

// One RTM_GETLINK by index (when > 0) or by name.
std::optional<LinkInfo> GetLink(Socket& s, int index, const std::string& name) {
  if (index <= 0 && (name.empty() || name.size() >= IFNAMSIZ)) return std::nullopt;
  nl_msg* raw = nullptr;
  std::string what = index > 0 ? "failed to look up link #" + std::to_string(index) : "failed to look up link " + name;
  Check(rtnl_link_build_get_request(index, index > 0 ? nullptr : name.c_str(), &raw), what);
  std::optional<LinkInfo> out;
  int rc = detail::Transact(s, detail::MsgPtr(raw), [&](nl_msg* m) {
    if (nlmsg_hdr(m)->nlmsg_type != RTM_NEWLINK) return;
    detail::ParseReply(m, [&](nl_object* obj) { out = ToLinkInfo(reinterpret_cast<rtnl_link*>(obj)); });
    if (out) out->hairpin = ReadHairpin(m);
  });
  if (IsNotFound(rc)) return std::nullopt;
  Check(rc, what);
  return out;
}

LinkInfo MustFindLink(Socket& s, const std::string& name, const std::string& what) {
  auto l = FindLink(s, name);
  if (!l) throw cni::Error(cni::kNetlink, what + ": link " + name + " not found");
  return *l;
}

// Applies `changes` to the link called `name` (RTM_NEWLINK without NLM_F_CREATE, by name).
void ChangeLink(Socket& s, const std::string& name, rtnl_link* changes, const std::string& what) {
  LinkPtr orig = NewLink();
  rtnl_link_set_name(orig.get(), name.c_str());
  rtnl_link_set_name(changes, name.c_str());
  Check(rtnl_link_change(s.get(), orig.get(), changes, 0), what);
}

void ChangeFlag(Socket& s, const std::string& name, unsigned int flag, bool on, const std::string& what) {
  LinkPtr changes = NewLink();
  if (on) {
    rtnl_link_set_flags(changes.get(), flag);
  } else {
    rtnl_link_unset_flags(changes.get(), flag);
  }
  ChangeLink(s, name, changes.get(), what);
}

}  // namespace

std::optional<LinkInfo> FindLink(Socket& s, const std::string& name) { return GetLink(s, 0, name); }

std::optional<LinkInfo> FindLinkByIndex(Socket& s, int index) {
  if (index <= 0) return std::nullopt;
  return GetLink(s, index, {});
}

std::vector<LinkInfo> ListLinks(Socket& s) {
  detail::MsgPtr msg(detail::NotNull(nlmsg_alloc_simple(RTM_GETLINK, NLM_F_DUMP), "message"));
  ifinfomsg ifi{};
  ifi.ifi_family = AF_UNSPEC;
  Check(nlmsg_append(msg.get(), &ifi, sizeof ifi, NLMSG_ALIGNTO), "failed to build link dump");
  std::vector<LinkInfo> out;
  int rc = detail::Transact(s, std::move(msg), [&](nl_msg* m) {
    if (nlmsg_hdr(m)->nlmsg_type != RTM_NEWLINK) return;
    detail::ParseReply(m, [&](nl_object* obj) { out.push_back(ToLinkInfo(reinterpret_cast<rtnl_link*>(obj))); });
  });
  Check(rc, "failed to list links");
  return out;
}

bool DeleteLink(Socket& s, const std::string& name) {
  if (name.empty() || name.size() >= IFNAMSIZ) return false;
  LinkPtr l = NewLink();
  rtnl_link_set_name(l.get(), name.c_str());
  int rc = rtnl_link_delete(s.get(), l.get());
  if (IsNotFound(rc)) return false;
  Check(rc, "failed to delete link " + name);
  return true;
}

void SetLinkUp(Socket& s, const std::string& name) {
  ChangeFlag(s, name, IFF_UP, true, "failed to set link " + name + " up");
}

void SetLinkDown(Socket& s, const std::string& name) {
  ChangeFlag(s, name, IFF_UP, false, "failed to set link " + name + " down");
}

void SetPromisc(Socket& s, const std::string& name, bool on) {
  ChangeFlag(s, name, IFF_PROMISC, on, "failed to set promiscuous mode of " + name);
}

void SetAllmulti(Socket& s, const std::string& name, bool on) {
  ChangeFlag(s, name, IFF_ALLMULTI, on, "failed to set all-multicast mode of " + name);
}

void SetTxQLen(Socket& s, const std::string& name, uint32_t txqlen) {
  LinkPtr changes = NewLink();
  rtnl_link_set_txqlen(changes.get(), txqlen);
  ChangeLink(s, name, changes.get(), "failed to set txqueuelen of " + name + " to " + std::to_string(txqlen));
}

void SetMtu(Socket& s, const std::string& name, int mtu) {
  LinkPtr changes = NewLink();
  rtnl_link_set_mtu(changes.get(), static_cast<unsigned int>(mtu));
  ChangeLink(s, name, changes.get(), "failed to set MTU of " + name + " to " + std::to_string(mtu));
}

void SetMac(Socket& s, const std::string& name, const std::string& mac) {
  detail::NlAddrPtr addr = detail::ParseMac(mac);
  LinkPtr changes = NewLink();
  rtnl_link_set_addr(changes.get(), addr.get());
  ChangeLink(s, name, changes.get(), "failed to set MAC of " + name + " to " + mac);
}

void SetMaster(Socket& s, const std::string& name, const std::string& master) {
  std::string what = "failed to attach " + name + " to " + master;
  int master_index = master.empty() ? 0 : MustFindLink(s, master, what).index;
  LinkPtr changes = NewLink();
  rtnl_link_set_master(changes.get(), master_index);
  ChangeLink(s, name, changes.get(), what);
}

void SetHairpin(Socket& s, const std::string& name, bool on) {
  std::string what = "failed to set hairpin mode of " + name;
  if (name.empty() || name.size() >= IFNAMSIZ) throw cni::Error(cni::kNetlink, what + ": invalid name");
  // The port's bridge options by name, as `ip link set NAME type bridge_slave hairpin on` does:
  // RTM_NEWLINK with IFLA_LINKINFO / IFLA_INFO_SLAVE_DATA / IFLA_BRPORT_MODE. (The AF_BRIDGE
  // RTM_SETLINK route needs the ifindex, which would cost a lookup.)
  detail::MsgPtr msg(detail::NotNull(nlmsg_alloc_simple(RTM_NEWLINK, 0), "message"));
  ifinfomsg ifi{};
  ifi.ifi_family = AF_UNSPEC;
  nlattr* info = nullptr;
  nlattr* data = nullptr;
  bool ok = nlmsg_append(msg.get(), &ifi, sizeof(ifi), NLMSG_ALIGNTO) >= 0 &&
            nla_put_string(msg.get(), IFLA_IFNAME, name.c_str()) >= 0 &&
            (info = nla_nest_start(msg.get(), IFLA_LINKINFO)) != nullptr &&
            nla_put_string(msg.get(), IFLA_INFO_SLAVE_KIND, "bridge") >= 0 &&
            (data = nla_nest_start(msg.get(), IFLA_INFO_SLAVE_DATA)) != nullptr &&
            nla_put_u8(msg.get(), IFLA_BRPORT_MODE, on ? 1 : 0) >= 0;
  if (!ok) throw cni::Error(cni::kNetlink, what + ": message too long");
  nla_nest_end(msg.get(), data);
  nla_nest_end(msg.get(), info);
  Check(detail::Transact(s, std::move(msg), [](nl_msg*) {}), what);
}

std::optional<LinkInfo> WaitOperUp(Socket& s, const std::string& name, int timeout_ms) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  for (;;) {
    auto l = FindLink(s, name);
    if (l && l->oper_up) return l;
    if (std::chrono::steady_clock::now() >= deadline) return std::nullopt;
    std::this_thread::sleep_for(kPollInterval);
  }
}

}  // namespace netiface::nl
