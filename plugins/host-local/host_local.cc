#include "netiface/host_local/host_local.h"

#include <errno.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>

#include "netiface/cni/error.h"
#include "netiface/cni/file.h"
#include "netiface/cni/join.h"
#include "netiface/cni/log.h"
#include "netiface/cni/undo.h"
#include "netiface/ipam/allocator.h"
#include "netiface/ipam/config.h"
#include "netiface/ipam/gc.h"
#include "netiface/ipam/reservation.h"
#include "netiface/ipam/store.h"

namespace netiface::host_local {
namespace {

using cni::Error;
using cni::IpAddr;
using ipam::Store;

std::string Describe(const cni::CmdArgs& args) { return args.container_id + " (ifname " + args.ifname + ")"; }

cni::Dns ReadResolvConf(const std::string& path) {
  std::optional<std::string> text;
  try {
    text = cni::ReadFileIfExists(path);
  } catch (const Error& e) {
    throw Error(cni::kInvalidConfig, "ipam.resolvConf: cannot read \"" + path + "\"", e.details());
  }
  if (!text) throw Error(cni::kInvalidConfig, "ipam.resolvConf: \"" + path + "\" does not exist");
  return ipam::ParseResolvConf(*text);
}

// One address per range set, all or none: an address reserved for an earlier range set is released
// when a later one fails (cni::UndoStack; the store is the verb's Ops and outlives it).
cni::Result Allocate(const cni::CmdArgs& args, const ipam::IpamConfig& cfg, Store& store, cni::Result result) {
  const std::string owner(ipam::TrimSpace(ipam::EncodeOwner(args.container_id, args.ifname)));
  Store::Held held = store.Find(args.container_id, args.ifname);
  cni::UndoStack undo;
  for (size_t idx = 0; idx < cfg.range_sets.size(); ++idx) {
    ipam::Allocation got =
        ipam::Allocator(cfg.range_sets[idx], idx).Get(store, held, args.container_id, args.ifname, cfg.requested[idx]);
    undo.Push("release " + got.ip.ToString(), [&store, ip = got.ip, owner] { store.ReleaseIfOwner(ip, owner); });
    log::Debug("host-local: reserved {} in {} for {}", got.ip.ToString(), store.dir(), Describe(args));
    result.ips.push_back({std::nullopt, got.Address(), got.range->gateway});
  }
  result.routes = cfg.routes;
  undo.Dismiss();
  return result;
}

}  // namespace

cni::Result Add(const cni::CmdArgs& args) {
  ipam::IpamConfig cfg = ipam::ParseIpamConfig(args.conf, args.args);
  cni::Result result;
  if (!cfg.resolv_conf.empty()) result.dns = ReadResolvConf(cfg.resolv_conf);
  std::optional<Store> store = Store::Open(cfg.store, /*create=*/true);
  return Allocate(args, cfg, *store, std::move(result));
}

void Del(const cni::CmdArgs& args) {
  ipam::StoreConfig sc = ipam::ParseStoreConfig(args.conf);
  std::optional<Store> store = Store::Open(sc, /*create=*/false);
  if (!store) return;  // nothing was ever reserved in this network
  for (const IpAddr& ip : store->ReleaseAttachment(args.container_id, args.ifname)) {
    log::Debug("host-local: released {} of {}", ip.ToString(), Describe(args));
  }
}

void Check(const cni::CmdArgs& args) {
  ipam::IpamConfig cfg = ipam::ParseIpamConfig(args.conf, args.args);
  std::optional<Store> store = Store::Open(cfg.store, /*create=*/false);
  std::vector<IpAddr> ips;
  if (store) {
    Store::Held held = store->Find(args.container_id, args.ifname);
    ips = held.exact.empty() ? held.legacy : held.exact;
  }
  if (ips.empty()) {
    throw Error(cni::kUnknownContainer, "host-local: failed to find address added by container " + Describe(args));
  }
  for (size_t idx = 0; idx < cfg.range_sets.size(); ++idx) {
    const auto& set = cfg.range_sets[idx];
    if (std::none_of(ips.begin(), ips.end(), [&](const IpAddr& ip) { return set.Contains(ip); })) {
      throw Error(cni::kInternal, "host-local: " + Describe(args) + " holds no address in range set " +
                                      std::to_string(idx) + " (" + set.ToString() + ")");
    }
  }
  if (!args.conf.prev_result) return;
  auto in_sets = [&](const IpAddr& ip) {
    return std::any_of(cfg.range_sets.begin(), cfg.range_sets.end(), [&](const auto& s) { return s.Contains(ip); });
  };
  std::vector<IpAddr> prev;
  for (const auto& c : args.conf.prev_result->ips) {
    IpAddr ip = ipam::Canonical(c.address.addr());
    if (!in_sets(ip)) continue;
    prev.push_back(ip);
    if (std::find(ips.begin(), ips.end(), ip) == ips.end()) {
      throw Error(cni::kInternal,
                  "host-local: prevResult address " + ip.ToString() + " is not reserved for " + Describe(args));
    }
  }
  for (const IpAddr& ip : ips) {
    if (in_sets(ip) && std::find(prev.begin(), prev.end(), ip) == prev.end()) {
      throw Error(cni::kInternal,
                  "host-local: address " + ip.ToString() + " reserved for " + Describe(args) + " is not in prevResult");
    }
  }
}

void Status(const cni::CmdArgs& args) {
  ipam::IpamConfig cfg = ipam::ParseIpamConfig(args.conf, "");
  std::optional<Store> store = [&] {
    try {
      std::optional<Store> s = Store::Open(cfg.store, /*create=*/true);
      if (::access(s->dir().c_str(), W_OK) != 0) {
        throw Error(cni::kIoFailure, "cannot write " + s->dir(), std::strerror(errno));
      }
      return s;
    } catch (const Error& e) {
      if (e.code() == cni::kTryAgainLater) throw;
      throw Error(cni::kNotAvailable,
                  "host-local: data dir " + ipam::NetworkDir(cfg.store) + " is unusable: " + e.msg(), e.details());
    }
  }();
  std::string exhausted;
  for (size_t idx = 0; idx < cfg.range_sets.size(); ++idx) {
    ipam::CandidateIter it(cfg.range_sets[idx], store->LastReserved(idx));
    bool free = false;
    while (auto c = it.Next()) {
      if (!store->Exists(c->ip)) {
        free = true;
        break;
      }
    }
    if (!free) {
      cni::AppendMessage(exhausted, "range set " + std::to_string(idx) + " (" + cfg.range_sets[idx].ToString() + ")");
    }
  }
  if (!exhausted.empty()) {
    throw Error(cni::kNotAvailable, "host-local: no free address in " + exhausted + ": an ADD cannot succeed");
  }
}

void Gc(const cni::CmdArgs& args) {
  ipam::StoreConfig sc = ipam::ParseStoreConfig(args.conf);
  if (!args.conf.valid_attachments) {
    throw Error(cni::kInvalidConfig, "GC needs the list of valid attachments (cni.dev/valid-attachments)");
  }
  std::optional<Store> store = Store::Open(sc, /*create=*/false);
  if (!store) return;
  std::string errors;
  for (const auto& r : ipam::PlanGc(store->Scan(), *args.conf.valid_attachments)) {
    try {
      if (store->ReleaseIfOwner(r.ip, r.owner)) {
        log::Info("host-local: GC released {} held by {}", r.ip.ToString(), ipam::DescribeOwner(r.owner));
      }
    } catch (const Error& e) {
      cni::AppendMessage(errors, std::string(e.what()) + ": " + e.details());
    }
  }
  if (!errors.empty()) throw Error(cni::kIoFailure, "host-local: GC could not release every stale address", errors);
}

// No Ops: everything host-local touches is the ipam::Store in the folder the config names, which tests point at a
// temporary folder.
cni::PluginFuncs Funcs() { return {.add = Add, .del = Del, .check = Check, .status = Status, .gc = Gc}; }

}  // namespace netiface::host_local
