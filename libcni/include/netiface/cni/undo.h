// The rollback of a failed ADD, the one every plugin uses. A step pushes its undo *before* it runs, so
// an undo must be harmless when its step did nothing (deleting what is absent is a no-op everywhere in
// this suite). When the stack is destroyed without Dismiss(), the undos run newest first.
//
// An undo owns what it captures: it runs while the verb unwinds, after the locals declared after the
// stack, and possibly those before it, are gone. Capture values (names, tags, paths) by copy; the only
// references an undo may hold are to the request (CmdArgs, owned by skel) and to the verb's Ops, which
// the verb table creates before the verb runs and destroys after it returns (verbs.h).
#pragma once

#include <exception>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "netiface/cni/fault.h"
#include "netiface/cni/log.h"

namespace netiface::cni {

class UndoStack {
 public:
  UndoStack() = default;
  UndoStack(const UndoStack&) = delete;
  UndoStack& operator=(const UndoStack&) = delete;
  // Every undo runs even when an earlier one throws; each failure is logged with the step's name, and
  // the error of the ADD is the one reported.
  ~UndoStack() { RunAll(); }

  // `what` names the undo in the log ("delete veth vethab12cd34"). Each Push and the Dismiss are the
  // points where the test-only fault hook (fault.h) can fail or kill the ADD; a Push's point comes once
  // its undo is on the stack, so a fault there is undone whether the step runs after the Push or ran
  // before it.
  void Push(std::string what, std::function<void()> undo) {
    undos_.emplace_back(std::move(what), std::move(undo));
    fault::Point(undos_.back().first);
  }
  // The ADD succeeded: nothing is undone.
  void Dismiss() {
    fault::Point("done");
    undos_.clear();
  }
  size_t size() const noexcept { return undos_.size(); }

 private:
  void RunAll() noexcept {
    for (auto it = undos_.rbegin(); it != undos_.rend(); ++it) {
      try {
        it->second();
      } catch (const std::exception& e) {
        log::Error("rollback step \"{}\" failed: {}", it->first, e.what());
      } catch (...) {
        log::Error("rollback step \"{}\" failed", it->first);
      }
    }
    undos_.clear();
  }

  std::vector<std::pair<std::string, std::function<void()>>> undos_;
};

}  // namespace netiface::cni
