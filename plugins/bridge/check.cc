// CHECK: observe (Ops::Observe, one read of the kernel and the rules), then compare (CompareAttachment,
// pure; the address and route comparisons are plan.cc's), as the reference minus its bug with
// gateway-less routes.
#include <set>
#include <string>
#include <vector>

#include "netiface/bridge/bridge.h"
#include "netiface/bridge/config.h"
#include "netiface/bridge/plan.h"
#include "netiface/cni/error.h"
#include "netiface/cni/join.h"

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

void CompareLinks(const Config& c, const cni::Result& prev, const ResultIfaces& f, const std::string& ifname,
                  const Observed& o, std::vector<std::string>& problems) {
  const auto& br = o.bridge;
  if (!br || br->kind != "bridge") {
    problems.push_back("bridge \"" + c.bridge + "\" does not exist");
    return;
  }
  if (f.bridge >= 0 && !prev.interfaces[f.bridge].mac.empty() && prev.interfaces[f.bridge].mac != br->mac) {
    problems.push_back("bridge \"" + c.bridge + "\" has MAC " + br->mac + ", result says " +
                       prev.interfaces[f.bridge].mac);
  }
  if (c.promisc && !br->promisc) problems.push_back("bridge \"" + c.bridge + "\" is not promiscuous");
  const auto& link = o.container_link;
  if (!link) {
    problems.push_back("interface \"" + ifname + "\" is not in the sandbox");
    return;
  }
  if (link->kind != "veth") problems.push_back("interface \"" + ifname + "\" is not a veth");
  const auto& want_ctr = prev.interfaces[f.container];
  if (!want_ctr.mac.empty() && want_ctr.mac != link->mac) {
    problems.push_back("interface \"" + ifname + "\" has MAC " + link->mac + ", result says " + want_ctr.mac);
  }
  // The peer as the kernel sees it now: enslaving may have changed its MAC since the result was made.
  const auto& peer = o.host_peer;
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

// The masquerade CHECK verifies: ipMasq with addresses in the result.
std::optional<nat::Spec> MasqOf(const Config& c, const cni::Result& prev, const std::string& container_id,
                                const std::string& ifname) {
  if (!c.ip_masq) return std::nullopt;
  std::vector<cni::IpNet> addrs;
  for (const auto& ip : prev.ips) addrs.push_back(ip.address);
  if (addrs.empty()) return std::nullopt;
  return nat::Spec{{c.network, container_id, ifname}, addrs, {}};
}

}  // namespace

std::vector<std::string> CompareAttachment(const Config& c, const cni::Result& prev, const std::string& ifname,
                                           const Observed& o) {
  const ResultIfaces f = FindIfaces(prev, c, ifname);
  std::vector<std::string> problems;
  if (f.container < 0) {
    problems.push_back("prevResult has no sandbox interface named \"" + ifname + "\"");
    return problems;
  }
  CompareLinks(c, prev, f, ifname, o, problems);
  if (o.container_link) {
    std::vector<cni::IpNet> want_addrs;
    for (const auto& ip : prev.ips) {
      if (!ip.interface || *ip.interface == f.container) want_addrs.push_back(ip.address);
    }
    for (auto& p : MissingAddresses(want_addrs, o.container_addresses)) problems.push_back(std::move(p));
    for (auto& p : MissingRoutes(prev.routes, GatewaysOf(prev.ips), o.container_routes)) {
      problems.push_back(std::move(p));
    }
  }
  if (o.nat_problem) problems.push_back(*o.nat_problem);
  return problems;
}

void Check(const cni::CmdArgs& args, Ops& ops) {
  const Config c = ParseConfig(args.conf);
  if (!args.conf.prev_result) throw cni::Error(cni::kInvalidConfig, "bridge: CHECK requires a prevResult");
  const cni::Result& prev = *args.conf.prev_result;
  if (!c.ipam_type.empty()) ops.IpamCheck();
  if (FindIfaces(prev, c, args.ifname).container < 0) {
    throw cni::Error(cni::kInvalidConfig, "bridge: prevResult has no sandbox interface named \"" + args.ifname + "\"");
  }
  std::set<int> tables;
  for (const auto& r : prev.routes) tables.insert(r.table.value_or(0));
  const Observed observed = ops.Observe(c, args.ifname, tables, MasqOf(c, prev, args.container_id, args.ifname));
  std::vector<std::string> problems = CompareAttachment(c, prev, args.ifname, observed);
  if (!problems.empty()) {
    throw cni::Error(cni::kInternal, "bridge CHECK failed: " + cni::JoinMessages(problems));
  }
}

}  // namespace netiface::bridge
