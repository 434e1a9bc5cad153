// CNI_ARGS as each reader takes it: the plugins' CniArgs (host-local's known keys), the runtime's pairs
// (cnitool's rules) and host-local's IPAM config with the requested IPs it carries.
#include "fuzz_util.h"
#include "netiface/cni/config.h"
#include "netiface/cni/runtime/runtime.h"
#include "netiface/ipam/config.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace netiface;
  const std::string_view in = fuzz::Bytes(data, size);
  fuzz::Rejects([&] { cni::CniArgs::Parse(in, {"IP", "MAC", "K8S_POD_NAMESPACE", "K8S_POD_NAME"}); });
  fuzz::Rejects([&] { cni::ParseArgPairs(in); });
  static const cni::NetConf conf = cni::ParseNetConf(
      R"({"cniVersion":"1.0.0","name":"n","type":"x","ipam":{"type":"host-local","ranges":[[{"subnet":"10.1.0.0/16"}],[{"subnet":"fd00::/64"}]]}})");
  fuzz::Rejects([&] { ipam::ParseIpamConfig(conf, in); });
  return 0;
}
