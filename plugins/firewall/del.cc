// DEL, GC and the verb table. DEL needs no prevResult: the rules are found by tag.
#include <memory>

#include "netiface/cni/verbs.h"
#include "netiface/firewall/config.h"
#include "netiface/firewall/firewall.h"
#include "netiface/firewall/kernel_ops.h"

namespace netiface::firewall {

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

}  // namespace netiface::firewall
