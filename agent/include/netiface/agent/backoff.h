// Exponential backoff between retries: min, 2*min, 4*min, ... capped at max; Reset() after a success.
#pragma once

#include <algorithm>
#include <chrono>

namespace netiface::agent {

class Backoff {
 public:
  using Duration = std::chrono::milliseconds;
  Backoff(Duration min, Duration max) : min_(min), max_(max), next_(min) {}
  // The wait before the next retry; each call doubles the one after it, up to max.
  Duration Next() {
    Duration d = next_;
    next_ = std::min(max_, next_ * 2);
    return d;
  }
  void Reset() { next_ = min_; }

 private:
  Duration min_, max_, next_;
};

}  // namespace netiface::agent
