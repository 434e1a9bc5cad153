// The portmap CNI plugin: config-compatible with the reference portmap, over nftables.
// Its entry in the multi-call image (plugins/main.cc): the verbs, the banner, the README's keys.
#include "netiface/cni/in_process.h"
#include "netiface/portmap/portmap.h"
#include "portmap_keys.h"

namespace netiface::portmap {

cni::PluginEntry Entry() {
  cni::PluginInfo info{"netiface portmap plugin: published ports over nftables (chained)"};
  info.documented_keys = readme::portmap::kDocumentedKeys;
  return {portmap::Funcs(), info};
}

}  // namespace netiface::portmap
