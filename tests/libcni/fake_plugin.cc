// A minimal plugin on skel, for tests of the real process edge (environment, stdin, stdout, exit code).
// ADD returns one address on CNI_IFNAME; CHECK fails with kUnknownContainer; DEL, STATUS and GC succeed.
#include "netiface/cni/error.h"
#include "netiface/cni/skel.h"

namespace cni = netiface::cni;

int main(int argc, char** argv) {
  cni::PluginFuncs funcs;
  funcs.add = [](const cni::CmdArgs& args) {
    cni::Result r;
    r.interfaces = {{args.ifname, "0a:00:00:00:00:01", args.netns, std::nullopt, "", ""}};
    r.ips = {{0, *cni::IpNet::Parse("10.9.0.2/24"), cni::IpAddr::Parse("10.9.0.1")}};
    r.routes = {{*cni::IpNet::Parse("0.0.0.0/0"), std::nullopt}};
    return r;
  };
  funcs.del = [](const cni::CmdArgs&) {};
  funcs.check = [](const cni::CmdArgs& args) {
    throw cni::Error(cni::kUnknownContainer, "no such container", args.container_id);
  };
  cni::PluginInfo info;
  info.about = "CNI fake plugin (netiface libcni tests)";
  return cni::PluginMain(funcs, info, argc, argv);
}
