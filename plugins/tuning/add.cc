// ADD as numbered steps over Ops. Every value is read before the first change; each change pushes the
// undo that writes the value it replaces, so a failure anywhere leaves the namespace and the backup
// folder as they were.
#include <map>

#include "netiface/cni/error.h"
#include "netiface/cni/log.h"
#include "netiface/cni/undo.h"
#include "netiface/tuning/tuning.h"

namespace netiface::tuning {

cni::Result Add(const cni::CmdArgs& args, Ops& ops) {
  // 1. Everything that can be judged without changing anything.
  const Config c = ParseConfig(args.conf, args.args, args.ifname);
  if (!args.conf.prev_result) {
    throw cni::Error(cni::kInvalidConfig, "tuning: must be called as a chained plugin (prevResult is missing)");
  }
  cni::Result result = *args.conf.prev_result;
  if (c.mac) {
    for (cni::Interface& i : result.interfaces) {
      if (i.name == args.ifname && !i.sandbox.empty()) i.mac = *c.mac;
    }
  }
  cni::ResultToJson(result, c.cni_version);  // what skel prints must be printable
  if (c.sysctls.empty() && !c.ChangesLink()) return result;
  if (!ops.NetnsExists()) throw cni::Error(cni::kInvalidEnv, "tuning: network namespace not found", args.netns);
  const std::optional<LinkState> link = ops.ReadLink(args.ifname);
  if (!link) {
    throw cni::Error(cni::kInvalidEnv, "tuning: no interface " + args.ifname + " in the container namespace");
  }
  std::map<std::string, std::string> now;
  for (const auto& [path, value] : c.sysctls) {
    std::optional<std::string> v = ops.ReadSysctl(path);
    if (!v) throw cni::Error(cni::kInvalidConfig, "tuning: no sysctl " + path + " in the container namespace");
    now[path] = *v;
  }
  const std::string file = BackupPath(c, args.container_id, args.ifname);
  const std::optional<std::string> earlier_text = ops.ReadFile(file);
  std::optional<Backup> earlier;
  if (earlier_text) {
    try {
      earlier = BackupFromJson(*earlier_text);
    } catch (const cni::Error& e) {
      log::Warn("tuning: {} is not a backup ({}): replaced", file, e.msg());
    }
  }
  const Backup backup = PlanBackup(c, *link, now, earlier);
  cni::UndoStack undo;  // undos hold copies and a reference to `ops`, which outlives this call

  // 2. The backup, before the first change: a DEL after a crash from here on finds the originals.
  undo.Push("restore backup " + file, [&ops, file, earlier_text] {
    if (earlier_text) {
      ops.WriteFile(file, *earlier_text);
    } else {
      ops.RemoveFile(file);
    }
  });
  ops.WriteFile(file, BackupToJson(backup));
  // 3. The sysctls, 4. the link's attributes, in the reference's order.
  for (const auto& [path, value] : c.sysctls) {
    undo.Push("restore sysctl " + path, [&ops, path = path, old = now[path]] { ops.WriteSysctl(path, old); });
    ops.WriteSysctl(path, value);
  }
  const std::string ifname = args.ifname;
  if (c.mac) {
    undo.Push("restore MAC of " + ifname, [&ops, ifname, old = link->mac] { ops.SetMac(ifname, old); });
    ops.SetMac(ifname, *c.mac);
  }
  if (c.promisc) {
    undo.Push("restore promisc of " + ifname, [&ops, ifname, old = link->promisc] { ops.SetPromisc(ifname, old); });
    ops.SetPromisc(ifname, true);
  }
  if (c.mtu) {
    undo.Push("restore MTU of " + ifname, [&ops, ifname, old = link->mtu] { ops.SetMtu(ifname, old); });
    ops.SetMtu(ifname, *c.mtu);
  }
  if (c.allmulti) {
    undo.Push("restore allmulti of " + ifname, [&ops, ifname, old = link->allmulti] { ops.SetAllmulti(ifname, old); });
    ops.SetAllmulti(ifname, *c.allmulti);
  }
  if (c.txqlen) {
    undo.Push("restore txqueuelen of " + ifname, [&ops, ifname, old = link->txqlen] { ops.SetTxQLen(ifname, old); });
    ops.SetTxQLen(ifname, *c.txqlen);
  }
  undo.Dismiss();
  log::Debug("tuning: ADD done");
  return result;
}

}  // namespace netiface::tuning
