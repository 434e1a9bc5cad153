// Executing a parsed command line: building the runtime's inputs, calling the libcni runtime and
// turning its errors into messages and exit codes.

#include <algorithm>
#include <filesystem>
#include <ostream>

#include "commands.h"
#include "netiface/agent/registry.h"
#include "netiface/cli/attachments.h"
#include "netiface/cli/ipam_ls.h"
#include "netiface/cli/ipam_stores.h"
#include "netiface/cli/leases.h"
#include "netiface/cni/error.h"
#include "netiface/cni/file.h"
#include "netiface/cni/hash.h"
#include "netiface/cni/result.h"
#include "netiface/cni/runtime/runtime.h"
#include "netiface/cni/skel.h"
#include "netiface/cni/version.h"
#include "netiface/etcd/client.h"
#include "netiface/ipam/config.h"

namespace netiface::cli {
namespace {

using nlohmann::json;

int Report(CliContext& ctx, const Invocation& inv, int exit_code, const cni::Error& e) {
  std::string what = inv.command == "ipam-ls" ? "ipam ls" : inv.command + " " + inv.network;
  *ctx.err << "netiface " << what << ": " << e.what() << " (code " << e.code() << ")\n";
  return exit_code;
}

cni::RuntimeConf BuildRuntimeConf(const Invocation& inv) {
  cni::RuntimeConf rt;
  if (!inv.netns.empty()) rt.netns = AbsolutePath(inv.netns);
  rt.container_id = !inv.container_id.empty() ? inv.container_id : ContainerIdFromNetns(rt.netns);
  rt.ifname = inv.ifname;
  rt.args = cni::ParseArgPairs(inv.args);
  json caps = json::object();
  if (!inv.cap_args.empty()) {
    caps = json::parse(inv.cap_args, nullptr, false);
    if (caps.is_discarded() || !caps.is_object()) {
      throw cni::Error(cni::kInvalidEnv, "CAP_ARGS must be a JSON object", inv.cap_args);
    }
  }
  caps = MergeCapFlags(std::move(caps), inv.cap_flags);
  if (!caps.empty()) rt.capability_args = std::move(caps);
  cni::ValidateContainerId(rt.container_id);
  cni::ValidateIfname(rt.ifname);
  return rt;
}

// gc's sources of valid attachments. Throws Error(kInvalidEnv) for a bad entry, an unreadable
// --valid-file, or no source at all without --all-stale.
GcOptions BuildGcOptions(const Invocation& inv, const cni::RuntimeConf& rt) {
  GcOptions o;
  if (!inv.netns.empty() || !inv.container_id.empty()) o.valid.push_back({rt.container_id, rt.ifname});
  for (const auto& v : inv.valid) o.valid.push_back(ParseAttachment(v, rt.ifname));
  if (!inv.valid_file.empty()) {
    std::optional<std::string> text;
    try {
      text = cni::ReadFileIfExists(inv.valid_file);
    } catch (const cni::Error& e) {
      throw cni::Error(cni::kInvalidEnv, "--valid-file: " + e.msg(), e.details());
    }
    if (!text) throw cni::Error(cni::kInvalidEnv, "--valid-file: " + inv.valid_file + " does not exist");
    try {
      for (auto& a : ParseValidList(*text, rt.ifname)) o.valid.push_back(std::move(a));
    } catch (const cni::Error& e) {
      throw cni::Error(cni::kInvalidEnv, "--valid-file " + inv.valid_file + ": " + e.msg(), e.details());
    }
  }
  o.live = inv.live;
  o.all_stale = inv.all_stale;
  PlanGc({}, inv.network, o, {});  // refuses a gc that names no valid attachment
  return o;
}

bool PathExists(const std::string& path) {
  std::error_code ec;
  return std::filesystem::exists(path, ec) || ec;  // in doubt, alive
}

int Ls(const Invocation& inv, CliContext& ctx) {
  auto entries = AttachmentsOf(cni::ResultCache(inv.cache_dir).List(), inv.network);
  if (inv.json) {
    *ctx.out << AttachmentsToJson(entries).dump(2) << "\n";
  } else {
    *ctx.out << FormatAttachmentTable(entries);
  }
  return kExitOk;
}

// The stores to list: NETWORK's host-local stores as its config names them (an explicit --data-dir
// replaces their folder), or the --data-dir (default host-local's) alone.
std::vector<IpamStore> StoresToList(const Invocation& inv) {
  std::vector<IpamStore> stores;
  if (!inv.network.empty()) {
    try {
      stores = IpamStoresOf(cni::LoadNetworkConfigList(inv.conf_dir, inv.network).conf, cni::ReadFileIfExists);
    } catch (const cni::Error&) {
      if (inv.data_dir.empty()) throw;  // nowhere else to look
    }
    if (stores.empty() && inv.data_dir.empty()) {
      throw cni::Error(cni::kInvalidConfig, "network " + inv.network + " uses no host-local IPAM");
    }
  }
  if (stores.empty()) stores.push_back({"", std::string(ipam::kDefaultDataDir), {}, ""});
  if (!inv.data_dir.empty()) {
    for (auto& s : stores) s.data_dir = inv.data_dir;
  }
  return stores;
}

int IpamLs(const Invocation& inv, CliContext& ctx) {
  std::vector<Reservation> rs;
  std::vector<RangeUsage> usage;
  std::vector<std::string> listed;
  for (const IpamStore& s : StoresToList(inv)) {
    if (std::find(listed.begin(), listed.end(), s.data_dir) != listed.end()) continue;
    listed.push_back(s.data_dir);
    std::vector<Reservation> here = ListReservations(s.data_dir, inv.network);
    for (RangeUsage& u : UsageOf(s, here)) usage.push_back(std::move(u));
    if (!inv.network.empty() && !s.why_unknown.empty()) {
      *ctx.err << "netiface ipam ls: " << s.plugin << ": range sets unknown: " << s.why_unknown << "\n";
    }
    rs.insert(rs.end(), here.begin(), here.end());
  }
  if (inv.json) {
    *ctx.out << json{{"reservations", ReservationsToJson(rs)}, {"ranges", UsageToJson(usage)}}.dump(2) << "\n";
  } else {
    *ctx.out << FormatReservationTable(rs);
    if (!usage.empty()) *ctx.out << "\n" << FormatUsageTable(usage);
  }
  return kExitOk;
}

int Leases(const Invocation& inv, CliContext& ctx) {
  std::vector<LeaseRow> rows;
  try {
    etcd::ClientOptions o;
    o.endpoints = etcd::SplitEndpoints(inv.etcd_endpoints);
    o.ca_file = inv.etcd_cafile;
    o.cert_file = inv.etcd_certfile;
    o.key_file = inv.etcd_keyfile;
    etcd::Client client(std::move(o));
    std::string prefix = inv.etcd_prefix;
    while (prefix.size() > 1 && prefix.back() == '/') prefix.pop_back();
    auto registry = agent::MakeEtcdRegistry(client, prefix);
    for (agent::Lease& l : registry->ListLeases().leases) {
      int64_t ttl = registry->TimeLeft(l);  // INT64_MAX for a reservation
      rows.push_back({std::move(l), ttl});
    }
  } catch (const etcd::Error& e) {
    *ctx.err << "netiface leases: " << e.what() << "\n";
    return e.kind() == etcd::Error::kConfig ? kExitUsage : kExitLocal;
  }
  if (inv.json) {
    *ctx.out << LeasesToJson(rows).dump(2) << "\n";
  } else {
    *ctx.out << FormatLeaseTable(rows);
  }
  return kExitOk;
}

int RunVerb(const Invocation& inv, CliContext& ctx) {
  cni::RuntimeConf rt;
  GcOptions gc;
  try {
    if (inv.command != "status") rt = BuildRuntimeConf(inv);
    if (inv.command == "gc") gc = BuildGcOptions(inv, rt);
  } catch (const cni::Error& e) {
    return Report(ctx, inv, kExitUsage, e);
  }
  cni::NetworkConfigList list;
  try {
    list = cni::LoadNetworkConfigList(inv.conf_dir, inv.network);
  } catch (const cni::Error& e) {
    return Report(ctx, inv, e.code() == cni::kIoFailure ? kExitLocal : kExitConfig, e);
  }
  cni::RuntimeOptions opts;
  opts.cni_path = inv.cni_path;
  opts.cache_dir = inv.cache_dir;
  opts.base_env = ctx.env;
  opts.exec = ctx.exec;
  cni::Runtime runtime(std::move(opts));
  try {
    // check and del without capability arguments of their own get those the attachment was added with
    // (the cache keeps them), as a runtime passes the same runtimeConfig on every verb: otherwise a
    // CHECK could not see a published port or a rate it was never told about.
    if ((inv.command == "check" || inv.command == "del") && rt.capability_args.empty()) {
      if (auto cached = runtime.cache().Read(list.conf.name, rt.container_id, rt.ifname);
          cached && cached->capability_args.is_object()) {
        rt.capability_args = cached->capability_args;
      }
    }
    if (inv.command == "add") {
      json result = runtime.AddNetworkList(list, rt);
      *ctx.out << cni::PrintJson(result) << "\n";
    } else if (inv.command == "check") {
      runtime.CheckNetworkList(list, rt);
    } else if (inv.command == "del") {
      runtime.DelNetworkList(list, rt);
    } else if (inv.command == "gc") {
      GcPlan plan = PlanGc(runtime.cache().List(), list.conf.name, gc, PathExists);
      if (inv.dry_run) {
        const bool gc_plugins = !list.conf.disable_gc && cni::VersionAtLeast(list.conf.cni_version, "1.1.0");
        *ctx.out << (list.conf.disable_gc ? "disableGC is set: nothing would be done\n"
                                          : FormatGcPlan(plan, gc_plugins));
        return kExitOk;
      }
      runtime.GcAttachments(list, plan.Stale(), plan.valid);
    } else {
      runtime.StatusNetworkList(list);
    }
  } catch (const cni::PluginError& e) {
    return Report(ctx, inv, kExitPluginError, e);
  } catch (const cni::Error& e) {
    switch (e.code()) {
      case cni::kInvalidConfig:
      case cni::kIncompatibleVersion:
      case cni::kUnknownContainer:
        return Report(ctx, inv, kExitConfig, e);
      case cni::kInvalidEnv:
        return Report(ctx, inv, kExitUsage, e);
      default:
        return Report(ctx, inv, kExitLocal, e);
    }
  }
  return kExitOk;
}

}  // namespace

std::string AbsolutePath(const std::string& path) {
  std::filesystem::path p(path);
  if (p.is_relative()) p = std::filesystem::current_path() / p;
  std::string s = p.lexically_normal().string();
  while (s.size() > 1 && s.back() == '/') s.pop_back();
  return s;
}

std::string ContainerIdFromNetns(const std::string& netns_path) {
  return "cnitool-" + cni::HexDigest(cni::Hash::kSha512, netns_path).substr(0, 20);
}

int Execute(const Invocation& inv, CliContext& ctx) {
  try {
    if (inv.command == "ipam-ls") return IpamLs(inv, ctx);
    if (inv.command == "ls") return Ls(inv, ctx);
    if (inv.command == "leases") return Leases(inv, ctx);
    return RunVerb(inv, ctx);
  } catch (const cni::Error& e) {
    return Report(ctx, inv, kExitLocal, e);
  } catch (const std::exception& e) {
    return Report(ctx, inv, kExitLocal, cni::Error(cni::kInternal, e.what()));
  }
}

}  // namespace netiface::cli
