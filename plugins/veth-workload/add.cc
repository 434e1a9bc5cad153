#include <functional>
#include <optional>
#include <utility>

#include "netiface/cni/error.h"
#include "netiface/cni/log.h"
#include "netiface/cni/undo.h"
#include "netiface/veth_workload/naming.h"
#include "netiface/veth_workload/veth_workload.h"

namespace netiface::veth_workload {

cni::Result Add(const cni::CmdArgs& args, Ops& ops) {
  // 1. Everything is validated before the first change.
  Config c = ParseConfig(args.conf);
  Identity id = ParseIdentity(args, ResolveNodename(c));
  AddRequest req = ParseAddRequest(c, args);
  ops.Prepare(id.ifname);

  // An exec'd IPAM ADD runs in its own process while this one creates the pair: the allocation and the
  // veth creation are the two slowest steps and need nothing from each other. One that is this very
  // executable has run here by the time StartIpamAdd returns (in_process.h).
  // Undos hold copies and a reference to `ops`, which outlives this call.
  cni::UndoStack undo;
  // 2. Addresses: IPAM, unless the request bypasses it. A failed delegated ADD is DELeted too, after it
  // has finished (IpamDel waits for it): a DEL racing its ADD could release before the allocation.
  if (!req.ip_addrs_no_ipam) {
    undo.Push("IPAM DEL", [&ops] { ops.IpamDel(); });
    ops.StartIpamAdd();
  }
  // The addresses are in already when the request bypasses IPAM or IPAM ran in this process: then the
  // link plan knows the attachment's families (and an IPAM failure comes before any kernel change).
  std::optional<cni::Result> ipam;
  if (req.ip_addrs_no_ipam) {
    ipam = NoIpamResult(*req.ip_addrs_no_ipam);
  } else if (ops.IpamAddFinished()) {
    ipam = ops.WaitIpamAdd();
  }
  Plan plan = MakeLinkPlan(c, id, req, args.netns, ipam ? &*ipam : nullptr);

  // 3. A host veth of the same name is a leftover of an earlier sandbox of this workload.
  if (ops.DeleteHostVeth(plan.host_veth)) log::Info("veth-workload: deleted stale host veth {}", plan.host_veth);

  // 4. The pair (deleting the host end removes both ends, their addresses, routes and sysctls).
  undo.Push("delete veth " + plan.host_veth, [&ops, veth = plan.host_veth] { ops.DeleteHostVeth(veth); });
  const std::string container_mac = ops.CreateVeth(plan);
  ops.DraftRecord(RecordFolder(plan.id), plan.endpoint_name);

  // 5-6. Everything that follows from the addresses.
  if (!ipam) ipam = ops.WaitIpamAdd();
  PlanAddresses(plan, c, req, *ipam);
  ops.ConfigureContainer(plan);
  ops.ConfigureHost(plan);

  // 7. NAT: one nftables transaction, all or nothing, so its undo comes once it succeeded (pushed before,
  // the undo of a failed apply would remove a pre-existing empty chain along with rules it never made).
  if (plan.nat) {
    ops.NatApply(plan.nat_spec);
    undo.Push("remove NAT rules", [&ops, tag = plan.nat_spec.tag] { ops.NatRemove(tag); });
  }

  // 8. The endpoint record, then the result.
  const EndpointRecord record = BuildRecord(plan, container_mac);
  undo.Push("remove endpoint record", [&ops, folder = record.Folder(), name = record.name, cid = record.container_id,
                                       ifname = record.ifname] { ops.RemoveRecord(folder, name, cid, ifname); });
  ops.WriteRecord(record);

  undo.Dismiss();
  return BuildResult(plan, container_mac);
}

}  // namespace netiface::veth_workload
