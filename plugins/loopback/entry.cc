// The loopback CNI plugin: a drop-in for the reference loopback, spec 1.1 STATUS and GC.
// Its entry in the multi-call image (plugins/main.cc): the verbs, the banner, the README's keys.
#include "loopback_keys.h"
#include "netiface/cni/in_process.h"
#include "netiface/loopback/loopback.h"

namespace netiface::loopback {

cni::PluginEntry Entry() {
  cni::PluginInfo info{"netiface loopback plugin: lo up in the netns"};
  info.documented_keys = readme::loopback::kDocumentedKeys;
  return {loopback::Funcs(), info};
}

}  // namespace netiface::loopback
