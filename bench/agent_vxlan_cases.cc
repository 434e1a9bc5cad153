// vxlan: every remote lease is a permanent neighbour (its subnet address -> VtepMAC), an FDB entry
// (VtepMAC -> PublicIP) and a route "<subnet> via <subnet address> dev flannel.1 onlink proto 78".
#include <net/if.h>

#include <iostream>
#include <map>
#include <stdexcept>
#include <thread>

#include <fmt/format.h>

#include "agent_cases.h"
#include "netiface/agent/lease.h"
#include "netiface/netlink/neigh.h"
#include "netiface/netlink/route.h"
#include "netiface/netlink/socket.h"
#include "netiface/netlink/vxlan.h"

namespace netiface::bench::agent {
namespace {

namespace na = netiface::agent;
using std::chrono::microseconds;
using std::chrono::milliseconds;
using std::chrono::seconds;

constexpr char kDevice[] = "flannel.1";

void Log(const std::string& what) { std::cerr << "agent-bench: vxlan: " << what << "\n"; }

std::vector<std::string> RouteKeys(const std::vector<Peer>& peers) {
  std::vector<std::string> out;
  for (const Peer& p : peers) out.push_back(p.dst);
  return out;
}

std::vector<std::string> NeighFdbKeys(const std::vector<Peer>& peers) {
  std::vector<std::string> out;
  for (const Peer& p : peers) {
    out.push_back(NeighKey(p.gw));
    out.push_back(FdbKey(p.vtep_mac));
  }
  return out;
}

nl::VxlanInfo Device(nl::Socket& s) {
  auto d = nl::FindVxlan(s, kDevice);
  if (!d) throw std::runtime_error(std::string("no ") + kDevice + " in the node");
  return *d;
}

// Every peer has its three entries on flannel.1, exactly as planned, read from the kernel by dumps.
void CheckTables(const std::vector<Peer>& peers) {
  nl::Socket s = nl::Socket::Open();
  const int dev = Device(s).index;
  std::map<std::string, nl::RouteInfo> routes;
  for (const nl::RouteInfo& r : nl::ListRoutes(s, AF_INET)) routes[r.dst.ToString()] = r;
  std::map<std::string, std::string> neighs, fdb;
  for (const nl::NeighSpec& n : nl::ListPermanentNeighbors(s, dev)) neighs[n.dst.ToString()] = n.mac;
  for (const nl::FdbSpec& f : nl::ListFdb(s, dev)) fdb[f.mac] = f.dst.ToString();
  for (const Peer& p : peers) {
    auto r = routes.find(p.dst);
    if (r == routes.end() || !r->second.gw || r->second.gw->ToString() != p.gw || r->second.ifindex != dev ||
        r->second.protocol != kProtocol) {
      throw std::runtime_error(
          fmt::format("no route {} via {} dev {} proto {} in the node", p.dst, p.gw, kDevice, kProtocol));
    }
    if (neighs[p.gw] != p.vtep_mac)
      throw std::runtime_error(fmt::format("no neighbour {} lladdr {}", p.gw, p.vtep_mac));
    if (fdb[p.vtep_mac] != p.public_ip)
      throw std::runtime_error(fmt::format("no FDB entry {} dst {}", p.vtep_mac, p.public_ip));
  }
}

void FlushRoutes(Rig& rig) {
  ShOrThrow("ip -n " + rig.node().name() + " route flush proto " + std::to_string(kProtocol));
}
// Deleting the device takes every neighbour, FDB entry and route of it along.
void DeleteDevice(Rig& rig) { ShOrThrow("ip -n " + rig.node().name() + " link del " + kDevice); }

// When the route, neighbour and FDB entry of every one of `peers` were all re-added at or after `t0`.
Clock::time_point WaitEntries(Rig& rig, const std::vector<std::string>& routes, const std::vector<std::string>& neighs,
                              Clock::time_point t0, seconds timeout, const std::string& what) {
  Clock::time_point a = rig.WaitAll(rig.routes(), routes, t0, t0 + timeout, what + " (routes)");
  Clock::time_point b = rig.WaitAll(rig.neighbours(), neighs, t0, t0 + timeout, what + " (neighbours, FDB)");
  return std::max(a, b);
}

}  // namespace

BackendResults RunVxlan(Rig& rig, RemoteNode& remote, const Counts& n, microseconds probe_interval) {
  BackendResults r;
  rig.DropBenchLeases();
  rig.ForgetNode();
  rig.PutConfig(kVxlanConfig);
  MeasureStarts(rig, n, "vxlan", " (flannel.1 created)", &r);

  const std::vector<Peer> others = VxlanOthers(n.others);
  const std::vector<std::string> route_keys = RouteKeys(others), neigh_keys = NeighFdbKeys(others);
  rig.TimeStart({"--reconcile-interval=600"});  // no periodic reconcile falls into an event
  {
    nl::Socket s = nl::Socket::Open();
    const std::string subnet = rig.SubnetEnvValue("FLANNEL_SUBNET");
    remote.RouteBackVxlan(subnet, Device(s).mac);
    LocalPod pod(rig, subnet);
    Pinger pinger(pod.path());
    EventWatch watch(Rig::ClientOptions(), na::SubnetsPrefix(na::kDefaultPrefix));
    auto expect = [&](const Peer& p) {
      return std::vector<Expected>{{&rig.neighbours(), NeighKey(p.gw), p.vtep_mac},
                                   {&rig.neighbours(), FdbKey(p.vtep_mac), p.public_ip},
                                   {&rig.routes(), p.dst, p.gw}};
    };
    Log("remote lease -> entries -> echo reply, 0 other leases");
    MeasureEvents(rig, watch, pinger, RemoteNodePeers(210, n.n_event, true), expect, probe_interval, &r.events_0);
    Log(fmt::format("writing {} vxlan leases of other nodes", n.others));
    Clock::time_point t0 = Clock::now();
    r.bulk_write_ms = rig.WriteLeases(others);
    r.bulk_programmed_ms =
        Ms(WaitEntries(rig, route_keys, neigh_keys, t0, seconds(120), "entries of the bulk leases") - t0);
    CheckTables(others);
    Log(fmt::format("remote lease -> entries -> echo reply, {} other leases", n.others));
    MeasureEvents(rig, watch, pinger, RemoteNodePeers(211, n.n_event, true), expect, probe_interval, &r.events_n);
  }
  rig.StopAgent();

  const std::vector<std::string> flags = {"--log-level=debug", "--reconcile-interval=1"};
  Log(fmt::format("start with {} leases -> all entries, {} runs", n.others, n.n_bulk_start));
  Clock::time_point all_in;
  for (int i = 0; i < n.n_bulk_start; ++i) {
    if (i > 0) rig.StopAgent();
    DeleteDevice(rig);
    nl::Socket s = nl::Socket::Open();
    for (const nl::RouteInfo& route : nl::ListRoutes(s, AF_INET)) {
      if (route.protocol == kProtocol) throw std::runtime_error("a route of proto 78 outlived " + std::string(kDevice));
    }
    FileWatch w(rig.dir().path(), "subnet.env");
    Clock::time_point t0 = Clock::now();
    rig.StartAgent(flags);
    all_in = WaitEntries(rig, route_keys, neigh_keys, t0, seconds(60), "entries after a start");
    r.start_all.push_back(Ms(all_in - t0));
    r.start_restart_others.push_back(Ms(rig.WaitSubnetEnv(t0 + seconds(30), w) - t0));
  }
  CheckTables(others);

  ReconcileTail tail(rig.agent_log());
  Log(fmt::format("steady-state reconciles, {}", n.n_steady));
  r.steady = SteadyReconciles(rig, tail, n.n_steady, all_in, &r.steady_peers);
  Log(fmt::format("repairs after deleting every route, {}", n.n_repair));
  r.repair_flush = Repairs(
      rig, tail, n.n_repair, [&] { FlushRoutes(rig); },
      [&](Clock::time_point t0) {
        return rig.WaitAll(rig.routes(), route_keys, t0, t0 + seconds(10), "routes after the flush");
      });
  CheckTables(others);
  Log(fmt::format("repairs after deleting {}, {}", kDevice, n.n_repair));
  r.repair_device = Repairs(
      rig, tail, n.n_repair, [&] { DeleteDevice(rig); },
      [&](Clock::time_point t0) {
        return WaitEntries(rig, route_keys, neigh_keys, t0, seconds(10), "entries after the delete");
      });
  CheckTables(others);
  rig.StopAgent();
  r.stop = rig.TakeStops();
  return r;
}

}  // namespace netiface::bench::agent
