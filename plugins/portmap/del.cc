// DEL, GC and the verb table. DEL needs neither prevResult nor the mappings: the rules are found by tag.
#include <memory>

#include "netiface/cni/error_list.h"
#include "netiface/cni/log.h"
#include "netiface/cni/verbs.h"
#include "netiface/portmap/config.h"
#include "netiface/portmap/kernel_ops.h"
#include "netiface/portmap/portmap.h"

namespace netiface::portmap {

void Del(const cni::CmdArgs& args, Ops& ops) {
  const Config c = ParseConfig(args.conf);
  cni::ErrorList failures;
  failures.Run("removing the port mappings", [&] { ops.Remove({c.network, args.container_id, args.ifname}); });
  // As the reference: the UDP flows of the removed mappings lose their conntrack entries (and so their
  // translation) now rather than when they time out. Known only when the runtime passes the mappings.
  std::set<uint16_t> udp_ports;
  for (const auto& m : c.mappings) {
    if (m.protocol == "udp") udp_ports.insert(m.host_port);
  }
  if (!udp_ports.empty()) failures.Run("flushing UDP conntrack entries", [&] { ops.FlushUdpConntrack(udp_ports); });
  failures.ThrowIfAny("DEL failed");
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
