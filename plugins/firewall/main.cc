// The firewall CNI plugin: config-compatible with the reference firewall (iptables backend semantics,
// in nftables), spec 1.1 STATUS and GC.
#include "netiface/firewall/firewall.h"

int main(int argc, char** argv) {
  return netiface::cni::PluginMain(netiface::firewall::Funcs(),
                                   {"netiface firewall plugin: forwarding accepts and bridge isolation in nftables",
                                    {"0.3.0", "0.3.1", "0.4.0", "1.0.0", "1.1.0"}},
                                   argc, argv);
}
