// An in-memory Ops for the loopback verbs: lo's state, every call recorded and any one failed
// (testing::FaultSteps).
#pragma once

#include <optional>

#include "fault_steps.h"
#include "netiface/cni/error.h"
#include "netiface/loopback/ops.h"

namespace netiface::loopback::test {

class FakeOps : public Ops {
 public:
  testing::FaultSteps faults;
  bool netns_exists = true;
  Observed lo{.up = false, .v4 = {*cni::IpNet::Parse("127.0.0.1/8")}, .v6 = {*cni::IpNet::Parse("::1/128")}};

  Observed Observe() override {
    faults.Step("Observe");
    RequireNetns();
    return lo;
  }
  void SetUp() override {
    RequireNetns();
    faults.Step("SetUp", [&] { lo.up = true; });
  }
  bool SetDown() override {
    if (!netns_exists) return false;
    faults.Step("SetDown", [&] { lo.up = false; });
    return true;
  }

 private:
  void RequireNetns() const {
    if (!netns_exists) throw cni::Error(cni::kInvalidEnv, "CNI_NETNS: does not exist");
  }
};

}  // namespace netiface::loopback::test
