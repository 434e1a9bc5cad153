// veth-workload's endpoint record, as DEL and GC read it back.
#include "fuzz_util.h"
#include "netiface/veth_workload/endpoint_store.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace netiface;
  const nlohmann::json j = fuzz::Json(fuzz::Bytes(data, size));
  if (j.is_discarded()) return 0;
  fuzz::Rejects([&] {
    veth_workload::EndpointRecord r = veth_workload::RecordFromJson(j);
    // What parsed must survive its own round trip.
    if (!(veth_workload::RecordFromJson(veth_workload::RecordToJson(r)) == r)) std::abort();
  });
  return 0;
}
