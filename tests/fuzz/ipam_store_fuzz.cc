// host-local's store as it reads it back: a reservation file (the reference's "<id>\r\n<ifname>" or a
// bare ID) and the owner index's stamp and shard files. The reservation goes through the real reader
// (a file in a scratch folder, as on disk).
#include <unistd.h>

#include <cstdlib>
#include <fstream>

#include "fuzz_util.h"
#include "netiface/ipam/index.h"
#include "netiface/ipam/store.h"

namespace {

const std::string& Scratch() {
  static const std::string dir = [] {
    char tmpl[] = "/tmp/netiface-fuzz-store-XXXXXX";
    const char* d = ::mkdtemp(tmpl);
    if (d == nullptr) std::abort();
    return std::string(d);
  }();
  return dir;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace netiface;
  const std::string_view in = fuzz::Bytes(data, size);
  ipam::DecodeStamp(in);
  ipam::DecodeShard(in);
  const std::string file = Scratch() + "/10.1.2.3";
  std::ofstream(file, std::ios::binary | std::ios::trunc).write(in.data(), static_cast<std::streamsize>(in.size()));
  fuzz::Rejects([&] { ipam::ReadReservations(Scratch()); });
  return 0;
}
