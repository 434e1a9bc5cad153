// Timestamps of the kernel's notifications in the namespace the constructing thread is in: a NETLINK_ROUTE
// socket subscribed to multicast groups, read by a thread of its own, keeps for every object (a route's
// destination, a neighbour's address, an FDB entry's MAC) when it was last added or replaced, its value
// (the route's gateway, the neighbour's MAC, the FDB entry's destination) and whether it is still there.
#pragma once

#include <atomic>
#include <condition_variable>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "agent_procs.h"

struct nlmsghdr;

namespace netiface::bench::agent {

// One notification as a KernelMonitor keeps it.
struct KernelChange {
  std::string key;       // "10.1.2.0/24", "neigh 10.1.2.0", "fdb 0e:6e:62:01:00:02"
  std::string value;     // the gateway, the MAC, the destination
  bool present = false;  // added or replaced; false: deleted
};

// Pure parsers of one rtnetlink message; nullopt for a message the monitor ignores.
// IPv4 routes of the main table with `protocol`: key "<dst>/<len>", value the gateway ("" without one).
std::optional<KernelChange> ParseRouteMessage(const nlmsghdr* h, int protocol);
// IPv4 neighbours: key "neigh <ip>", value the MAC, present only while NUD_PERMANENT (an entry the kernel
// is resolving is not the agent's); bridge-family FDB entries that carry a destination (a vxlan's):
// key "fdb <mac>", value the destination.
std::optional<KernelChange> ParseNeighMessage(const nlmsghdr* h);
// The keys ParseNeighMessage uses.
std::string NeighKey(const std::string& ip);
std::string FdbKey(const std::string& mac);

class KernelMonitor {
 public:
  using Parser = std::function<std::optional<KernelChange>(const nlmsghdr*)>;
  // Routes of the main table with `protocol` (RTNLGRP_IPV4_ROUTE).
  static std::unique_ptr<KernelMonitor> Routes(int protocol);
  // Neighbours and FDB entries (RTNLGRP_NEIGH).
  static std::unique_ptr<KernelMonitor> Neighbours();

  // Subscribes to `group` (an RTNLGRP_*). Throws std::runtime_error when the socket cannot be made.
  KernelMonitor(int group, Parser parse);
  ~KernelMonitor();
  KernelMonitor(const KernelMonitor&) = delete;
  KernelMonitor& operator=(const KernelMonitor&) = delete;

  // When `key` was added with `value` at or after `since`; nullopt when that has not happened by `deadline`.
  std::optional<Clock::time_point> WaitAdded(const std::string& key, const std::string& value, Clock::time_point since,
                                             Clock::time_point deadline);
  // True when `key` is gone (or was never seen) by `deadline`.
  bool WaitRemoved(const std::string& key, Clock::time_point deadline);
  // When the last of `keys` was added at or after `since`, once every one of them has been; nullopt at
  // `deadline`.
  std::optional<Clock::time_point> WaitAllAdded(const std::vector<std::string>& keys, Clock::time_point since,
                                                Clock::time_point deadline);
  // Keys present now. (The kernel does not notify every removal: IPv4 routes that go with their device
  // are removed silently. Read the kernel's tables where that matters.)
  size_t Present();
  // Notifications the kernel dropped because the socket's buffer was full (ENOBUFS): when non-zero the
  // monitor's view may be wrong and a measurement relying on it is invalid.
  int overflows() const { return overflows_; }

 private:
  struct Entry {
    Clock::time_point added;
    std::string value;
    bool present = false;
  };
  void Loop();
  void Handle(const char* buf, size_t len, Clock::time_point at);

  Parser parse_;
  int fd_ = -1;
  std::atomic<bool> stop_{false};
  std::atomic<int> overflows_{0};
  std::mutex mu_;
  std::condition_variable cv_;
  std::map<std::string, Entry> entries_;
  std::thread thread_;
};

}  // namespace netiface::bench::agent
