// Fault injection for the doubles of a plugin's Ops: every call goes through Step(name, effect), which
// records the call and, for the first call named fail_at, throws cni::Error(kNetlink) before its
// effect or (fail_after) after it took effect. A rollback test loops fail_at over every step.
#pragma once

#include <algorithm>
#include <string>
#include <vector>

#include "netiface/cni/error.h"

namespace netiface::testing {

class FaultSteps {
 public:
  std::string fail_at;
  bool fail_after = false;
  bool fired = false;
  std::vector<std::string> calls;

  template <typename F>
  void Step(const std::string& name, F&& effect) {
    calls.push_back(name);
    bool fail = !fired && name == fail_at;
    fired = fired || fail;
    if (fail && !fail_after) throw cni::Error(cni::kNetlink, "injected failure before " + name);
    effect();
    if (fail) throw cni::Error(cni::kNetlink, "injected failure after " + name);
  }
  void Step(const std::string& name) {
    Step(name, [] {});
  }
  int Count(const std::string& call) const { return static_cast<int>(std::count(calls.begin(), calls.end(), call)); }
};

}  // namespace netiface::testing
