// Test helpers for the etcd client: a failure's kind as a value, and a WatchPrefix running in a thread.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "netiface/etcd/client.h"

namespace netiface::etcd {

// The failure's kind and message, kind -1 when `f` did not throw an Error.
struct Failure {
  int kind = -1;
  std::string message;
  int grpc_code = 0;
};
template <typename F>
Failure FailureOf(F f) {
  try {
    f();
  } catch (const Error& e) {
    return {e.kind(), e.what(), e.grpc_code()};
  }
  return {};
}

// A WatchPrefix running in a thread, collecting what it hears until stopped.
class Watcher {
 public:
  Watcher(Client& client, std::string prefix, int64_t start_revision)
      : thread_([this, &client, prefix, start_revision] {
          try {
            client.WatchPrefix(
                prefix, start_revision,
                [this](const WatchResponse& r) {
                  std::lock_guard lock(mu_);
                  responses_.push_back(r);
                  for (const auto& e : r.events) events_.push_back(e);
                  cv_.notify_all();
                  return !stop_after_events_ || events_.size() < stop_after_events_;
                },
                &stop_);
          } catch (const Error& e) {
            std::lock_guard lock(mu_);
            error_ = Failure{e.kind(), e.what(), e.grpc_code()};
          }
          std::lock_guard lock(mu_);
          ended_ = true;
          ended_at_ = std::chrono::steady_clock::now();
          cv_.notify_all();
        }) {}
  ~Watcher() { Stop(); }

  // Makes on_response return false once `n` events arrived. Call before they can arrive.
  void StopAfterEvents(size_t n) {
    std::lock_guard lock(mu_);
    stop_after_events_ = n;
  }
  bool WaitCreated(std::chrono::milliseconds timeout = std::chrono::seconds(5)) {
    return Wait(timeout, [&] { return !responses_.empty() && responses_[0].created; });
  }
  bool WaitEvents(size_t n, std::chrono::milliseconds timeout = std::chrono::seconds(5)) {
    return Wait(timeout, [&] { return events_.size() >= n; });
  }
  bool WaitEnded(std::chrono::milliseconds timeout = std::chrono::seconds(5)) {
    return Wait(timeout, [&] { return ended_; });
  }
  void Stop() {
    stop_ = true;
    if (thread_.joinable()) thread_.join();
  }
  void RequestStop() { stop_ = true; }
  std::chrono::steady_clock::time_point ended_at() {
    std::lock_guard lock(mu_);
    return ended_at_;
  }
  std::vector<Event> events() {
    std::lock_guard lock(mu_);
    return events_;
  }
  std::vector<WatchResponse> responses() {
    std::lock_guard lock(mu_);
    return responses_;
  }
  Failure error() {
    std::lock_guard lock(mu_);
    return error_;
  }

 private:
  bool Wait(std::chrono::milliseconds timeout, const std::function<bool()>& done) {
    std::unique_lock lock(mu_);
    return cv_.wait_for(lock, timeout, [&] { return done() || ended_; }) && done();
  }

  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<WatchResponse> responses_;
  std::vector<Event> events_;
  size_t stop_after_events_ = 0;
  Failure error_;
  bool ended_ = false;
  std::chrono::steady_clock::time_point ended_at_;
  std::atomic<bool> stop_{false};
  std::thread thread_;  // last: starts after every member above exists
};

inline std::vector<std::string> Keys(const std::vector<Event>& events) {
  std::vector<std::string> keys;
  for (const auto& e : events) keys.push_back((e.type == EventType::kPut ? "PUT " : "DELETE ") + e.kv.key);
  return keys;
}

}  // namespace netiface::etcd
