// The bridge CNI plugin: config-compatible with the reference bridge, spec 1.1 STATUS and GC.
// Its entry in the multi-call image (plugins/main.cc): the verbs, the banner, the README's keys.
#include "bridge_keys.h"
#include "netiface/bridge/bridge.h"
#include "netiface/cni/in_process.h"

namespace netiface::bridge {

cni::PluginEntry Entry() {
  cni::PluginInfo info{"netiface bridge plugin: L2 bridge + veth, IPAM delegated"};
  info.documented_keys = readme::bridge::kDocumentedKeys;
  return {bridge::Funcs(), info};
}

}  // namespace netiface::bridge
