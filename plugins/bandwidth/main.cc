// The bandwidth CNI plugin: config-compatible with the reference bandwidth, spec 1.1 STATUS and GC.
#include "netiface/bandwidth/bandwidth.h"

int main(int argc, char** argv) {
  return netiface::cni::PluginMain(
      netiface::bandwidth::Funcs(),
      {"netiface bandwidth plugin: tbf on the host end, ifb for egress", {"0.3.0", "0.3.1", "0.4.0", "1.0.0", "1.1.0"}},
      argc, argv);
}
