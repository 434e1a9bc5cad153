// An entry of the runtimes' shared result cache (<cacheDir>/results), as libcni writes it.
#include "fuzz_util.h"
#include "netiface/cni/runtime/cache.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace netiface;
  fuzz::Rejects([&] { cni::DecodeCacheEntry(fuzz::Bytes(data, size)); });
  return 0;
}
