// The bridge plugin's kernel, IPAM and NAT side: what the verbs (add.cc, del.cc, check.cc) decide is
// carried out here, and nothing is decided here that a unit test should see.
#include "netiface/bridge/kernel_ops.h"

#include <sys/random.h>
#include <sys/socket.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <utility>

#include "netiface/cni/error.h"
#include "netiface/cni/log.h"
#include "netiface/netlink/addr.h"
#include "netiface/netlink/sysctl.h"

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

// A sysctl the kernel may lack (IPv6 disabled, enhanced_dad before 5.x): absent is fine, a refused
// write is not.
void WriteIfPresent(const std::string& key, const std::string& value) {
  if (!nl::WriteSysctl(nullptr, key, value)) log::Debug("sysctl {} is absent", key);
}

cni::Error IfnameTaken(const std::string& ifname) {
  return cni::Error(cni::kInvalidEnv, "CNI_IFNAME: interface \"" + ifname + "\" already exists in the netns");
}

}  // namespace

KernelOps::KernelOps(const cni::CmdArgs& args) : args_(args), ipam_(args) {}

// A started child is always reaped (PendingDelegate's destructor), also when the verb threw.
KernelOps::~KernelOps() = default;

// --- IPAM ---

void KernelOps::StartIpamAdd() { ipam_.StartAdd(); }

cni::Result KernelOps::WaitIpamAdd() {
  cni::Result r = ipam_.WaitAdd();
  if (r.ips.empty()) {
    throw cni::Error(cni::kDelegateFailed, "IPAM plugin \"" + ipam_.type() + "\" returned no IP configuration");
  }
  return r;
}

void KernelOps::IpamDel() { ipam_.Del(); }
void KernelOps::StartIpamDel() { ipam_.StartDel(); }
void KernelOps::WaitIpamDel() { ipam_.WaitDel(); }
void KernelOps::IpamCheck() { ipam_.Check(); }
void KernelOps::IpamStatus() { ipam_.Status(); }
void KernelOps::IpamGc() { ipam_.Gc(); }

// --- Sockets ---

nl::Socket& KernelOps::Host() {
  if (!host_) host_ = nl::Socket::Open();
  return *host_;
}

const std::optional<nl::NetNs>& KernelOps::ContainerNs() {
  if (!ns_) ns_.emplace(args_.netns.empty() ? std::nullopt : nl::NetNs::Open(args_.netns));
  return *ns_;
}

nl::Socket& KernelOps::Container() {
  if (!container_) container_ = nl::Socket::OpenIn(*ContainerNs());
  return *container_;
}

// --- ADD ---

void KernelOps::Prepare(const std::string& ifname) {
  if (!ContainerNs()) throw cni::Error(cni::kInvalidEnv, "CNI_NETNS: " + args_.netns + " does not exist");
  Host();
  if (nl::FindLink(Container(), ifname)) throw IfnameTaken(ifname);
}

nl::LinkInfo KernelOps::EnsureBridge(const Config& c) {
  nl::Socket& host = Host();
  auto br = nl::FindLink(host, c.bridge);
  if (br && br->kind != "bridge") {
    throw cni::Error(cni::kInvalidConfig, "\"" + c.bridge + "\" already exists but is not a bridge",
                     "kind \"" + br->kind + "\"");
  }
  if (!br) {
    bool created = nl::EnsureBridge(host, c.bridge, c.mtu);  // a concurrent ADD creating it too is fine
    br = nl::FindLink(host, c.bridge);
    if (!br) throw cni::Error(cni::kNetlink, "bridge \"" + c.bridge + "\" vanished right after creation");
    if (created) {
      // A bridge whose MAC was never set takes the lowest MAC of its ports and changes as they come and
      // go; pinning it keeps neighbours' caches and CHECK's view stable.
      nl::SetMac(host, c.bridge, br->mac);
      const std::string v6 = "net/ipv6/conf/" + c.bridge + "/";
      WriteIfPresent(v6 + "accept_ra", "0");  // absent: IPv6 is off
      // Without DAD the link-local address the bridge gets when it comes up is usable at once. The
      // kernel sends a neighbour solicitation for a forwarded packet only from a link-local that is not
      // tentative: with DAD on, the first packets routed to a new pod in the next 1-2 s waited a whole
      // solicitation retry (1 s) each, long enough to fail a first cross-node ping.
      WriteIfPresent(v6 + "accept_dad", "0");
    }
  }
  if (c.promisc && !br->promisc) nl::SetPromisc(host, c.bridge, true);
  if (!br->admin_up) nl::SetLinkUp(host, c.bridge);
  return *br;
}

