// The portmap CNI plugin: config-compatible with the reference portmap, over nftables.
#include "netiface/portmap/portmap.h"

int main(int argc, char** argv) {
  return netiface::cni::PluginMain(netiface::portmap::Funcs(),
                                   {"netiface portmap plugin: published ports over nftables (chained)"}, argc, argv);
}
