// CHECK: compares the kernel with prevResult (comparisons in plan.cc), as the reference minus its bug
// with gateway-less routes.
#include <sys/socket.h>

#include <set>
#include <string>
#include <vector>

#include "netiface/bridge/bridge.h"
#include "netiface/bridge/config.h"
#include "netiface/bridge/plan.h"
#include "netiface/cni/error.h"
#include "netiface/cni/exec.h"
#include "netiface/nat/nat.h"
#include "netiface/netlink/addr.h"
#include "netiface/netlink/link.h"
#include "netiface/netlink/netns.h"
#include "netiface/netlink/route.h"
#include "netiface/netlink/socket.h"

namespace netiface::bridge {
namespace {

struct ResultIfaces {
  int container = -1, host = -1, bridge = -1;
};

ResultIfaces FindIfaces(const cni::Result& r, const Config& c, const std::string& ifname) {
  ResultIfaces f;
  for (int i = 0; i < static_cast<int>(r.interfaces.size()); ++i) {
    const auto& intf = r.interfaces[i];
    if (!intf.sandbox.empty()) {
      if (intf.name == ifname && f.container < 0) f.container = i;
    } else if (intf.name == c.bridge) {
      if (f.bridge < 0) f.bridge = i;
    } else if (f.host < 0) {
      f.host = i;
    }
  }
  return f;
}

void CheckLinks(nl::Socket& host, nl::Socket& ctr, const cni::Result& prev, const ResultIfaces& f,
                const Config& c, const std::string& ifname, std::vector<std::string>& problems,
                int& ctr_index) {
  auto br = nl::FindLink(host, c.bridge);
  if (!br || br->kind != "bridge") {
    problems.push_back("bridge \"" + c.bridge + "\" does not exist");
    return;
  }
  if (f.bridge >= 0 && !prev.interfaces[f.bridge].mac.empty() && prev.interfaces[f.bridge].mac != br->mac) {
    problems.push_back("bridge \"" + c.bridge + "\" has MAC " + br->mac + ", result says " +
                       prev.interfaces[f.bridge].mac);
  }
  if (c.promisc && !br->promisc) problems.push_back("bridge \"" + c.bridge + "\" is not promiscuous");
  auto link = nl::FindLink(ctr, ifname);
  if (!link) {
    problems.push_back("interface \"" + ifname + "\" is not in the sandbox");
    return;
  }
  ctr_index = link->index;
  if (link->kind != "veth") problems.push_back("interface \"" + ifname + "\" is not a veth");
  const auto& want_ctr = prev.interfaces[f.container];
  if (!want_ctr.mac.empty() && want_ctr.mac != link->mac) {
    problems.push_back("interface \"" + ifname + "\" has MAC " + link->mac + ", result says " + want_ctr.mac);
  }
  // The peer as the kernel sees it now: enslaving may have changed its MAC since the result was made.
  auto peer = nl::FindLinkByIndex(host, link->peer_index);
  if (!peer) {
    problems.push_back("the host peer of \"" + ifname + "\" does not exist");
    return;
  }
  if (f.host >= 0) {
    const auto& want_host = prev.interfaces[f.host];
    if (want_host.name != peer->name) {
      problems.push_back("the host peer of \"" + ifname + "\" is " + peer->name + ", result says " + want_host.name);
    } else if (!want_host.mac.empty() && want_host.mac != peer->mac) {
      problems.push_back("host veth " + peer->name + " has MAC " + peer->mac + ", result says " + want_host.mac);
    }
  }
  if (peer->master_index != br->index) {
    problems.push_back("host veth " + peer->name + " is not enslaved to \"" + c.bridge + "\"");
  } else if (peer->hairpin != c.hairpin) {
    problems.push_back("host veth " + peer->name + " hairpin mode is " + (peer->hairpin ? "on" : "off"));
  }
}

}  // namespace

void Check(const cni::CmdArgs& args) {
  const Config c = ParseConfig(args.conf);
  if (!args.conf.prev_result) throw cni::Error(cni::kInvalidConfig, "bridge: CHECK requires a prevResult");
  const cni::Result& prev = *args.conf.prev_result;
  if (!c.ipam_type.empty()) cni::Delegate("CHECK", c.ipam_type, cni::DelegateConf::Own(args), args);

  const ResultIfaces f = FindIfaces(prev, c, args.ifname);
  if (f.container < 0) {
    throw cni::Error(cni::kInvalidConfig,
                     "bridge: prevResult has no sandbox interface named \"" + args.ifname + "\"");
  }
  auto ns = nl::NetNs::Open(args.netns);
  if (!ns) throw cni::Error(cni::kInvalidEnv, "CNI_NETNS: " + args.netns + " does not exist");
  nl::Socket host = nl::Socket::Open();
  nl::Socket ctr = nl::Socket::OpenIn(*ns);

  std::vector<std::string> problems;
  int ctr_index = 0;
  CheckLinks(host, ctr, prev, f, c, args.ifname, problems, ctr_index);
  if (ctr_index > 0) {
    std::vector<cni::IpNet> want_addrs, have_addrs;
    for (const auto& ip : prev.ips) {
      if (!ip.interface || *ip.interface == f.container) want_addrs.push_back(ip.address);
    }
    for (const auto& a : nl::ListAddresses(ctr, ctr_index, AF_UNSPEC)) have_addrs.push_back(a.local);
    for (auto& p : MissingAddresses(want_addrs, have_addrs)) problems.push_back(std::move(p));

    std::set<int> tables;
    for (const auto& r : prev.routes) tables.insert(r.table.value_or(0));
    std::vector<nl::RouteInfo> have_routes;
    for (int t : tables) {
      auto rs = nl::ListRoutes(ctr, AF_UNSPEC, t);
      have_routes.insert(have_routes.end(), rs.begin(), rs.end());
    }
    for (auto& p : MissingRoutes(prev.routes, GatewaysOf(prev.ips), have_routes)) problems.push_back(std::move(p));
  }
  if (c.ip_masq) {
    std::vector<cni::IpNet> addrs;
    for (const auto& ip : prev.ips) addrs.push_back(ip.address);
    if (!addrs.empty()) {
      try {
        nat::Verify(nat::Spec{{c.network, args.container_id, args.ifname}, addrs, {}});
      } catch (const cni::Error& e) {
        problems.push_back(e.msg());
      }
    }
  }
  if (!problems.empty()) {
    std::string msg = "bridge CHECK failed: ";
    for (size_t i = 0; i < problems.size(); ++i) msg += (i ? "; " : "") + problems[i];
    throw cni::Error(cni::kInternal, msg);
  }
}

}  // namespace netiface::bridge
