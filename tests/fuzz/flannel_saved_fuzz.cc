// A delegate config flannel saved at ADD, as its DEL reads it back (ours, per attachment, or the
// reference plugin's file named by the container ID).
#include <unistd.h>

#include <cstdlib>
#include <fstream>

#include "fuzz_util.h"
#include "netiface/flannel/delegate.h"
#include "netiface/flannel/saved_config.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace netiface;
  static const std::string dir = [] {
    char tmpl[] = "/tmp/netiface-fuzz-flannel-XXXXXX";
    const char* d = ::mkdtemp(tmpl);
    if (d == nullptr) std::abort();
    return std::string(d);
  }();
  const std::string_view in = fuzz::Bytes(data, size);
  std::ofstream(dir + "/ctr1", std::ios::binary | std::ios::trunc)
      .write(in.data(), static_cast<std::streamsize>(in.size()));
  fuzz::Rejects([&] {
    std::optional<flannel::SavedConfig> saved = flannel::LoadSavedConfig(dir, "ctr1", "eth0");
    if (saved && !saved->conf.is_null()) flannel::DelegateType(saved->conf);
  });
  return 0;
}
