// flanneld's subnet.env as the flannel plugin reads it.
#include "fuzz_util.h"
#include "netiface/flannel/subnet_env.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace netiface;
  fuzz::Rejects([&] { flannel::ParseSubnetEnv(fuzz::Bytes(data, size), "/run/flannel/subnet.env"); });
  return 0;
}
