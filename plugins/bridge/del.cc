// DEL, STATUS, GC and the verb table.
#include <optional>
#include <string>
#include <vector>

#include "netiface/bridge/bridge.h"
#include "netiface/bridge/config.h"
#include "netiface/cni/error.h"
#include "netiface/cni/exec.h"
#include "netiface/cni/log.h"
#include "netiface/nat/nat.h"
#include "netiface/netlink/link.h"
#include "netiface/netlink/netns.h"
#include "netiface/netlink/socket.h"

namespace netiface::bridge {
namespace {

// Collects the failures of a verb that must do every step, and reports them together.
class Failures {
 public:
  template <typename F>
  void Try(const char* what, F&& f) {
    try {
      f();
    } catch (const cni::Error& e) {
      Add(e.code(), std::string(what) + ": " + e.msg(), e.details());
    } catch (const std::exception& e) {
      Add(cni::kInternal, std::string(what) + ": " + e.what(), "");
    }
  }
  // Throws the first failure's code with every message, when there was any.
  void ThrowIfAny(const std::string& verb) const {
    if (msgs_.empty()) return;
    std::string msg = verb + " failed: ";
    for (size_t i = 0; i < msgs_.size(); ++i) msg += (i ? "; " : "") + msgs_[i];
    throw cni::Error(code_, msg, details_);
  }

 private:
  void Add(int code, std::string msg, const std::string& details) {
    if (msgs_.empty()) {
      code_ = code;
      details_ = details;
    }
    log::Error("{}", msg);
    msgs_.push_back(std::move(msg));
  }
  int code_ = 0;
  std::string details_;
  std::vector<std::string> msgs_;
};

}  // namespace

void Del(const cni::CmdArgs& args) {
  const Config c = ParseConfig(args.conf);
  Failures failures;
  // IPAM releases while the kernel spends ~20 ms unregistering the deleted veth.
  std::optional<cni::PendingDelegate> ipam_del;
  if (!c.ipam_type.empty()) {
    failures.Try("IPAM DEL", [&] { ipam_del.emplace(cni::StartDelegate("DEL", c.ipam_type, args.conf.raw, args)); });
  }
  if (!args.netns.empty()) {
    failures.Try("deleting the container interface", [&] {
      auto ns = nl::NetNs::Open(args.netns);
      if (!ns) return;  // the sandbox is gone, and its links with it
      nl::Socket ctr = nl::Socket::OpenIn(*ns);
      nl::DeleteLink(ctr, args.ifname);  // false: already gone
    });
  }
  if (ipam_del) failures.Try("IPAM DEL", [&] { ipam_del->Wait(); });
  if (c.ip_masq) {
    failures.Try("masquerade teardown", [&] { nat::Remove({c.network, args.container_id, args.ifname}); });
  }
  failures.ThrowIfAny("DEL");
}

void Status(const cni::CmdArgs& args) {
  const Config c = ParseConfig(args.conf);
  if (!c.ipam_type.empty()) cni::Delegate("STATUS", c.ipam_type, args.conf.raw, args);
}

void Gc(const cni::CmdArgs& args) {
  const Config c = ParseConfig(args.conf);
  Failures failures;
  if (!c.ipam_type.empty()) {
    failures.Try("IPAM GC", [&] { cni::Delegate("GC", c.ipam_type, args.conf.raw, args); });
  }
  // Without a valid list nothing is known to be stale: keep every rule.
  if (args.conf.valid_attachments) {
    if (c.ip_masq) {
      failures.Try("masquerade GC", [&] { nat::Gc(c.network, *args.conf.valid_attachments); });
    } else {
      // Rules may remain from when ipMasq was on; a host without nftables must not fail GC for that.
      try {
        nat::Gc(c.network, *args.conf.valid_attachments);
      } catch (const std::exception& e) {
        log::Warn("masquerade GC skipped: {}", e.what());
      }
    }
  }
  failures.ThrowIfAny("GC");
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
