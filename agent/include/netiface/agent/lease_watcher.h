// Keeps the agent's view of <prefix>/subnets/ current from its own thread: a snapshot, then a watch from
// the snapshot's revision + 1 on one streamed response. Every event of every response is delivered (flanneld
// v0.20 handled only the first of each). A broken connection is resumed from the last revision seen + 1
// with backoff (100 ms doubling to 5 s); a compacted start revision, or a store whose revision went back
// (etcd restored or replaced), is answered with a new snapshot, whose diff the daemon applies.
#pragma once

#include <atomic>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "netiface/agent/lease_view.h"
#include "netiface/agent/registry.h"
#include "netiface/etcd/types.h"

namespace netiface::etcd {
class Client;
}

namespace netiface::agent {

struct WatchUpdate {
  std::optional<LeaseSnapshot> snapshot;  // replaces what is known
  std::vector<LeaseEvent> events;         // in revision order, after the snapshot if both are set
};

// Converts one watch event; nullopt (and a warning in the log) for a key or value that is not a lease.
std::optional<LeaseEvent> ToLeaseEvent(std::string_view prefix, const etcd::Event& e);

class LeaseWatcher {
 public:
  // Starts the thread at once. `sink` is called from that thread, in order; it must not block for long.
  LeaseWatcher(etcd::Client& client, Registry& registry, std::string prefix, std::function<void(WatchUpdate)> sink);
  ~LeaseWatcher();  // Stop()
  LeaseWatcher(const LeaseWatcher&) = delete;
  LeaseWatcher& operator=(const LeaseWatcher&) = delete;
  // Ends the watch and joins the thread: within a fraction of a second while watching, or once a snapshot
  // being listed returns (at most the client's request timeout per endpoint).
  void Stop();

 private:
  void Loop();
  bool SleepFor(std::chrono::milliseconds d);  // false when stopped meanwhile

  etcd::Client& client_;
  Registry& registry_;
  std::string prefix_;
  std::function<void(WatchUpdate)> sink_;
  std::atomic<bool> stop_{false};
  std::mutex mu_;
  std::condition_variable cv_;
  std::thread thread_;
};

}  // namespace netiface::agent
