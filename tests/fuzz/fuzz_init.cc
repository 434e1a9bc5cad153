// Linked into every harness: nothing is logged (a rejected input is the common case, and a line per
// execution would be most of the run's time), and no log file is opened: the environment overrides what
// skel configures for each call (log.h), so nothing reaches the machine's /var/log/netiface.
#include <cstdint>
#include <cstdlib>

#include "netiface/cni/log.h"

extern "C" int LLVMFuzzerInitialize(int* /*argc*/, char*** /*argv*/) {
  netiface::log::SetLevel(netiface::log::Level::kOff);
  ::setenv(netiface::log::kLevelEnv, "none", 1);
  ::setenv(netiface::log::kFileEnv, "none", 1);
  return 0;
}
