// ICMP echo probes from inside a namespace (the bench's pod): sent at a fixed interval by a thread of
// their own until the first reply, so that "when did a pod first reach that address" is a time, with the
// interval as its resolution.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include "agent_procs.h"

namespace netiface::bench::agent {

class Pinger {
 public:
  // A raw ICMP socket opened in the namespace at `netns_path` (the calling thread enters it for the
  // socket() call only). Throws std::runtime_error when it cannot.
  explicit Pinger(const std::string& netns_path);
  ~Pinger();  // Stop()
  Pinger(const Pinger&) = delete;
  Pinger& operator=(const Pinger&) = delete;

  struct Reply {
    Clock::time_point sent;      // the first probe that was answered left
    Clock::time_point received;  // its reply was read
    int probes = 0;              // probes of this run up to and including that one
  };
  // Stops a previous run, then sends a probe to `target` (IPv4) now and every `interval` after, until
  // the first reply or Stop(). Replies to an earlier run are ignored.
  void Start(const std::string& target, std::chrono::microseconds interval);
  // The first reply of the current run, waiting until `deadline`; nullopt when none came (or the
  // prober failed: error()).
  std::optional<Reply> WaitReply(Clock::time_point deadline);
  // Stops probing; idempotent.
  void Stop();
  // Why the current run's prober failed (sendto, recv); "" while it is fine.
  std::string error();

 private:
  void Probe(uint32_t target, std::chrono::microseconds interval, uint16_t id);

  int fd_ = -1;
  uint16_t run_ = 0;
  std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;
  std::optional<Reply> reply_;
  std::string error_;
  std::thread thread_;
};

}  // namespace netiface::bench::agent
