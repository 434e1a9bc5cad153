// The host-local IPAM plugin.
// Its entry in the multi-call image (plugins/main.cc): the verbs, the banner, the README's keys.
#include "host_local_keys.h"
#include "netiface/cni/in_process.h"
#include "netiface/host_local/host_local.h"

namespace netiface::host_local {

cni::PluginEntry Entry() {
  cni::PluginInfo info{"netiface host-local IPAM plugin: addresses from range sets, kept on local disk"};
  info.documented_keys = readme::host_local::kDocumentedKeys;
  info.keys_section = "ipam";  // its keys are the ipam object's: the rest is the main plugin's
  return {host_local::Funcs(), info};
}

}  // namespace netiface::host_local
