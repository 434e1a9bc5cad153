// ADD as numbered steps over Ops, each pushing its undo before it runs (a request may take effect and
// still report a failure). That is safe because step 1 made sure that none of what the steps make was
// there before: an undo can only remove what this ADD made.
#include <linux/pkt_sched.h>

#include "netiface/bandwidth/bandwidth.h"
#include "netiface/cni/error.h"
#include "netiface/cni/log.h"
#include "netiface/cni/undo.h"

namespace netiface::bandwidth {

void RequireInPrevResult(const cni::Result& prev, const std::string& peer) {
  for (const cni::Interface& i : prev.interfaces) {
    if (i.sandbox.empty() && i.name == peer) return;
  }
  throw cni::Error(cni::kInvalidConfig, "no veth peer of the container interface found in prevResult", peer);
}

cni::Result Add(const cni::CmdArgs& args, Ops& ops) {
  // 1. Everything that can be judged without changing anything.
  const Config c = ParseConfig(args.conf);
  if (!args.conf.prev_result) throw cni::Error(cni::kInvalidConfig, "must be called as a chained plugin");
  cni::Result result = *args.conf.prev_result;
  if (!c.ingress.active() && !c.egress.active()) return result;
  const double tpu = ops.TicksPerUsec();
  const std::optional<nl::TbfParams> in = c.ingress.active() ? std::optional(PlanTbf(c.ingress, tpu)) : std::nullopt;
  const std::optional<nl::TbfParams> out = c.egress.active() ? std::optional(PlanTbf(c.egress, tpu)) : std::nullopt;
  const std::optional<nl::LinkInfo> host = ops.HostPeer(args.ifname);
  if (!host) throw cni::Error(cni::kInvalidEnv, "container interface " + args.ifname + " has no veth peer in the host");
  RequireInPrevResult(result, host->name);
  const int host_index = host->index;
  const std::string ifb_name = IfbName(c.network, args.container_id);
  const Observed before = ops.Observe(host_index, ifb_name);
  for (const nl::QdiscInfo& q : before.host_qdiscs) {
    // The kernel's default root qdisc has handle 0; any other was configured by someone.
    if (in && q.parent == TC_H_ROOT && q.handle != 0) {
      throw cni::Error(cni::kInvalidConfig, host->name + " already has a root qdisc", q.kind);
    }
    if (out && q.kind == "ingress") throw cni::Error(cni::kInvalidConfig, host->name + " already has an ingress qdisc");
  }
  if (out && before.ifb) throw cni::Error(cni::kInvalidConfig, "link " + ifb_name + " already exists");
  cni::UndoStack undo;  // undos hold copies and a reference to `ops`, which outlives this call

  // 2. Ingress: the token bucket as the host end's root qdisc.
  if (in) {
    undo.Push("delete root qdisc of " + host->name, [&ops, host_index] { ops.DeleteRootQdisc(host_index); });
    ops.AddRootTbf(host_index, *in);
  }
  if (out) {
    // 3. The ifb (its qdisc goes with it).
    undo.Push("delete ifb " + ifb_name, [&ops, ifb_name] { ops.DeleteLink(ifb_name); });
    const nl::LinkInfo ifb = ops.CreateIfb(ifb_name, host->mtu);
    // 4. The host end's ingress qdisc (its filters go with it), 5. the redirect to the ifb.
    undo.Push("delete ingress qdisc of " + host->name, [&ops, host_index] { ops.DeleteIngressQdisc(host_index); });
    ops.AddIngressQdisc(host_index);
    ops.AddRedirect(host_index, ifb.index);
    // 6. The token bucket on the ifb.
    ops.AddRootTbf(ifb.index, *out);
    result.interfaces.push_back(cni::Interface{ifb_name, ifb.mac});
  }
  // 7. What skel prints must be printable while the undos still run.
  cni::ResultToJson(result, c.cni_version);
  undo.Dismiss();
  log::Debug("ADD done");
  return result;
}

}  // namespace netiface::bandwidth
