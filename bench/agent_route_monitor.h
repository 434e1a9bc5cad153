// Timestamps of the kernel's route notifications: a NETLINK_ROUTE socket subscribed to
// RTNLGRP_IPV4_ROUTE, read by a thread of its own, keeps for every destination of one protocol when it
// was last added (RTM_NEWROUTE), through which gateway, and whether it is still there.
#pragma once

#include <atomic>
#include <condition_variable>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "agent_procs.h"

namespace netiface::bench::agent {

class RouteMonitor {
 public:
  // Subscribes in the namespace the calling thread is in, to routes of the main table with `protocol`.
  // Throws std::runtime_error when the socket cannot be made.
  explicit RouteMonitor(int protocol);
  ~RouteMonitor();
  RouteMonitor(const RouteMonitor&) = delete;
  RouteMonitor& operator=(const RouteMonitor&) = delete;

  // When the route to `dst` ("10.200.3.0/24") via `gw` was added at or after `since`; nullopt when that
  // has not happened by `deadline`.
  std::optional<Clock::time_point> WaitAdded(const std::string& dst, const std::string& gw, Clock::time_point since,
                                             Clock::time_point deadline);
  // True when the route to `dst` is gone (or was never seen) by `deadline`.
  bool WaitRemoved(const std::string& dst, Clock::time_point deadline);
  // When the last of `dsts` was added at or after `since`, once every one of them has been; nullopt at
  // `deadline`.
  std::optional<Clock::time_point> WaitAllAdded(const std::vector<std::string>& dsts, Clock::time_point since,
                                                Clock::time_point deadline);
  // Routes of the protocol present now.
  size_t Present();
  // Notifications the kernel dropped because the socket's buffer was full (ENOBUFS): when non-zero the
  // monitor's view may be wrong and a measurement relying on it is invalid.
  int overflows() const { return overflows_; }

 private:
  struct Entry {
    Clock::time_point added;
    std::string gw;
    bool present = false;
  };
  void Loop();
  void Handle(const char* buf, size_t len, Clock::time_point at);

  int protocol_;
  int fd_ = -1;
  std::atomic<bool> stop_{false};
  std::atomic<int> overflows_{0};
  std::mutex mu_;
  std::condition_variable cv_;
  std::map<std::string, Entry> routes_;
  std::thread thread_;
};

}  // namespace netiface::bench::agent
