// A prevResult (or a delegate's result) at every version, and what parses converted to every version.
#include "fuzz_util.h"
#include "netiface/cni/result.h"
#include "netiface/cni/version.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace netiface;
  const nlohmann::json j = fuzz::Json(fuzz::Bytes(data, size));
  if (j.is_discarded()) return 0;
  auto convert = [](const cni::Result& r) {
    for (std::string_view to : cni::kSupportedVersions) fuzz::Rejects([&] { cni::ResultToJson(r, to); });
  };
  fuzz::Rejects([&] { convert(cni::ParseResult(j)); });
  for (std::string_view v : cni::kSupportedVersions) fuzz::Rejects([&] { convert(cni::ParseResult(j, v)); });
  return 0;
}
