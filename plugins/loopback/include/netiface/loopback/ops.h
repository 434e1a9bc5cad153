// Everything the loopback verbs change or read outside their own memory: the link "lo" of CNI_NETNS.
// KernelOps (kernel_ops.h) is the real one; the unit tests use an in-memory double that can fail any call.
#pragma once

#include <vector>

#include "netiface/cni/ip.h"

namespace netiface::loopback {

// lo as the kernel reports it: what ADD reports and CHECK compares.
struct Observed {
  bool up = false;             // IFF_UP
  std::vector<cni::IpNet> v4;  // lo's IPv4 addresses, in the kernel's order
  std::vector<cni::IpNet> v6;  // lo's IPv6 addresses, in the kernel's order
};

class Ops {
 public:
  virtual ~Ops() = default;
  // lo of CNI_NETNS. Throw cni::Error(kInvalidEnv) naming CNI_NETNS when the namespace does not exist.
  virtual Observed Observe() = 0;
  virtual void SetUp() = 0;
  // Returns false when the namespace is gone (nothing to do), as the reference's DEL tolerates.
  virtual bool SetDown() = 0;
};

}  // namespace netiface::loopback
