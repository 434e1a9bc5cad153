// ADD and CHECK. The rules go in with one nftables transaction: a failed ADD changed nothing.
#include "netiface/cni/error.h"
#include "netiface/cni/join.h"
#include "netiface/cni/log.h"
#include "netiface/cni/undo.h"
#include "netiface/firewall/config.h"
#include "netiface/firewall/firewall.h"

namespace netiface::firewall {
namespace {

const cni::Result& RequirePrev(const cni::CmdArgs& args) {
  if (!args.conf.prev_result) {
    throw cni::Error(cni::kInvalidConfig, "firewall: must be called as a chained plugin (no prevResult)");
  }
  return *args.conf.prev_result;
}

}  // namespace

cni::Result Add(const cni::CmdArgs& args, Ops& ops) {
  // 1. Everything that can be judged without changing anything.
  const Config c = ParseConfig(args.conf);
  const cni::Result& prev = RequirePrev(args);
  cni::ResultToJson(prev, c.cni_version);  // what skel prints must be printable before anything changes
  const nat::FirewallSpec spec = PlanSpec(c, args.container_id, args.ifname, prev);
  // 2. The rules: one transaction, so its undo comes once it succeeded (pushed before, the undo of a
  // failed apply would remove rules of this attachment an earlier ADD made).
  cni::UndoStack undo;
  ops.Apply(spec);
  undo.Push("remove firewall rules", [&ops, tag = spec.tag] { ops.Remove(tag); });
  undo.Dismiss();
  log::Debug("firewall: ADD done: {} address(es)", spec.addrs.size());
  return prev;
}

void Check(const cni::CmdArgs& args, Ops& ops) {
  const Config c = ParseConfig(args.conf);
  const nat::FirewallSpec spec = PlanSpec(c, args.container_id, args.ifname, RequirePrev(args));
  const std::vector<std::string> missing = ops.Missing(spec);
  if (!missing.empty()) {
    throw cni::Error(cni::kNatFailure,
                     "firewall CHECK failed: missing in table inet netiface: " + cni::JoinMessages(missing));
  }
}

}  // namespace netiface::firewall
