// ADD as numbered steps over Ops (cni::UndoStack unwinds a failure at any step). The result is
// prevResult, passed through.
#include "netiface/cni/error.h"
#include "netiface/cni/log.h"
#include "netiface/cni/undo.h"
#include "netiface/portmap/config.h"
#include "netiface/portmap/portmap.h"

namespace netiface::portmap {

cni::Result Add(const cni::CmdArgs& args, Ops& ops) {
  // 1. Everything that can be judged without changing anything.
  const Config c = ParseConfig(args.conf);
  if (!args.conf.prev_result) {
    throw cni::Error(cni::kInvalidConfig, "portmap: must be called as a chained plugin (no prevResult)");
  }
  const cni::Result& prev = *args.conf.prev_result;
  cni::ResultToJson(prev, c.cni_version);  // what skel prints must be printable before anything changes
  if (c.mappings.empty()) return prev;
  const std::vector<cni::IpAddr> addrs = ContainerAddrs(prev, args.ifname);
  if (addrs.empty()) {
    throw cni::Error(cni::kInvalidConfig, "portmap: prevResult has no address of interface " + args.ifname);
  }
  const nat::PortMapSpec spec = MakeSpec(c, args.container_id, args.ifname, addrs);

  cni::UndoStack undo;
  // 2. 127.0.0.1 hairpin: route_localnet on the host side (shared by the interface's containers: never undone).
  if (c.snat) {
    for (const auto& a : addrs) {
      if (a.is_v4()) ops.EnableRouteLocalnet(a);
    }
  }
  // 3. The rules, in one transaction: a failed Apply leaves nothing, so its undo is pushed once it succeeded.
  ops.Apply(spec);
  undo.Push("remove port mappings", [&ops, tag = spec.tag] { ops.Remove(tag); });

  undo.Dismiss();
  log::Debug("ADD done: {} port mapping(s)", c.mappings.size());
  return prev;
}

}  // namespace netiface::portmap
