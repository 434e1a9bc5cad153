// DEL, STATUS, GC and the verb table.
#include <memory>

#include "netiface/bridge/bridge.h"
#include "netiface/bridge/config.h"
#include "netiface/bridge/kernel_ops.h"
#include "netiface/cni/error_list.h"
#include "netiface/cni/log.h"
#include "netiface/cni/verbs.h"

namespace netiface::bridge {

void Del(const cni::CmdArgs& args, Ops& ops) {
  const Config c = ParseConfig(args.conf);
  cni::ErrorList failures;
  // IPAM releases while the kernel spends ~20 ms unregistering the deleted veth.
  if (!c.ipam_type.empty()) failures.Run("IPAM DEL", [&] { ops.StartIpamDel(); });
  if (!args.netns.empty()) {
    failures.Run("deleting the container interface", [&] { ops.DeleteContainerLink(args.ifname); });
  }
  if (!c.ipam_type.empty()) failures.Run("IPAM DEL", [&] { ops.WaitIpamDel(); });
  if (c.ip_masq) {
    failures.Run("masquerade teardown", [&] { ops.NatRemove({c.network, args.container_id, args.ifname}); });
  }
  failures.ThrowIfAny("DEL failed");
}

void Status(const cni::CmdArgs& args, Ops& ops) {
  const Config c = ParseConfig(args.conf);
  if (!c.ipam_type.empty()) ops.IpamStatus();
}

void Gc(const cni::CmdArgs& args, Ops& ops) {
  const Config c = ParseConfig(args.conf);
  cni::ErrorList failures;
  if (!c.ipam_type.empty()) failures.Run("IPAM GC", [&] { ops.IpamGc(); });
  // Without a valid list nothing is known to be stale: keep every rule.
  if (args.conf.valid_attachments) {
    if (c.ip_masq) {
      failures.Run("masquerade GC", [&] { ops.NatGc(c.network, *args.conf.valid_attachments); });
    } else {
      // Rules may remain from when ipMasq was on; a host without nftables must not fail GC for that.
      try {
        ops.NatGc(c.network, *args.conf.valid_attachments);
      } catch (const std::exception& e) {
        log::Warn("masquerade GC skipped: {}", e.what());
      }
    }
  }
  failures.ThrowIfAny("GC failed");
}

cni::PluginFuncs Funcs() {
  return cni::BindVerbs<Ops>([](const cni::CmdArgs& a) { return std::make_unique<KernelOps>(a); },
                             {.add = Add, .del = Del, .check = Check, .status = Status, .gc = Gc});
}

}  // namespace netiface::bridge
