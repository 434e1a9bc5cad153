// DEL, GC and the verb table. DEL needs neither prevResult nor the mappings: the rules are found by tag.
#include <memory>

#include "netiface/cni/log.h"
#include "netiface/cni/verbs.h"
#include "netiface/portmap/config.h"
#include "netiface/portmap/kernel_ops.h"
#include "netiface/portmap/portmap.h"

namespace netiface::portmap {

void Del(const cni::CmdArgs& args, Ops& ops) {
  const Config c = ParseConfig(args.conf);
  ops.Remove({c.network, args.container_id, args.ifname});
}

void Gc(const cni::CmdArgs& args, Ops& ops) {
  const Config c = ParseConfig(args.conf);
  // Without a valid list nothing is known to be stale: keep every rule.
  if (args.conf.valid_attachments) ops.Gc(c.network, *args.conf.valid_attachments);
}

cni::PluginFuncs Funcs() {
  return cni::BindVerbs<Ops>([](const cni::CmdArgs&) { return std::make_unique<KernelOps>(); },
                             {.add = Add, .del = Del, .check = Check, .gc = Gc});
}

}  // namespace netiface::portmap
