// The loopback CNI plugin: a drop-in for the reference loopback, spec 1.1 STATUS and GC.
#include "netiface/loopback/loopback.h"

int main(int argc, char** argv) {
  return netiface::cni::PluginMain(netiface::loopback::Funcs(), {"netiface loopback plugin: lo up in the netns"}, argc,
                                   argv);
}
