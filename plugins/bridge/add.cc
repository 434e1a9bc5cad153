// ADD: reads the kernel, applies the plan from plan.cc, undoes everything on failure.
#include <sys/random.h>
#include <sys/socket.h>

#include <chrono>
#include <cstdio>
#include <optional>
#include <thread>

#include "netiface/bridge/bridge.h"
#include "netiface/bridge/config.h"
#include "netiface/bridge/plan.h"
#include "netiface/cni/error.h"
#include "netiface/cni/exec.h"
#include "netiface/cni/log.h"
#include "netiface/nat/nat.h"
#include "netiface/netlink/addr.h"
#include "netiface/netlink/link.h"
#include "netiface/netlink/netns.h"
#include "netiface/netlink/route.h"
#include "netiface/netlink/socket.h"
#include "netiface/netlink/sysctl.h"
#include "scope_guard.h"

namespace netiface::bridge {
namespace {

constexpr int kVethNameAttempts = 10;
constexpr int kOperUpTimeoutMs = 2500;  // the reference retries for 2.55 s
constexpr int kDadTimeoutMs = 10000;    // enabledad only: as the reference's SettleAddresses

std::string RandomVethName() {
  uint32_t r = 0;
  if (getrandom(&r, sizeof(r), 0) != static_cast<ssize_t>(sizeof(r))) {
    r = static_cast<uint32_t>(std::chrono::steady_clock::now().time_since_epoch().count());
  }
  char buf[16];
  std::snprintf(buf, sizeof(buf), "veth%08x", r);
  return buf;
}

// The bridge, created when missing (a concurrent ADD creating it too is fine), up.
nl::LinkInfo EnsureBridgeUp(nl::Socket& host, const Config& c) {
  auto br = nl::FindLink(host, c.bridge);
  if (br && br->kind != "bridge") {
    throw cni::Error(cni::kInvalidConfig, "\"" + c.bridge + "\" already exists but is not a bridge",
                     "kind \"" + br->kind + "\"");
  }
  if (!br) {
    bool created = nl::EnsureBridge(host, c.bridge, c.mtu);
    br = nl::FindLink(host, c.bridge);
    if (!br) throw cni::Error(cni::kNetlink, "bridge \"" + c.bridge + "\" vanished right after creation");
    if (created) {
      // A bridge whose MAC was never set takes the lowest MAC of its ports and changes as they come and
      // go; pinning it keeps neighbours' caches and CHECK's view stable.
      nl::SetMac(host, c.bridge, br->mac);
      try {
        nl::WriteSysctl(nullptr, "net/ipv6/conf/" + c.bridge + "/accept_ra", "0");
      } catch (const cni::Error&) {
        // IPv6 disabled on this host: nothing to turn off.
      }
    }
  }
  if (c.promisc && !br->promisc) nl::SetPromisc(host, c.bridge, true);
  if (!br->admin_up) nl::SetLinkUp(host, c.bridge);
  return *br;
}

// Creates the pair with the container end directly in the netns and the host end already a port of
// the bridge; returns the host end's name.
std::string CreateVethPair(nl::Socket& host, nl::Socket& ctr, const nl::NetNs& ns, const nl::LinkInfo& br,
                           const Config& c, const std::string& ifname, const std::string& mac) {
  for (int attempt = 0; attempt < kVethNameAttempts; ++attempt) {
    nl::VethSpec spec;
    spec.name = RandomVethName();
    spec.peer_name = ifname;
    spec.peer_ns = &ns;
    spec.mtu = c.mtu;
    spec.peer_mac = mac;
    spec.master_index = br.index;
    try {
      nl::CreateVeth(host, spec);
      return spec.name;
    } catch (const cni::Error& e) {
      if (e.msg().find("exists") == std::string::npos) throw;
      if (nl::FindLink(ctr, ifname)) {
        throw cni::Error(cni::kInvalidEnv, "CNI_IFNAME: interface \"" + ifname + "\" already exists in the netns");
      }
      if (!nl::FindLink(host, spec.name)) throw;
      log::Debug("host veth name {} taken, retrying", spec.name);
    }
  }
  throw cni::Error(cni::kNetlink, "no free host veth name after " + std::to_string(kVethNameAttempts) + " attempts");
}

// Before the container link goes up, which is before IPAM has answered: the DAD setting its IPv6
// link-local address is generated with. Without enabledad, hairpin echoes a link-local NS back and DAD
// would fail. The keys are absent when IPv6 is disabled (and enhanced_dad on older kernels): fine.
void WriteLinkSysctls(const nl::NetNs& ns, const std::string& ifname, const Config& c) {
  nl::ScopedSetNs inside(ns);  // /proc/sys/net resolves in the opener's namespace
  const std::string v6 = "net/ipv6/conf/" + ifname + "/";
  std::vector<std::pair<std::string, std::string>> sysctls = {{v6 + "accept_dad", c.enable_dad ? "1" : "0"}};
  if (c.enable_dad) sysctls.emplace_back(v6 + "enhanced_dad", "1");
  for (const auto& [key, value] : sysctls) {
    try {
      nl::WriteSysctl(nullptr, key, value);
    } catch (const cni::Error&) {
    }
  }
}

// With the addresses known.
void WriteAddressSysctls(const nl::NetNs& ns, const std::string& ifname, const Plan& p) {
  nl::ScopedSetNs inside(ns);
  if (p.has_v6) nl::WriteSysctl(nullptr, "net/ipv6/conf/" + ifname + "/disable_ipv6", "0");
  if (p.has_v4) {
    try {
      nl::WriteSysctl(nullptr, "net/ipv4/conf/" + ifname + "/arp_notify", "1");
    } catch (const cni::Error&) {
    }
  }
}

// With enabledad, routes via an IPv6 gateway need the addresses out of the tentative state.
void WaitForDad(nl::Socket& ctr, int ifindex) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(kDadTimeoutMs);
  while (true) {
    bool tentative = false;
    for (const auto& a : nl::ListAddresses(ctr, ifindex, AF_INET6)) {
      if (a.flags & 0x40 /* IFA_F_TENTATIVE */) tentative = true;
      if (a.flags & 0x08 /* IFA_F_DADFAILED */) {
        throw cni::Error(cni::kNetlink, "duplicate address detection failed for " + a.local.ToString());
      }
    }
    if (!tentative) return;
    if (std::chrono::steady_clock::now() > deadline) {
      throw cni::Error(cni::kNetlink, "IPv6 addresses still tentative after " + std::to_string(kDadTimeoutMs) + " ms");
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

void ConfigureContainer(nl::Socket& ctr, const nl::NetNs& ns, const nl::LinkInfo& link, const Config& c,
                        const Plan& p) {
  WriteAddressSysctls(ns, link.name, p);
  for (const auto& a : p.container_addrs) {
    nl::AddAddress(ctr, link.index, a, a.family() == AF_INET6 && !c.enable_dad);
  }
  if (p.has_v6 && c.enable_dad) WaitForDad(ctr, link.index);
  for (auto r : p.container_routes) {
    r.ifindex = link.index;
    nl::AddRoute(ctr, r);  // kExists: the same route is already there, which is what we want
  }
}

void ConfigureGateway(nl::Socket& host, const nl::LinkInfo& br, const Config& c, const Plan& p) {
  if (p.bridge_addrs.empty()) return;
  std::vector<cni::IpNet> existing;
  for (const auto& a : nl::ListAddresses(host, br.index, AF_UNSPEC)) existing.push_back(a.local);
  BridgeAddrChanges ch = PlanBridgeAddrs(c.bridge, existing, p.bridge_addrs, c.force_address);
  for (const auto& a : ch.remove) nl::DeleteAddress(host, br.index, a);
  // No DAD for the gateway: it is ours, and pods must reach it at once.
  for (const auto& a : ch.add) nl::AddAddress(host, br.index, a, a.family() == AF_INET6);
  if (p.forward_v4) nl::WriteSysctl(nullptr, "net/ipv4/ip_forward", "1");
  if (p.forward_v6) nl::WriteSysctl(nullptr, "net/ipv6/conf/all/forwarding", "1");
}

}  // namespace

cni::Result Add(const cni::CmdArgs& args, const StepHook& hook) {
  auto step = [&](std::string_view name) {
    log::Debug("ADD step {}", name);
    if (hook) hook(name);
  };
  // Everything that can be judged without changing anything.
  const Config c = ParseConfig(args.conf);
  ValidateForAdd(c);
  const std::string mac = RequestedMac(args.conf, args.args);
  auto ns = nl::NetNs::Open(args.netns);
  if (!ns) throw cni::Error(cni::kInvalidEnv, "CNI_NETNS: " + args.netns + " does not exist");
  nl::Socket host = nl::Socket::Open();
  nl::Socket ctr = nl::Socket::OpenIn(*ns);
  if (nl::FindLink(ctr, args.ifname)) {
    throw cni::Error(cni::kInvalidEnv, "CNI_IFNAME: interface \"" + args.ifname + "\" already exists in the netns");
  }

  // IPAM ADD runs in its own process while the bridge and the pair are set up: they need nothing from
  // each other. A failed ADD is DELeted after the allocation has finished, so the release never races it.
  step("ipam");
  const cni::DelegateConf ipam_conf = cni::DelegateConf::Own(args);  // outlives undo_ipam, which uses it
  std::optional<cni::PendingAdd> ipam;
  ScopeGuard undo_ipam;
  if (!c.ipam_type.empty()) {
    ipam.emplace(cni::StartDelegateAdd(c.ipam_type, ipam_conf, args));
    undo_ipam.Set([&] {
      ipam->Finish();
      cni::Delegate("DEL", c.ipam_type, ipam_conf, args);
    });
  }

  step("bridge");
  const nl::LinkInfo br = EnsureBridgeUp(host, c);

  step("veth");
  const std::string host_veth = CreateVethPair(host, ctr, *ns, br, c, args.ifname, mac);
  ScopeGuard undo_veth([&] { nl::DeleteLink(host, host_veth); });  // takes the container end along
  if (c.hairpin) nl::SetHairpin(host, host_veth, true);
  nl::SetLinkUp(host, host_veth);
  auto ctr_link = nl::FindLink(ctr, args.ifname);
  if (!ctr_link) throw cni::Error(cni::kNetlink, "container interface \"" + args.ifname + "\" vanished");
  // Up before its addresses, while IPAM still runs: after creating the pair, bringing a link up is the
  // kernel's slowest step here (IPv6 address generation and multicast joins run in the request).
  WriteLinkSysctls(*ns, args.ifname, c);
  nl::SetLinkUp(ctr, args.ifname);

  step("addresses");
  cni::Result ipam_result;
  if (ipam) {
    ipam_result = ipam->Wait();
    if (ipam_result.ips.empty()) {
      throw cni::Error(cni::kDelegateFailed, "IPAM plugin \"" + c.ipam_type + "\" returned no IP configuration");
    }
  }
  const Plan plan = MakePlan(c, ipam_result);

  step("container");
  ConfigureContainer(ctr, *ns, *ctr_link, c, plan);

  step("gateway");
  ConfigureGateway(host, br, c, plan);

  step("masq");
  ScopeGuard undo_masq;
  if (c.ip_masq && !plan.container_addrs.empty()) {
    nat::Tag tag{c.network, args.container_id, args.ifname};
    nat::Apply(nat::Spec{tag, plan.container_addrs, {}});
    // The undo owns what it uses: it may run after this block's locals are gone.
    undo_masq.Set([tag = std::move(tag)] { nat::Remove(tag); });
  }

  step("wait");
  // The host end as it is once up is what CHECK will compare with.
  const auto host_link = nl::WaitOperUp(host, host_veth, kOperUpTimeoutMs);
  if (!host_link) {
    throw cni::Error(cni::kNetlink, "bridge port " + host_veth + " did not come up within " +
                                        std::to_string(kOperUpTimeoutMs) + " ms");
  }

  cni::Result result = plan.result;
  result.interfaces = {cni::Interface{c.bridge, br.mac},
                       cni::Interface{host_veth, host_link->mac},
                       cni::Interface{args.ifname, ctr_link->mac, args.netns}};

  step("answer");
  // skel prints the result at the request's version once this returns, past every undo: whatever
  // could stop it from being written must fail here, while the undos still run.
  cni::ResultToJson(result, c.cni_version);

  log::Debug("ADD done");
  undo_masq.Dismiss();
  undo_ipam.Dismiss();
  undo_veth.Dismiss();
  return result;
}

}  // namespace netiface::bridge
