#include "kernel_floor.h"

#include <linux/rtnetlink.h>
#include <sys/socket.h>
#include <time.h>

#include "netiface/cni/ip.h"
#include "netiface/netlink/addr.h"
#include "netiface/netlink/link.h"
#include "netiface/netlink/netns.h"
#include "netiface/netlink/route.h"
#include "netiface/netlink/sysctl.h"

namespace netiface::bench {

using cni::IpAddr;
using cni::IpNet;

static double NowMs() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static IpNet Net(const std::string& s) { return *IpNet::Parse(s); }

FloorReport RunRoutedFloor(int n) {
  NetnsPool pool("nfk" + std::to_string(getpid() % 10000), n);
  nl::Socket host = nl::Socket::Open();
  std::vector<double> add, del;
  for (int i = 0; i < n; ++i) {
    double t0 = NowMs();
    auto ns = nl::NetNs::Open(pool.Path(i));
    nl::Socket ctr = nl::Socket::OpenIn(*ns);
    std::string hname = "nfk" + std::to_string(i);
    nl::CreateVeth(host,
                   {.name = hname, .peer_name = "eth0", .peer_ns = &*ns, .mtu = 1500, .mac = "ee:ee:ee:ee:ee:ee"});
    auto eth0 = nl::FindLink(ctr, "eth0");
    IpAddr ip = IpAddr::V4((10u << 24) | (250u << 16) | static_cast<uint32_t>(i + 2));
    nl::AddAddress(ctr, eth0->index, IpNet::Host(ip));
    nl::SetLinkUp(ctr, "eth0");
    nl::AddRoute(ctr, {.dst = Net("169.254.1.1/32"), .ifindex = eth0->index, .scope = RT_SCOPE_LINK});
    nl::AddRoute(ctr, {.dst = Net("0.0.0.0/0"), .gw = *IpAddr::Parse("169.254.1.1"), .ifindex = eth0->index});
    for (const char* k : {"proxy_arp", "forwarding", "route_localnet"})
      nl::RequireSysctl(nullptr, "net/ipv4/conf/" + hname + "/" + k, "1");
    nl::RequireSysctl(nullptr, "net/ipv4/neigh/" + hname + "/proxy_delay", "0");
    nl::SetLinkUp(host, hname);
    auto hl = nl::FindLink(host, hname);
    nl::AddRoute(host, {.dst = IpNet::Host(ip), .ifindex = hl->index, .scope = RT_SCOPE_LINK});
    add.push_back(NowMs() - t0);
  }
  for (int i = 0; i < n; ++i) {
    double t0 = NowMs();
    nl::DeleteLink(host, "nfk" + std::to_string(i));
    del.push_back(NowMs() - t0);
  }
  return {Summarize(add), Summarize(del)};
}

FloorReport RunBridgeFloor(int n) {
  NetnsPool pool("nfq" + std::to_string(getpid() % 10000), n);
  nl::Socket host = nl::Socket::Open();
  const std::string br = "nfk-br0";
  std::vector<double> add, del;
  for (int i = 0; i < n; ++i) {
    double t0 = NowMs();
    nl::EnsureBridge(host, br, 1500);
    nl::SetLinkUp(host, br);
    auto ns = nl::NetNs::Open(pool.Path(i));
    nl::Socket ctr = nl::Socket::OpenIn(*ns);
    std::string hname = "nfq" + std::to_string(i);
    // As bridge ADD: the host end is a port of the bridge from its create request on.
    const int br_index = nl::FindLink(host, br)->index;
    nl::CreateVeth(host, {.name = hname, .peer_name = "eth0", .peer_ns = &*ns, .mtu = 1500, .master_index = br_index});
    nl::SetLinkUp(host, hname);
    auto eth0 = nl::FindLink(ctr, "eth0");
    IpAddr ip = IpAddr::V4((10u << 24) | (251u << 16) | static_cast<uint32_t>(i + 2));
    nl::AddAddress(ctr, eth0->index, IpNet(ip, 16));
    nl::SetLinkUp(ctr, "eth0");
    nl::AddRoute(ctr,
                 {.dst = Net("0.0.0.0/0"), .gw = *IpAddr::Parse("10.251.0.1"), .ifindex = eth0->index, .onlink = true});
    add.push_back(NowMs() - t0);
  }
  for (int i = 0; i < n; ++i) {
    double t0 = NowMs();
    nl::DeleteLink(host, "nfq" + std::to_string(i));
    del.push_back(NowMs() - t0);
  }
  nl::DeleteLink(host, br);
  return {Summarize(add), Summarize(del)};
}

}  // namespace netiface::bench