std::string KernelOps::CreateVeth(const Config& c, const nl::LinkInfo& br, const std::string& ifname,
                                  const std::string& mac) {
  nl::Socket& host = Host();
  nl::Socket& ctr = Container();
  std::string name;
  for (int attempt = 0; attempt < kVethNameAttempts && name.empty(); ++attempt) {
    nl::VethSpec spec{.name = RandomVethName(),
                      .peer_name = ifname,
                      .peer_ns = &*ContainerNs(),
                      .mtu = c.mtu,
                      .peer_mac = mac,
                      .master_index = br.index};
    try {
      nl::CreateVeth(host, spec);
      name = spec.name;
    } catch (const cni::Error& e) {
      if (e.sys_errno() != EEXIST) throw;
      if (nl::FindLink(ctr, ifname)) throw IfnameTaken(ifname);
      if (!nl::FindLink(host, spec.name)) throw;
      log::Debug("host veth name {} taken, retrying", spec.name);
    }
  }
  if (name.empty()) {
    throw cni::Error(cni::kNetlink, "no free host veth name after " + std::to_string(kVethNameAttempts) + " attempts");
  }
  try {
    if (c.hairpin) nl::SetHairpin(host, name, true);
    nl::SetLinkUp(host, name);
    // Before the container end goes up, which is before IPAM has answered: the DAD setting its IPv6
    // link-local address is generated with. Without enabledad, hairpin echoes a link-local NS back and
    // DAD would fail. /proc/sys/net resolves in the opener's namespace.
    {
      nl::ScopedSetNs inside(*ContainerNs());
      const std::string v6 = "net/ipv6/conf/" + ifname + "/";
      WriteIfPresent(v6 + "accept_dad", c.enable_dad ? "1" : "0");
      if (c.enable_dad) WriteIfPresent(v6 + "enhanced_dad", "1");
    }
    // Up before its addresses, while IPAM still runs: after creating the pair, bringing a link up is the
    // kernel's slowest step here (IPv6 address generation and multicast joins run in the request).
    nl::SetLinkUp(ctr, ifname);
  } catch (...) {
    nl::DeleteLink(host, name);
    throw;
  }
  return name;
}

bool KernelOps::DeleteHostVeth(const std::string& name) { return nl::DeleteLink(Host(), name); }

void KernelOps::ConfigureContainer(const Config& c, const std::string& ifname, const Plan& p) {
  nl::Socket& ctr = Container();
  auto link = nl::FindLink(ctr, ifname);
  if (!link) throw cni::Error(cni::kNetlink, "container interface \"" + ifname + "\" vanished");
  {
    nl::ScopedSetNs inside(*ContainerNs());
    if (p.has_v6) nl::RequireSysctl(nullptr, "net/ipv6/conf/" + ifname + "/disable_ipv6", "0");
    if (p.has_v4) WriteIfPresent("net/ipv4/conf/" + ifname + "/arp_notify", "1");
  }
  for (const auto& a : p.container_addrs) {
    nl::AddAddress(ctr, link->index, a, a.family() == AF_INET6 && !c.enable_dad);
  }
  // With enabledad, routes via an IPv6 gateway need the addresses out of the tentative state.
  if (p.has_v6 && c.enable_dad) nl::WaitForDad(ctr, link->index, kDadTimeoutMs);
  for (auto r : p.container_routes) {
    r.ifindex = link->index;
    nl::AddRoute(ctr, r);  // kExists: the same route is already there, which is what we want
  }
}

