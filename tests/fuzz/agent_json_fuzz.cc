// What the agent reads from etcd: the network config (/coreos.com/network/config), a lease's value and
// key, and the vxlan backend's settings.
#include <stdexcept>

#include "fuzz_util.h"
#include "netiface/agent/lease.h"
#include "netiface/agent/network_config.h"
#include "netiface/agent/vxlan_plan.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace netiface;
  const std::string_view in = fuzz::Bytes(data, size);
  fuzz::Rejects<agent::ConfigError>([&] { agent::ParseNetworkConfig(in); });
  fuzz::Rejects<std::invalid_argument>([&] { agent::DecodeLeaseAttrs(in); });
  fuzz::Rejects([&] { agent::ParseSubnetKey(in); });
  const nlohmann::json j = fuzz::Json(in);
  if (!j.is_discarded()) fuzz::Rejects<agent::ConfigError>([&] { agent::ParseVxlanConfig(j); });
  return 0;
}
