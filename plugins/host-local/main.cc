// The host-local IPAM plugin.
#include "netiface/host_local/host_local.h"

int main(int argc, char** argv) {
  return netiface::cni::PluginMain(netiface::host_local::Funcs(),
                                   {"netiface host-local IPAM plugin: addresses from range sets, kept on local disk"},
                                   argc, argv);
}
