// DEL and the verb table. STATUS and GC have nothing to consult: they succeed.
#include <linux/pkt_sched.h>

#include <memory>

#include "netiface/bandwidth/bandwidth.h"
#include "netiface/bandwidth/kernel_ops.h"
#include "netiface/cni/error_list.h"
#include "netiface/cni/verbs.h"

namespace netiface::bandwidth {

void Del(const cni::CmdArgs& args, Ops& ops) {
  const Config c = ParseConfig(args.conf);
  cni::ErrorList failures;
  const std::string ifb = IfbName(c.network, args.container_id);
  // The host end's qdiscs: only while the container's veth still stands (its deletion takes them along),
  // and only the kinds this plugin adds.
  if (!args.netns.empty()) {
    failures.Run("host end qdiscs", [&] {
      const std::optional<nl::LinkInfo> host = ops.HostPeer(args.ifname);
      if (!host) return;
      const Observed o = ops.Observe(host->index, ifb);
      for (const nl::QdiscInfo& q : o.host_qdiscs) {
        if (q.parent == TC_H_ROOT && q.kind == "tbf" && c.ingress.active()) ops.DeleteRootQdisc(host->index);
        if (q.kind == "ingress" && c.egress.active()) ops.DeleteIngressQdisc(host->index);
      }
    });
  }
  failures.Run("deleting ifb " + ifb, [&] { ops.DeleteLink(ifb); });
  failures.ThrowIfAny("DEL failed");
}

cni::PluginFuncs Funcs() {
  return cni::BindVerbs<Ops>([](const cni::CmdArgs& a) { return std::make_unique<KernelOps>(a); },
                             {.add = Add, .del = Del, .check = Check});
}

}  // namespace netiface::bandwidth
