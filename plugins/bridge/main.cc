// The bridge CNI plugin: config-compatible with the reference bridge, spec 1.1 STATUS and GC.
#include "netiface/bridge/bridge.h"

int main(int argc, char** argv) {
  return netiface::cni::PluginMain(netiface::bridge::Funcs(),
                                   {"netiface bridge plugin: L2 bridge + veth, IPAM delegated"}, argc, argv);
}
