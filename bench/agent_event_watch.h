// The bench's own etcd watch on the leases: when each PUT reached a watcher in the node namespace, so
// that the lease-to-route latency splits into etcd's part (Put to watch event) and the agent's (watch
// event to route).
#pragma once

#include <atomic>
#include <condition_variable>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include "agent_procs.h"
#include "netiface/etcd/client.h"

namespace netiface::bench::agent {

class EventWatch {
 public:
  // Watches [prefix, PrefixRangeEnd(prefix)) from now on a thread of its own, with its own client, in
  // the namespace of the calling thread. Returns once the watch is created; throws std::runtime_error
  // when it is not within 10 s.
  EventWatch(const etcd::ClientOptions& options, const std::string& prefix);
  ~EventWatch();
  EventWatch(const EventWatch&) = delete;
  EventWatch& operator=(const EventWatch&) = delete;

  // When the last PUT of `key` arrived at or after `since`; nullopt when none did by `deadline`.
  std::optional<Clock::time_point> WaitPut(const std::string& key, Clock::time_point since, Clock::time_point deadline);
  // The watch failed (etcd unreachable, canceled): its error, "" while it runs.
  std::string error();

 private:
  etcd::Client client_;
  std::atomic<bool> stop_{false};
  std::mutex mu_;
  std::condition_variable cv_;
  bool created_ = false;
  std::string error_;
  std::map<std::string, Clock::time_point> puts_;
  std::thread thread_;
};

}  // namespace netiface::bench::agent
