// ADD as numbered steps over Ops: each step that changes something pushes its undo first, and a failure
// at any step unwinds all of them (cni::UndoStack).
#include <utility>

#include "netiface/bridge/bridge.h"
#include "netiface/bridge/config.h"
#include "netiface/bridge/plan.h"
#include "netiface/cni/log.h"
#include "netiface/cni/undo.h"

namespace netiface::bridge {

cni::Result Add(const cni::CmdArgs& args, Ops& ops) {
  // 1. Everything that can be judged without changing anything.
  const Config c = ParseConfig(args.conf);
  ValidateForAdd(c);
  const std::string mac = RequestedMac(args.conf, args.args);
  ops.Prepare(args.ifname);

  cni::UndoStack undo;  // undos hold copies and a reference to `ops`, which outlives this call
  // 2. IPAM ADD runs in its own process while the bridge and the pair are set up: they need nothing from
  // each other. Its undo waits for it before the DEL, so the release never races the allocation.
  if (!c.ipam_type.empty()) {
    undo.Push("IPAM DEL", [&ops] { ops.IpamDel(); });
    ops.StartIpamAdd();
  }

  // 3. The bridge (shared: never undone).
  const nl::LinkInfo br = ops.EnsureBridge(c);

  // 4. The pair; deleting the host end takes the container end along.
  std::string host_veth = ops.CreateVeth(c, br, args.ifname, mac);
  undo.Push("delete veth " + host_veth, [&ops, host_veth] { ops.DeleteHostVeth(host_veth); });

  // 5. The addresses.
  const cni::Result ipam_result = c.ipam_type.empty() ? cni::Result{} : ops.WaitIpamAdd();
  const Plan plan = MakePlan(c, ipam_result);

  // 6. The container's addresses and routes, 7. the gateway on the bridge (shared: never undone).
  ops.ConfigureContainer(c, args.ifname, plan);
  ops.ConfigureGateway(c, br, plan);

  // 8. Masquerade: one nftables transaction, so a failed NatApply leaves nothing, and its undo is pushed
  // only once it succeeded. Pushed before, the undo of a failed apply would remove what it did not make
  // (a pre-existing empty chain of table inet netiface goes with the last rule removed from it).
  if (c.ip_masq && !plan.container_addrs.empty()) {
    nat::Tag tag{c.network, args.container_id, args.ifname};
    ops.NatApply(nat::Spec{tag, plan.container_addrs, {}});
    undo.Push("remove masquerade", [&ops, tag] { ops.NatRemove(tag); });
  }

  // 9. The host end up, and both ends as the kernel reports them then: what CHECK will compare with.
  const AttachedLinks links = ops.WaitUp(host_veth, args.ifname);
  cni::Result result = plan.result;
  result.interfaces = {cni::Interface{c.bridge, br.mac}, cni::Interface{links.host.name, links.host.mac},
                       cni::Interface{args.ifname, links.container.mac, args.netns}};

  // 10. skel prints the result at the request's version once this returns, past every undo: whatever
  // could stop it from being written must fail here, while the undos still run.
  cni::ResultToJson(result, c.cni_version);

  undo.Dismiss();
  log::Debug("ADD done");
  return result;
}

}  // namespace netiface::bridge
