// Linked into every harness: nothing is logged (a rejected input is the common case, and a line per
// execution would be most of the run's time).
#include <cstdint>

#include "netiface/cni/log.h"

extern "C" int LLVMFuzzerInitialize(int* /*argc*/, char*** /*argv*/) {
  netiface::log::SetLevel(netiface::log::Level::kOff);
  return 0;
}
