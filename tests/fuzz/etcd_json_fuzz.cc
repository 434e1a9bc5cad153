// What etcd's JSON gateway answers, as the client decodes it: range, txn, lease grant and TTL
// responses, a watch stream line, and base64 values.
#include "fuzz_util.h"
#include "netiface/etcd/codec.h"
#include "netiface/etcd/types.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace netiface;
  const std::string_view in = fuzz::Bytes(data, size);
  fuzz::Rejects<etcd::Error>([&] { etcd::ParseWatchLine(in); });
  fuzz::Rejects<etcd::Error>([&] { etcd::Base64Decode(in); });
  const nlohmann::json j = fuzz::Json(in);
  if (j.is_discarded()) return 0;
  fuzz::Rejects<etcd::Error>([&] { etcd::ParseRangeResponse(j); });
  fuzz::Rejects<etcd::Error>([&] { etcd::ParseTxnResponse(j); });
  fuzz::Rejects<etcd::Error>([&] { etcd::ParseLeaseGrantResponse(j); });
  fuzz::Rejects<etcd::Error>([&] { etcd::ParseLeaseTimeToLiveResponse(j); });
  return 0;
}
