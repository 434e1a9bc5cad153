// host-gw: every remote lease is one route "<subnet> via <PublicIP> dev eth0 proto 78".
#include <net/if.h>

#include <iostream>
#include <map>
#include <stdexcept>
#include <thread>

#include <fmt/format.h>

#include "agent_cases.h"
#include "netiface/agent/lease.h"
#include "netiface/netlink/route.h"
#include "netiface/netlink/socket.h"

namespace netiface::bench::agent {
namespace {

namespace na = netiface::agent;
using std::chrono::milliseconds;
using std::chrono::seconds;

void Log(const std::string& what) { std::cerr << "agent-bench: host-gw: " << what << "\n"; }

std::vector<std::string> Dsts(const std::vector<Peer>& peers) {
  std::vector<std::string> out;
  for (const Peer& p : peers) out.push_back(p.dst);
  return out;
}

// Every peer has exactly its route "<subnet> via <gw> dev eth0 proto 78" in the node's main table.
void CheckTable(const std::vector<Peer>& peers) {
  nl::Socket s = nl::Socket::Open();
  const int eth0 = static_cast<int>(::if_nametoindex("eth0"));
  std::vector<nl::RouteInfo> routes = nl::ListRoutes(s, AF_INET);
  std::map<std::string, const nl::RouteInfo*> by_dst;
  for (const nl::RouteInfo& r : routes) by_dst[r.dst.ToString()] = &r;
  for (const Peer& p : peers) {
    auto it = by_dst.find(p.dst);
    if (it == by_dst.end()) throw std::runtime_error("no route to " + p.dst + " in the node's main table");
    const nl::RouteInfo& r = *it->second;
    if (!r.gw || r.gw->ToString() != p.gw || r.ifindex != eth0 || r.protocol != kProtocol) {
      throw std::runtime_error(fmt::format("route to {} is via {} dev #{} proto {}, expected via {} dev eth0 proto {}",
                                           p.dst, r.gw ? r.gw->ToString() : "-", r.ifindex, r.protocol, p.gw,
                                           kProtocol));
    }
  }
}

void FlushRoutes(Rig& rig) {
  ShOrThrow("ip -n " + rig.node().name() + " route flush proto " + std::to_string(kProtocol));
}

}  // namespace

BackendResults RunHostGw(Rig& rig, RemoteNode& remote, const Counts& n, std::chrono::microseconds probe_interval) {
  BackendResults r;
  MeasureStarts(rig, n, "host-gw", "", &r);

  const std::vector<Peer> others = HostGwOthers(n.others);
  const std::vector<std::string> dsts = Dsts(others);
  rig.TimeStart({"--reconcile-interval=600"});  // no periodic reconcile falls into an event
  {
    const std::string subnet = rig.SubnetEnvValue("FLANNEL_SUBNET");
    remote.RouteBackHostGw(subnet);
    LocalPod pod(rig, subnet);
    Pinger pinger(pod.path());
    EventWatch watch(Rig::ClientOptions(), na::SubnetsPrefix(na::kDefaultPrefix));
    auto expect = [&](const Peer& p) { return std::vector<Expected>{{&rig.routes(), p.dst, p.gw}}; };
    Log("remote lease -> route -> echo reply, 0 other leases");
    MeasureEvents(rig, watch, pinger, RemoteNodePeers(200, n.n_event, false), expect, probe_interval, &r.events_0);
    Log(fmt::format("writing {} leases of other nodes", n.others));
    Clock::time_point t0 = Clock::now();
    r.bulk_write_ms = rig.WriteLeases(others);
    r.bulk_programmed_ms = Ms(rig.WaitAll(rig.routes(), dsts, t0, t0 + seconds(120), "routes of the bulk leases") - t0);
    CheckTable(others);
    Log(fmt::format("remote lease -> route -> echo reply, {} other leases", n.others));
    MeasureEvents(rig, watch, pinger, RemoteNodePeers(201, n.n_event, false), expect, probe_interval, &r.events_n);
  }
  rig.StopAgent();

  const std::vector<std::string> flags = {"--log-level=debug", "--reconcile-interval=1"};
  Log(fmt::format("start with {} leases -> all routes, {} runs", n.others, n.n_bulk_start));
  Clock::time_point all_in;
  for (int i = 0; i < n.n_bulk_start; ++i) {
    if (i > 0) rig.StopAgent();
    FlushRoutes(rig);
    for (Clock::time_point deadline = Clock::now() + seconds(5); rig.routes().Present() != 0;) {
      if (Clock::now() >= deadline) throw std::runtime_error("routes of proto 78 still there 5 s after the flush");
      std::this_thread::sleep_for(milliseconds(5));
    }
    FileWatch w(rig.dir().path(), "subnet.env");
    Clock::time_point t0 = Clock::now();
    rig.StartAgent(flags);
    all_in = rig.WaitAll(rig.routes(), dsts, t0, t0 + seconds(60), "routes after a start");
    r.start_all.push_back(Ms(all_in - t0));
    r.start_restart_others.push_back(Ms(rig.WaitSubnetEnv(t0 + seconds(30), w) - t0));
  }
  CheckTable(others);

  ReconcileTail tail(rig.agent_log());
  Log(fmt::format("steady-state reconciles, {}", n.n_steady));
  r.steady = SteadyReconciles(rig, tail, n.n_steady, all_in, &r.steady_peers);
  Log(fmt::format("repairs after deleting every route, {}", n.n_repair));
  r.repair_flush = Repairs(
      rig, tail, n.n_repair, [&] { FlushRoutes(rig); },
      [&](Clock::time_point t0) {
        return rig.WaitAll(rig.routes(), dsts, t0, t0 + seconds(10), "routes after the flush");
      });
  CheckTable(others);
  rig.StopAgent();
  r.stop = rig.TakeStops();
  return r;
}

}  // namespace netiface::bench::agent
