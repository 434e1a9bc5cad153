// DEL and the verb table. STATUS and GC have nothing to consult: they succeed (a backup names no
// network, so GC's valid list cannot tell whose it is).
#include <memory>

#include "netiface/cni/error.h"
#include "netiface/cni/error_list.h"
#include "netiface/cni/log.h"
#include "netiface/cni/verbs.h"
#include "netiface/tuning/kernel_ops.h"
#include "netiface/tuning/tuning.h"

namespace netiface::tuning {

void Del(const cni::CmdArgs& args, Ops& ops) {
  const Config c = ParseConfig(args.conf, args.args, args.ifname);
  const std::string file = BackupPath(c, args.container_id, args.ifname);
  const std::optional<std::string> text = ops.ReadFile(file);
  if (!text) return;
  Backup b;
  try {
    b = BackupFromJson(*text);
  } catch (const cni::Error& e) {
    log::Warn("tuning: {} is not a backup ({}): removed", file, e.msg());
    ops.RemoveFile(file);
    return;
  }
  cni::ErrorList failures("tuning: ");
  if (!args.netns.empty() && ops.NetnsExists()) {
    const std::string& ifname = args.ifname;
    if (ops.ReadLink(ifname)) {
      if (b.mtu) failures.Run("restoring the MTU", [&] { ops.SetMtu(ifname, *b.mtu); });
      if (b.mac) failures.Run("restoring the MAC address", [&] { ops.SetMac(ifname, *b.mac); });
      if (b.promisc) failures.Run("restoring promiscuous mode", [&] { ops.SetPromisc(ifname, *b.promisc); });
      if (b.allmulti) failures.Run("restoring all-multicast mode", [&] { ops.SetAllmulti(ifname, *b.allmulti); });
      if (b.txqlen) failures.Run("restoring txqueuelen", [&] { ops.SetTxQLen(ifname, *b.txqlen); });
    }
    for (const auto& saved : b.sysctls) {
      const std::string& path = saved.first;
      const std::string& value = saved.second;
      failures.Run("restoring sysctl " + path, [&] {
        // A backup is a file anyone with root could edit: it gets the config's checks.
        if (SysctlPath(path, ifname) != path) throw cni::Error(cni::kDecodeFailure, "not a saved sysctl path");
        if (ops.ReadSysctl(path)) ops.WriteSysctl(path, value);
      });
    }
  }
  failures.ThrowIfAny("tuning: DEL kept " + file + " for the next DEL");
  ops.RemoveFile(file);
}

cni::PluginFuncs Funcs() {
  return cni::BindVerbs<Ops>([](const cni::CmdArgs& a) { return std::make_unique<KernelOps>(a); },
                             {.add = Add, .del = Del, .check = Check});
}

}  // namespace netiface::tuning
