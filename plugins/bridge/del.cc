// DEL, STATUS, GC and the verb table.
#include <optional>
#include <string>
#include <vector>

#include "netiface/bridge/bridge.h"
#include "netiface/bridge/config.h"
#include "netiface/cni/error.h"
#include "netiface/cni/error_list.h"
#include "netiface/cni/exec.h"
#include "netiface/cni/log.h"
#include "netiface/nat/nat.h"
#include "netiface/netlink/link.h"
#include "netiface/netlink/netns.h"
#include "netiface/netlink/socket.h"

namespace netiface::bridge {
void Del(const cni::CmdArgs& args) {
  const Config c = ParseConfig(args.conf);
  cni::ErrorList failures;
  // IPAM releases while the kernel spends ~20 ms unregistering the deleted veth.
  std::optional<cni::PendingDelegate> ipam_del;
  if (!c.ipam_type.empty()) {
    failures.Run("IPAM DEL", [&] { ipam_del.emplace(cni::StartDelegate("DEL", c.ipam_type, cni::DelegateConf::Own(args), args)); });
  }
  if (!args.netns.empty()) {
    failures.Run("deleting the container interface", [&] {
      auto ns = nl::NetNs::Open(args.netns);
      if (!ns) return;  // the sandbox is gone, and its links with it
      nl::Socket ctr = nl::Socket::OpenIn(*ns);
      nl::DeleteLink(ctr, args.ifname);  // false: already gone
    });
  }
  if (ipam_del) failures.Run("IPAM DEL", [&] { ipam_del->Wait(); });
  if (c.ip_masq) {
    failures.Run("masquerade teardown", [&] { nat::Remove({c.network, args.container_id, args.ifname}); });
  }
  failures.ThrowIfAny("DEL failed");
}

void Status(const cni::CmdArgs& args) {
  const Config c = ParseConfig(args.conf);
  if (!c.ipam_type.empty()) cni::Delegate("STATUS", c.ipam_type, cni::DelegateConf::Own(args), args);
}

void Gc(const cni::CmdArgs& args) {
  const Config c = ParseConfig(args.conf);
  cni::ErrorList failures;
  if (!c.ipam_type.empty()) {
    failures.Run("IPAM GC", [&] { cni::Delegate("GC", c.ipam_type, cni::DelegateConf::Own(args), args); });
  }
  // Without a valid list nothing is known to be stale: keep every rule.
  if (args.conf.valid_attachments) {
    if (c.ip_masq) {
      failures.Run("masquerade GC", [&] { nat::Gc(c.network, *args.conf.valid_attachments); });
    } else {
      // Rules may remain from when ipMasq was on; a host without nftables must not fail GC for that.
      try {
        nat::Gc(c.network, *args.conf.valid_attachments);
      } catch (const std::exception& e) {
        log::Warn("masquerade GC skipped: {}", e.what());
      }
    }
  }
  failures.ThrowIfAny("GC failed");
}

cni::PluginFuncs Funcs() {
  cni::PluginFuncs f;
  f.add = [](const cni::CmdArgs& a) { return Add(a); };
  f.del = Del;
  f.check = Check;
  f.status = Status;
  f.gc = Gc;
  return f;
}

}  // namespace netiface::bridge
