// The veth-workload CNI plugin: Calico's routed veth dataplane.

// Its entry in the multi-call image (plugins/main.cc): the verbs, the banner, the README's keys.
#include "netiface/cni/in_process.h"
#include "netiface/cni/skel.h"
#include "netiface/veth_workload/veth_workload.h"
#include "veth_workload_keys.h"

namespace netiface::veth_workload {

cni::PluginEntry Entry() {
  cni::PluginInfo info = veth_workload::Info();
  info.documented_keys = readme::veth_workload::kDocumentedKeys;
  return {veth_workload::Funcs(), info};
}

}  // namespace netiface::veth_workload
