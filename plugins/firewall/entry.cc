// The firewall CNI plugin: config-compatible with the reference firewall (iptables backend semantics,
// in nftables), spec 1.1 STATUS and GC.
// Its entry in the multi-call image (plugins/main.cc): the verbs, the banner, the README's keys.
#include "firewall_keys.h"
#include "netiface/cni/in_process.h"
#include "netiface/firewall/firewall.h"

namespace netiface::firewall {

cni::PluginEntry Entry() {
  cni::PluginInfo info{"netiface firewall plugin: forwarding accepts and bridge isolation in nftables",
                       {"0.3.0", "0.3.1", "0.4.0", "1.0.0", "1.1.0"}};
  info.documented_keys = readme::firewall::kDocumentedKeys;
  return {firewall::Funcs(), info};
}

}  // namespace netiface::firewall
