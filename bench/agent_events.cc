// The event measurement both backends share (agent_cases.h).
#include <algorithm>
#include <iostream>
#include <stdexcept>
#include <thread>

#include <fmt/format.h>

#include "agent_cases.h"

namespace netiface::bench::agent {

using std::chrono::milliseconds;
using std::chrono::seconds;

std::vector<Peer> RemoteNodePeers(int second, int n, bool vxlan) {
  std::vector<Peer> out;
  for (int i = 0; i < n; ++i) {
    out.push_back(vxlan ? VxlanPeer(second, i, kRemoteIp, kRemoteMac) : HostGwPeer(second, i, kRemoteIp));
  }
  return out;
}

void MeasureStarts(Rig& rig, const Counts& n, const std::string& backend, const std::string& fresh, BackendResults* r) {
  std::cerr << fmt::format("agent-bench: {}: start -> subnet.env, new node{}, {} runs\n", backend, fresh, n.n_start);
  for (int i = 0; i < n.n_start; ++i) {
    rig.ForgetNode();
    r->start_fresh.push_back(rig.TimeStart({}));
    rig.StopAgent();
  }
  std::cerr << fmt::format("agent-bench: {}: start -> subnet.env, restart with the lease alive, {} runs\n", backend,
                           n.n_start);
  for (int i = 0; i < n.n_start; ++i) {
    r->start_restart.push_back(rig.TimeStart({}));
    rig.StopAgent();
  }
}

void MeasureEvents(Rig& rig, EventWatch& watch, Pinger& pinger, const std::vector<Peer>& peers,
                   const std::function<std::vector<Expected>(const Peer&)>& expect, std::chrono::microseconds interval,
                   EventSamples* out) {
  for (const Peer& p : peers) {
    const std::vector<Expected> entries = expect(p);
    pinger.Start(p.Host(2), interval);
    Clock::time_point t0 = Clock::now();
    rig.client().Put(p.key, p.value, rig.bench_lease());
    Clock::time_point put_done = Clock::now();
    Clock::time_point programmed = t0;
    for (const Expected& e : entries) {
      programmed = std::max(programmed,
                            rig.WhileAgentRuns(t0 + seconds(10), e.key + " " + e.value, [&](Clock::time_point until) {
                              return e.monitor->WaitAdded(e.key, e.value, t0, until);
                            }));
    }
    Pinger::Reply reply =
        rig.WhileAgentRuns(t0 + seconds(10), "an echo reply from " + p.Host(2), [&](Clock::time_point until) {
          auto r = pinger.WaitReply(until);
          if (!r && !pinger.error().empty()) throw std::runtime_error("the bench's pinger: " + pinger.error());
          return r;
        });
    pinger.Stop();
    if (reply.sent < t0) throw std::runtime_error("a probe sent before the Put was answered: the set-up leaks a path");
    std::optional<Clock::time_point> seen = watch.WaitPut(p.key, t0, t0 + seconds(10));
    if (!seen) throw std::runtime_error("the bench's watch did not see the PUT of " + p.key + ": " + watch.error());
    out->put.push_back(Ms(put_done - t0));
    out->watch.push_back(Ms(*seen - t0));
    out->programmed.push_back(Ms(programmed - t0));
    out->agent.push_back(Ms(programmed - *seen));
    out->probe_sent.push_back(Ms(reply.sent - t0));
    out->reply.push_back(Ms(reply.received - t0));
    rig.client().Delete(p.key);
    Clock::time_point deadline = Clock::now() + seconds(10);
    for (const Expected& e : entries) {
      if (!e.monitor->WaitRemoved(e.key, deadline)) {
        throw std::runtime_error(e.key + " still there 10 s after the lease of " + p.dst + " was deleted");
      }
    }
    std::this_thread::sleep_for(milliseconds(20));  // spacing, not synchronisation
  }
}

}  // namespace netiface::bench::agent
