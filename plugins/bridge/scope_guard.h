// Runs an undo action on scope exit unless dismissed: the rollback of a failed ADD.
#pragma once

#include <functional>
#include <utility>

#include "netiface/cni/log.h"

namespace netiface::bridge {

class ScopeGuard {
 public:
  ScopeGuard() = default;
  explicit ScopeGuard(std::function<void()> undo) : undo_(std::move(undo)) {}
  ScopeGuard(const ScopeGuard&) = delete;
  ScopeGuard& operator=(const ScopeGuard&) = delete;
  // An undo that throws is logged: the original failure is the one reported.
  ~ScopeGuard() {
    if (!undo_) return;
    try {
      undo_();
    } catch (const std::exception& e) {
      log::Error("rollback step failed: {}", e.what());
    }
  }
  void Set(std::function<void()> undo) { undo_ = std::move(undo); }
  void Dismiss() { undo_ = nullptr; }

 private:
  std::function<void()> undo_;
};

}  // namespace netiface::bridge
