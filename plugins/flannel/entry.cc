// The flannel CNI meta plugin: subnet.env -> bridge + host-local delegate, config-compatible with
// flannel-io/cni-plugin.
// Its entry in the multi-call image (plugins/main.cc): the verbs, the banner, the README's keys.
#include "flannel_keys.h"
#include "netiface/cni/in_process.h"
#include "netiface/flannel/flannel.h"

namespace netiface::flannel {

cni::PluginEntry Entry() {
  cni::PluginInfo info{"netiface flannel meta plugin: delegates to bridge + host-local"};
  info.documented_keys = readme::flannel::kDocumentedKeys;
  return {flannel::Funcs(), info};
}

}  // namespace netiface::flannel
