// The tuning CNI plugin: config-compatible with the reference tuning, spec 1.1 STATUS and GC.
#include "netiface/tuning/tuning.h"

int main(int argc, char** argv) {
  return netiface::cni::PluginMain(netiface::tuning::Funcs(),
                                   {"netiface tuning plugin: sysctls and link attributes in the netns"}, argc, argv);
}
