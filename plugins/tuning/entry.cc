// The tuning CNI plugin: config-compatible with the reference tuning, spec 1.1 STATUS and GC.
// Its entry in the multi-call image (plugins/main.cc): the verbs, the banner, the README's keys.
#include "netiface/cni/in_process.h"
#include "netiface/tuning/tuning.h"
#include "tuning_keys.h"

namespace netiface::tuning {

cni::PluginEntry Entry() {
  cni::PluginInfo info{"netiface tuning plugin: sysctls and link attributes in the netns"};
  info.documented_keys = readme::tuning::kDocumentedKeys;
  return {tuning::Funcs(), info};
}

}  // namespace netiface::tuning
