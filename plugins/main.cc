// netiface-cni: every plugin of the suite in one static image. Each plugin is a link to it named after the
// plugin (bin/bridge -> netiface-cni), so a runtime execs /opt/cni/bin/bridge as it would any plugin and
// the name it was started by (argv[0]) picks the plugin; `netiface-cni PLUGIN` runs one by name. One image
// instead of nine keeps the suite a quarter of the reference's size while every call still starts a
// static executable, and a delegate that resolves to this image runs in this process
// (libcni/in_process.h): one process start less per delegation (docs/architecture.md, "One image").
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string_view>

#include "netiface/cni/in_process.h"

namespace netiface {
namespace bandwidth {
cni::PluginEntry Entry();
}
namespace bridge {
cni::PluginEntry Entry();
}
namespace firewall {
cni::PluginEntry Entry();
}
namespace flannel {
cni::PluginEntry Entry();
}
namespace host_local {
cni::PluginEntry Entry();
}
namespace loopback {
cni::PluginEntry Entry();
}
namespace portmap {
cni::PluginEntry Entry();
}
namespace tuning {
cni::PluginEntry Entry();
}
namespace veth_workload {
cni::PluginEntry Entry();
}
}  // namespace netiface

namespace {

using netiface::cni::PluginEntry;

struct Plugin {
  std::string_view name;
  PluginEntry (*entry)();
};

constexpr Plugin kPlugins[] = {
    {"bandwidth", netiface::bandwidth::Entry},
    {"bridge", netiface::bridge::Entry},
    {"firewall", netiface::firewall::Entry},
    {"flannel", netiface::flannel::Entry},
    {"host-local", netiface::host_local::Entry},
    {"loopback", netiface::loopback::Entry},
    {"portmap", netiface::portmap::Entry},
    {"tuning", netiface::tuning::Entry},
    {"veth-workload", netiface::veth_workload::Entry},
};

const Plugin* Find(std::string_view name) {
  if (auto slash = name.rfind('/'); slash != std::string_view::npos) name.remove_prefix(slash + 1);
  for (const auto& p : kPlugins) {
    if (p.name == name) return &p;
  }
  return nullptr;
}

std::optional<PluginEntry> Lookup(std::string_view name) {
  const Plugin* p = Find(name);
  if (p == nullptr) return std::nullopt;
  return p->entry();
}

int Run(const Plugin& p, int argc, char** argv) {
  netiface::cni::SetInProcessPlugins(Lookup);
  PluginEntry e = p.entry();
  return netiface::cni::PluginMain(e.funcs, e.info, argc, argv);
}

// Once a call is done its result is out (written to stdout unbuffered) and each log line was flushed
// as it was written: what exit() would still do is undo the libraries' start-up registrations (libnl's
// cache and link types, C++ statics) in memory the kernel frees anyway, ~4% of a routed ADD here.
// std::_Exit leaves that out. A sanitizer build exits normally: its leak check runs at exit.
[[noreturn]] void Finish(int code) {
  std::fflush(nullptr);
#ifdef __SANITIZE_ADDRESS__
  std::exit(code);
#else
  std::_Exit(code);
#endif
}

}  // namespace

int main(int argc, char** argv) {
  if (argc >= 1 && argv[0] != nullptr) {
    if (const Plugin* p = Find(argv[0])) Finish(Run(*p, argc, argv));
  }
  if (argc >= 2) {
    if (const Plugin* p = Find(argv[1])) Finish(Run(*p, argc - 1, argv + 1));
  }
  // Neither: started by its own name. Standard error only: stdout belongs to a CNI result.
  std::fprintf(stderr, "usage: netiface-cni PLUGIN (or a link named after the plugin); plugins:");
  for (const auto& p : kPlugins) std::fprintf(stderr, " %.*s", static_cast<int>(p.name.size()), p.name.data());
  std::fprintf(stderr, "\n");
  return argc >= 2 ? 2 : 0;
}
