// A network config and a conflist, as a plugin reads its stdin and a runtime reads its conf dir.
#include "fuzz_util.h"
#include "netiface/cni/config.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace netiface;
  const std::string_view in = fuzz::Bytes(data, size);
  fuzz::Rejects([&] { cni::ParseNetConf(in); });
  fuzz::Rejects([&] { cni::ParseNetConfList(in); });
  return 0;
}
