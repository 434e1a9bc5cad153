#include "netiface/cni/skel.h"
#include "netiface/veth_workload/veth_workload.h"

int main(int argc, char** argv) {
  return netiface::cni::PluginMain(netiface::veth_workload::Funcs(), netiface::veth_workload::Info(), argc, argv);
}
