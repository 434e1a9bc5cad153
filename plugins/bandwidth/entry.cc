// The bandwidth CNI plugin: config-compatible with the reference bandwidth, spec 1.1 STATUS and GC.
// Its entry in the multi-call image (plugins/main.cc): the verbs, the banner, the README's keys.
#include "bandwidth_keys.h"
#include "netiface/bandwidth/bandwidth.h"
#include "netiface/cni/in_process.h"

namespace netiface::bandwidth {

cni::PluginEntry Entry() {
  cni::PluginInfo info{"netiface bandwidth plugin: tbf on the host end, ifb for egress",
                       {"0.3.0", "0.3.1", "0.4.0", "1.0.0", "1.1.0"}};
  info.documented_keys = readme::bandwidth::kDocumentedKeys;
  return {bandwidth::Funcs(), info};
}

}  // namespace netiface::bandwidth
