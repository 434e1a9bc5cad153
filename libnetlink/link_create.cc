// Creating links: veth pairs (each end directly in its namespace) and bridges.
#include <linux/if.h>

#include <netlink/route/link/veth.h>

#include "netiface/cni/error.h"
#include "netiface/cni/ifname.h"
#include "netiface/netlink/link.h"
#include "netiface/netlink/netns.h"
#include "nl_util.h"
#include "veth_request.h"

namespace netiface::nl {
namespace detail {
namespace {

void ValidateName(const std::string& name, const char* which) {
  if (!cni::IsValidIfname(name)) {
    throw cni::Error(cni::kInvalidConfig, std::string("invalid ") + which + " name \"" + name + "\"");
  }
}

void ConfigureEnd(rtnl_link* l, const std::string& name, const VethSpec& spec, const std::string& mac) {
  rtnl_link_set_name(l, name.c_str());
  if (spec.mtu > 0) rtnl_link_set_mtu(l, static_cast<unsigned int>(spec.mtu));
  if (spec.num_queues > 0) {
    rtnl_link_set_num_tx_queues(l, static_cast<uint32_t>(spec.num_queues));
    rtnl_link_set_num_rx_queues(l, static_cast<uint32_t>(spec.num_queues));
  }
  if (!mac.empty()) rtnl_link_set_addr(l, ParseMac(mac).get());  // the link takes its own reference
}

}  // namespace

MsgPtr BuildVethRequest(const VethSpec& spec) {
  ValidateName(spec.name, "veth");
  ValidateName(spec.peer_name, "veth peer");
  LinkPtr link(NotNull(rtnl_link_veth_alloc(), "veth link"));
  LinkPtr peer(NotNull(rtnl_link_veth_get_peer(link.get()), "veth peer"));  // our own reference
  ConfigureEnd(link.get(), spec.name, spec, spec.mac);
  ConfigureEnd(peer.get(), spec.peer_name, spec, spec.peer_mac);
  if (spec.peer_ns != nullptr) rtnl_link_set_ns_fd(peer.get(), spec.peer_ns->fd());
  if (spec.master_index > 0) rtnl_link_set_master(link.get(), spec.master_index);
  nl_msg* raw = nullptr;
  Check(rtnl_link_build_add_request(link.get(), NLM_F_CREATE | NLM_F_EXCL, &raw),
        "failed to build veth request for " + spec.name);
  return MsgPtr(raw);
}

}  // namespace detail

void CreateVeth(Socket& s, const VethSpec& spec) {
  int rc = detail::Transact(s, detail::BuildVethRequest(spec), [](nl_msg*) {});
  Check(rc, "failed to create veth pair " + spec.name + "/" + spec.peer_name);
}

bool EnsureBridge(Socket& s, const std::string& name, int mtu) {
  detail::ValidateName(name, "bridge");
  std::string what = "failed to create bridge " + name;
  // A concurrent DEL may remove the link between our EEXIST and the lookup: try twice.
  for (int attempt = 0; attempt < 2; ++attempt) {
    detail::LinkPtr br = detail::NewLink();
    rtnl_link_set_name(br.get(), name.c_str());
    Check(rtnl_link_set_type(br.get(), "bridge"), what);
    if (mtu > 0) rtnl_link_set_mtu(br.get(), static_cast<unsigned int>(mtu));
    int rc = rtnl_link_add(s.get(), br.get(), NLM_F_CREATE | NLM_F_EXCL);
    if (rc >= 0) return true;
    if (!IsExists(rc)) Check(rc, what);
    auto existing = FindLink(s, name);
    if (!existing) continue;
    if (existing->kind != "bridge") {
      throw cni::Error(cni::kInvalidConfig, "link " + name + " already exists but is not a bridge (" +
                                                (existing->kind.empty() ? "device" : existing->kind) + ")");
    }
    return false;
  }
  throw cni::Error(cni::kNetlink, what + ": it exists and vanishes repeatedly");
}

}  // namespace netiface::nl