void KernelOps::ConfigureGateway(const Config& c, const nl::LinkInfo& br, const Plan& p) {
  if (p.bridge_addrs.empty()) return;
  nl::Socket& host = Host();
  std::vector<cni::IpNet> existing;
  for (const auto& a : nl::ListAddresses(host, br.index, AF_UNSPEC)) existing.push_back(a.local);
  BridgeAddrChanges ch = PlanBridgeAddrs(c.bridge, existing, p.bridge_addrs, c.force_address);
  for (const auto& a : ch.remove) nl::DeleteAddress(host, br.index, a);
  // No DAD for the gateway: it is ours, and pods must reach it at once.
  for (const auto& a : ch.add) nl::AddAddress(host, br.index, a, a.family() == AF_INET6);
  // On a node forwarding is on already: netlink tells so without a /proc/sys lookup (sysctl.h).
  nl::Sysctls sysctls(nullptr, &host);
  if (p.forward_v4) sysctls.Require("net/ipv4/ip_forward", "1");
  if (p.forward_v6) sysctls.Require("net/ipv6/conf/all/forwarding", "1");
}

AttachedLinks KernelOps::WaitUp(const std::string& host_veth, const std::string& ifname) {
  auto host = nl::WaitOperUp(Host(), host_veth, kOperUpTimeoutMs);
  if (!host) {
    throw cni::Error(cni::kNetlink, "bridge port " + host_veth + " did not come up within " +
                                        std::to_string(kOperUpTimeoutMs) + " ms");
  }
  auto ctr = nl::FindLink(Container(), ifname);
  if (!ctr) throw cni::Error(cni::kNetlink, "container interface \"" + ifname + "\" vanished");
  return {*host, *ctr};
}

// --- DEL ---

bool KernelOps::DeleteContainerLink(const std::string& ifname) {
  if (!ContainerNs()) return false;  // the sandbox is gone, and its links with it
  return nl::DeleteLink(Container(), ifname);
}

// --- CHECK ---

Observed KernelOps::Observe(const Config& c, const std::string& ifname, const std::set<int>& tables,
                            const std::optional<nat::Spec>& masq) {
  if (!ContainerNs()) throw cni::Error(cni::kInvalidEnv, "CNI_NETNS: " + args_.netns + " does not exist");
  nl::Socket& host = Host();
  nl::Socket& ctr = Container();
  Observed o;
  o.bridge = nl::FindLink(host, c.bridge);
  o.container_link = nl::FindLink(ctr, ifname);
  if (o.container_link) {
    if (o.container_link->peer_index > 0) o.host_peer = nl::FindLinkByIndex(host, o.container_link->peer_index);
    for (const auto& a : nl::ListAddresses(ctr, o.container_link->index, AF_UNSPEC)) {
      o.container_addresses.push_back(a.local);
    }
    for (int t : tables) {
      auto rs = nl::ListRoutes(ctr, AF_UNSPEC, t);
      o.container_routes.insert(o.container_routes.end(), rs.begin(), rs.end());
    }
  }
  if (masq) {
    try {
      nat::Verify(*masq);
    } catch (const cni::Error& e) {
      o.nat_problem = e.msg();
    }
  }
  return o;
}

// --- NAT ---

void KernelOps::NatApply(const nat::Spec& spec) { nat::Apply(spec); }
bool KernelOps::NatRemove(const nat::Tag& tag) { return nat::Remove(tag); }
void KernelOps::NatGc(const std::string& network, const std::vector<cni::Attachment>& valid) {
  nat::Gc(network, valid);
}

}  // namespace netiface::bridge
