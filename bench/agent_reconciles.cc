// The reconcile measurements both backends share (agent_cases.h).
#include <thread>

#include "agent_cases.h"

namespace netiface::bench::agent {

using std::chrono::milliseconds;
using std::chrono::seconds;

namespace {

// When a logged reconcile began, at the latest (the line was read at most one poll after it was written).
Clock::time_point BeganBy(const ReconcileTail::Line& l) {
  return l.read_at -
         std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double, std::milli>(l.reconcile.ms));
}

}  // namespace

std::vector<double> SteadyReconciles(Rig& rig, ReconcileTail& tail, int n, Clock::time_point after,
                                     std::set<int>* peers) {
  std::vector<double> out;
  while (static_cast<int>(out.size()) < n) {
    ReconcileTail::Line l = rig.NextReconcile(tail, seconds(10));
    if (BeganBy(l) <= after) continue;  // it may have begun before every entry was in
    out.push_back(l.reconcile.ms);
    peers->insert(l.reconcile.peers);
  }
  return out;
}

RepairSamples Repairs(Rig& rig, ReconcileTail& tail, int n, const std::function<void()>& break_it,
                      const std::function<Clock::time_point(Clock::time_point)>& wait_back) {
  RepairSamples out;
  // Right after a reconcile line the next reconcile is ~1 s away: the break falls between two, and the
  // next reconcile is the one that repairs. After its line the same holds again.
  tail.SkipToEnd();
  rig.NextReconcile(tail, seconds(10));
  for (int i = 0; i < n; ++i) {
    Clock::time_point t0 = Clock::now();
    break_it();
    out.action.push_back(Ms(Clock::now() - t0));
    out.back.push_back(Ms(wait_back(t0) - t0));
    ReconcileTail::Line l = rig.NextReconcile(tail, seconds(10));
    while (BeganBy(l) < t0) l = rig.NextReconcile(tail, seconds(10));  // began before the break: not the repair
    out.reconcile.push_back(l.reconcile.ms);
    out.peers.insert(l.reconcile.peers);
  }
  return out;
}

}  // namespace netiface::bench::agent
