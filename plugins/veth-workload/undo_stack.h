// The rollback of a failed ADD: each step pushes its undo *before* it runs (an undo must therefore be
// harmless when its step did nothing); on destruction the undos run newest first unless Dismiss()ed.
#pragma once

#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "netiface/cni/log.h"

namespace netiface::veth_workload {

class UndoStack {
 public:
  UndoStack() = default;
  UndoStack(const UndoStack&) = delete;
  UndoStack& operator=(const UndoStack&) = delete;
  // Every undo runs even when an earlier one throws; failures are logged, the original error of the
  // ADD is the one reported.
  ~UndoStack() {
    for (auto it = undos_.rbegin(); it != undos_.rend(); ++it) {
      try {
        it->second();
      } catch (const std::exception& e) {
        log::Error("veth-workload: rollback step \"{}\" failed: {}", it->first, e.what());
      }
    }
  }
  void Push(std::string what, std::function<void()> undo) { undos_.emplace_back(std::move(what), std::move(undo)); }
  void Dismiss() { undos_.clear(); }

 private:
  std::vector<std::pair<std::string, std::function<void()>>> undos_;
};

}  // namespace netiface::veth_workload
