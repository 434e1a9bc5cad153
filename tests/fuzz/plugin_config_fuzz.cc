// A network config as each plugin reads it after skel's parse: the plugin's own keys, host-local's
// IPAM section, veth-workload's identity and address request from the config and CNI_ARGS (the part
// after a NUL).
#include "fuzz_util.h"
#include "netiface/bridge/config.h"
#include "netiface/cni/skel.h"
#include "netiface/firewall/config.h"
#include "netiface/flannel/delegate.h"
#include "netiface/ipam/config.h"
#include "netiface/portmap/config.h"
#include "netiface/tuning/config.h"
#include "netiface/veth_workload/config.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace netiface;
  // Named copies: clang 14 does not let lambdas capture structured bindings.
  const auto parts = fuzz::Split(fuzz::Bytes(data, size));
  const std::string_view conf_text = parts.first, cni_args = parts.second;
  cni::NetConf conf;
  try {
    conf = cni::ParseNetConf(conf_text);
  } catch (const cni::Error&) {
    return 0;
  }
  fuzz::Rejects([&] { bridge::ParseConfig(conf); });
  fuzz::Rejects([&] { firewall::ParseConfig(conf); });
  fuzz::Rejects([&] { flannel::ParseConfig(conf); });
  fuzz::Rejects([&] { portmap::ParseConfig(conf); });
  fuzz::Rejects([&] { tuning::ParseConfig(conf, cni_args, "eth0"); });
  fuzz::Rejects([&] { ipam::ParseIpamConfig(conf, cni_args); });
  fuzz::Rejects([&] {
    veth_workload::Config c = veth_workload::ParseConfig(conf);
    cni::CmdArgs args;
    args.container_id = "ctr1";
    args.ifname = "eth0";
    args.netns = "/run/netns/x";
    args.args = std::string(cni_args);
    args.conf = conf;
    veth_workload::ParseIdentity(args, "node1");
    veth_workload::ParseAddRequest(c, args);
  });
  return 0;
}
