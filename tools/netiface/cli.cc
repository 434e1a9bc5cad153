// Command line parsing (CLI11) into an Invocation; nothing here talks to plugins.
#include "netiface/cli/cli.h"

#include <ostream>

#include <CLI/CLI.hpp>

#include "commands.h"
#include "netiface/cli/ipam_ls.h"
#include "netiface/cni/build_info.h"
#include "netiface/cni/log.h"
#include "netiface/cni/runtime/cache.h"
#include "netiface/cni/runtime/runtime.h"
#include "netiface/ipam/config.h"

namespace netiface::cli {
namespace {

constexpr char kFooter[] =
    "Exit codes: 0 ok, 1 a plugin failed or could not run (code and msg on stderr), 2 usage, 3 network\n"
    "not found or unusable, 4 local failure (cache, data dir). See netiface(1).";

std::string EnvOr(const CliContext& ctx, const char* name, const std::string& fallback) {
  auto it = ctx.env.find(name);
  return it != ctx.env.end() && !it->second.empty() ? it->second : fallback;
}

void AddConfOptions(CLI::App* sub, Invocation& inv) {
  sub->add_option("--conf-dir", inv.conf_dir,
                  "Folder with *.conflist, *.conf, *.json (env NETCONFPATH, default /etc/cni/net.d)");
  sub->add_option("--cni-path", inv.cni_path, "':'-separated plugin folders (env CNI_PATH, default /opt/cni/bin)");
}

void AddAttachmentOptions(CLI::App* sub, Invocation& inv) {
  AddConfOptions(sub, inv);
  sub->add_option("--cache-dir", inv.cache_dir, "Result cache root (default /var/lib/cni; entries in <dir>/results)");
  sub->add_option("-i,--ifname", inv.ifname, "Interface name in the container (env CNI_IFNAME, default eth0)");
  sub->add_option("--container-id", inv.container_id,
                  "Container ID (default: cnitool's rule, \"cnitool-\" + 20 hex of SHA-512 of the netns path)");
  sub->add_option("--args", inv.args, "CNI_ARGS \"K=V;K=V\" (env CNI_ARGS)");
  sub->add_option("--cap-args", inv.cap_args, "Capability arguments as a JSON object (env CAP_ARGS)");
  CapFlags& f = inv.cap_flags;
  sub->add_option("-p,--publish", f.publish,
                  "portMappings: [HOSTIP:]HOSTPORT:CONTAINERPORT[/tcp|udp|sctp], IPv6 HOSTIP in [] (repeatable)");
  sub->add_option("--ingress-rate", f.ingress_rate, "bandwidth.ingressRate, bits per second");
  sub->add_option("--ingress-burst", f.ingress_burst, "bandwidth.ingressBurst, bits");
  sub->add_option("--egress-rate", f.egress_rate, "bandwidth.egressRate, bits per second");
  sub->add_option("--egress-burst", f.egress_burst, "bandwidth.egressBurst, bits");
  sub->add_option("--mac", f.mac, "mac: the container interface's MAC address (tuning, bridge)");
  sub->add_option("--ip", f.ips, "ips: an address to request, ADDRESS[/PREFIX] (host-local; repeatable)");
}

}  // namespace

int RunCli(const std::vector<std::string>& argv, CliContext& ctx) {
  Invocation inv;
  inv.conf_dir = EnvOr(ctx, "NETCONFPATH", std::string(cni::kDefaultConfDir));
  inv.cni_path = EnvOr(ctx, "CNI_PATH", "/opt/cni/bin");
  inv.cache_dir = std::string(cni::kDefaultCacheDir);
  inv.ifname = EnvOr(ctx, "CNI_IFNAME", "eth0");
  inv.args = EnvOr(ctx, "CNI_ARGS", "");
  inv.cap_args = EnvOr(ctx, "CAP_ARGS", "");
  inv.etcd_endpoints = EnvOr(ctx, "FLANNELD_ETCD_ENDPOINTS", "http://127.0.0.1:4001,http://127.0.0.1:2379");
  inv.etcd_prefix = EnvOr(ctx, "FLANNELD_ETCD_PREFIX", "/coreos.com/network");
  inv.etcd_cafile = EnvOr(ctx, "FLANNELD_ETCD_CAFILE", "");
  inv.etcd_certfile = EnvOr(ctx, "FLANNELD_ETCD_CERTFILE", "");
  inv.etcd_keyfile = EnvOr(ctx, "FLANNELD_ETCD_KEYFILE", "");
  std::string log_level = "warning";

  CLI::App app("netiface: run CNI network configuration lists against a network namespace (cnitool's workflow)",
               "netiface");
  app.footer(kFooter);
  app.set_version_flag("--version", cni::VersionLine("netiface"));
  app.require_subcommand(1);
  CLI::Option* log_level_opt =
      app.add_option("--log-level", log_level,
                     "debug|info|warning|error|none (default warning): the CLI's stderr and the plugins it runs");
  log_level_opt->check(CLI::IsMember({"debug", "info", "warning", "error", "none"}));
  app.fallthrough();

  struct Verb {
    const char* name;
    const char* help;
  };
  for (Verb v : {Verb{"add", "ADD every plugin of NETWORK in order; prints the result JSON"},
                 Verb{"check", "CHECK the attachment against its cached result (spec >= 0.4.0, honours disableCheck)"},
                 Verb{"del", "DEL every plugin of NETWORK in reverse order, with the cached result"}}) {
    CLI::App* sub = app.add_subcommand(v.name, v.help);
    sub->footer(kFooter);
    sub->add_option("NETWORK", inv.network, "Network name (its \"name\" key)")->required();
    auto* netns = sub->add_option("NETNS", inv.netns, "Network namespace path, e.g. /run/netns/x");
    if (std::string(v.name) == "del") {
      netns->description("Network namespace path (may be omitted with --container-id: DEL without a netns)");
    } else {
      netns->required();
    }
    AddAttachmentOptions(sub, inv);
    sub->callback([&inv, v] { inv.command = v.name; });
  }

  CLI::App* gc = app.add_subcommand(
      "gc", "DEL cached attachments of NETWORK that are not valid, then GC every plugin (spec >= 1.1.0)");
  gc->footer(
      std::string("The valid attachments must be given: NETNS, --valid, --valid-file (e.g. from the runtime) and/or\n"
                  "--live; with none of them gc refuses (exit 2) unless --all-stale says that every cached attachment\n"
                  "not named is stale. An attachment whose netns is unknown (written by an older libcni) is never\n"
                  "deleted without --all-stale. The plugins' GC keeps every attachment still cached.\n") +
      kFooter);
  gc->add_option("NETWORK", inv.network, "Network name")->required();
  gc->add_option("NETNS", inv.netns, "Keep the attachment of this namespace (its container ID and --ifname)");
  gc->add_option("--valid", inv.valid, "An attachment that stays: CONTAINERID[/IFNAME] (repeatable)");
  gc->add_option("--valid-file", inv.valid_file,
                 "A file of attachments that stay, one CONTAINERID[/IFNAME] per line ('#' comments)");
  gc->add_flag("--live", inv.live, "Keep every cached attachment whose netns path still exists");
  gc->add_flag("--all-stale", inv.all_stale,
               "Every cached attachment not named valid is stale, also one whose netns is unknown");
  gc->add_flag("--dry-run", inv.dry_run, "Print what would be deleted and kept; call no plugin");
  AddAttachmentOptions(gc, inv);
  gc->callback([&inv] { inv.command = "gc"; });

  CLI::App* ls = app.add_subcommand("ls", "List the cached attachments (network, container, ifname, netns, addresses)");
  ls->footer(kFooter);
  ls->add_option("NETWORK", inv.network, "Only this network (default: every network)");
  ls->add_option("--cache-dir", inv.cache_dir, "Result cache root (default /var/lib/cni; entries in <dir>/results)");
  ls->add_flag("--json", inv.json, "JSON instead of a table");
  ls->callback([&inv] { inv.command = "ls"; });

  CLI::App* status = app.add_subcommand("status", "STATUS of every plugin of NETWORK (spec >= 1.1.0)");
  status->footer(kFooter);
  status->add_option("NETWORK", inv.network, "Network name")->required();
  AddConfOptions(status, inv);
  status->callback([&inv] { inv.command = "status"; });

  CLI::App* ipam = app.add_subcommand("ipam", "Inspect host-local IPAM stores");
  ipam->require_subcommand(1);
  CLI::App* ipam_ls = ipam->add_subcommand("ls", "List the reservations of a host-local data dir");
  ipam_ls->footer(kFooter);
  ipam_ls->add_option("NETWORK", inv.network,
                      "Only this network, with its store found in its config and each range set's use "
                      "(default: every network folder of --data-dir)");
  ipam_ls->add_option("--data-dir", inv.data_dir,
                      "host-local dataDir (default: the network's ipam.dataDir, else /var/lib/cni/networks)");
  ipam_ls->add_option("--conf-dir", inv.conf_dir,
                      "Where NETWORK's config is (env NETCONFPATH, default /etc/cni/net.d)");
  ipam_ls->add_flag("--json", inv.json, "JSON instead of a table");
  ipam_ls->callback([&inv] { inv.command = "ipam-ls"; });

  CLI::App* leases = app.add_subcommand(
      "leases", "List the flannel network's subnet leases in etcd (flanneld's and netiface-agent's layout)");
  leases->footer(kFooter);
  leases->add_option("--etcd-endpoints", inv.etcd_endpoints,
                     "Comma-separated etcd endpoints (env FLANNELD_ETCD_ENDPOINTS, default "
                     "http://127.0.0.1:4001,http://127.0.0.1:2379)");
  leases->add_option("--etcd-prefix", inv.etcd_prefix,
                     "Prefix of flannel's keys (env FLANNELD_ETCD_PREFIX, default /coreos.com/network)");
  leases->add_option("--etcd-cafile", inv.etcd_cafile, "CA bundle for https endpoints (env FLANNELD_ETCD_CAFILE)");
  leases->add_option("--etcd-certfile", inv.etcd_certfile, "Client certificate (env FLANNELD_ETCD_CERTFILE)");
  leases->add_option("--etcd-keyfile", inv.etcd_keyfile, "Client certificate's key (env FLANNELD_ETCD_KEYFILE)");
  leases->add_flag("--json", inv.json, "JSON instead of a table");
  leases->callback([&inv] { inv.command = "leases"; });

  std::vector<const char*> cargv;
  for (const auto& a : argv) cargv.push_back(a.c_str());
  try {
    app.parse(static_cast<int>(cargv.size()), cargv.data());
  } catch (const CLI::ParseError& e) {
    int rc = app.exit(e, *ctx.out, *ctx.err);
    return rc == 0 ? kExitOk : kExitUsage;
  }
  static const std::map<std::string, log::Level> kLevels = {{"debug", log::Level::kDebug},
                                                            {"info", log::Level::kInfo},
                                                            {"warning", log::Level::kWarn},
                                                            {"error", log::Level::kError},
                                                            {"none", log::Level::kOff}};
  log::SetLevel(kLevels.at(log_level));
  // The plugins read it from their environment, over their config's logLevel (log.h).
  if (log_level_opt->count() > 0) ctx.env[log::kLevelEnv] = log_level;
  if (inv.command == "del" && inv.netns.empty() && inv.container_id.empty()) {
    *ctx.err << "netiface del: NETNS is required unless --container-id is given\n";
    return kExitUsage;
  }
  return Execute(inv, ctx);
}

}  // namespace netiface::cli
