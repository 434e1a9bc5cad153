// The flannel CNI meta plugin: subnet.env -> bridge + host-local delegate, config-compatible with
// flannel-io/cni-plugin.
#include "netiface/flannel/flannel.h"

int main(int argc, char** argv) {
  return netiface::cni::PluginMain(netiface::flannel::Funcs(),
                                   {"netiface flannel meta plugin: delegates to bridge + host-local"}, argc, argv);
}
