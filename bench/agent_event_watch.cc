#include "agent_event_watch.h"

#include <stdexcept>

namespace netiface::bench::agent {

EventWatch::EventWatch(const etcd::ClientOptions& options, const std::string& prefix) : client_(options) {
  thread_ = std::thread([this, prefix] {
    try {
      client_.WatchPrefix(
          prefix, 0,
          [this](const etcd::WatchResponse& r) {
            Clock::time_point at = Clock::now();
            {
              std::lock_guard<std::mutex> lock(mu_);
              if (r.created) created_ = true;
              for (const etcd::Event& e : r.events) {
                if (e.type == etcd::EventType::kPut) puts_[e.kv.key] = at;
              }
              if (r.canceled) error_ = "watch canceled: " + r.cancel_reason;
            }
            cv_.notify_all();
            return true;
          },
          &stop_);
    } catch (const std::exception& e) {
      std::lock_guard<std::mutex> lock(mu_);
      error_ = e.what();
    }
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (error_.empty() && !stop_) error_ = "watch ended";
    }
    cv_.notify_all();
  });
  std::unique_lock<std::mutex> lock(mu_);
  bool ok = cv_.wait_for(lock, std::chrono::seconds(10), [this] { return created_ || !error_.empty(); });
  if (!ok || !created_) {
    std::string why = error_.empty() ? "not created within 10 s" : error_;
    lock.unlock();
    stop_ = true;
    thread_.join();
    throw std::runtime_error("the bench's watch on " + prefix + ": " + why);
  }
}

EventWatch::~EventWatch() {
  stop_ = true;
  if (thread_.joinable()) thread_.join();
}

std::optional<Clock::time_point> EventWatch::WaitPut(const std::string& key, Clock::time_point since,
                                                     Clock::time_point deadline) {
  std::unique_lock<std::mutex> lock(mu_);
  std::optional<Clock::time_point> out;
  cv_.wait_until(lock, deadline, [&] {
    auto it = puts_.find(key);
    if (it != puts_.end() && it->second >= since) out = it->second;
    return out.has_value() || !error_.empty();
  });
  return out;
}

std::string EventWatch::error() {
  std::lock_guard<std::mutex> lock(mu_);
  return error_;
}

}  // namespace netiface::bench::agent
