#include "netiface/agent/flags.h"

#include <algorithm>
#include <ostream>

#include <CLI/CLI.hpp>

#include "netiface/agent/hostgw.h"
#include "netiface/agent/lease.h"
#include "netiface/cni/build_info.h"
#include "netiface/cni/ip.h"

namespace netiface::agent {
namespace {

// flanneld reads FLANNELD_<FLAG> (upper case, '-' as '_') for every flag.
std::string EnvName(const std::string& flag) {
  std::string out = "FLANNELD_";
  for (char c : flag) out += c == '-' ? '_' : static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return out;
}

}  // namespace

std::vector<std::string> NormalizeGoFlags(const std::vector<std::string>& argv) {
  std::vector<std::string> out;
  for (size_t i = 0; i < argv.size(); ++i) {
    const std::string& a = argv[i];
    bool go_long = i > 0 && a.size() > 2 && a[0] == '-' && a[1] != '-' &&
                   (a.find('=') == std::string::npos ? a.size() > 2 : a.find('=') > 2);
    out.push_back(go_long ? "-" + a : a);
  }
  return out;
}

Command ParseCommandLine(const std::vector<std::string>& argv_in, const std::map<std::string, std::string>& env,
                         std::ostream& out, std::ostream& err) {
  Command cmd;
  AgentOptions& o = cmd.options;
  std::string endpoints = "http://127.0.0.1:4001,http://127.0.0.1:2379";
  std::vector<std::string> ifaces;
  std::string public_ip;
  std::string public_ipv6;
  std::string log_level = "info";
  int64_t renew_margin_min = 60;
  bool version = false;

  CLI::App app(
      "netiface-agent: flanneld's node side. Leases a subnet for this node in etcd (flannel's layout),\n"
      "writes subnet.env for the flannel CNI plugin, routes to the other nodes' subnets (host-gw or vxlan) and\n"
      "keeps masquerade and forward rules in nftables table inet netiface.",
      "netiface-agent");
  app.footer(
      "Every flag can also be given as FLANNELD_<FLAG> in the environment (FLANNELD_ETCD_ENDPOINTS, ...),\n"
      "and as -flag=value (Go's spelling). See netiface-agent(8).");
  app.add_option("--etcd-endpoints", endpoints, "Comma-separated etcd endpoints")->capture_default_str();
  app.add_option("--etcd-prefix", o.prefix, "etcd prefix of flannel's keys")->capture_default_str();
  app.add_option("--etcd-cafile", o.etcd.ca_file, "CA bundle to verify etcd's certificate (https endpoints)");
  app.add_option("--etcd-certfile", o.etcd.cert_file, "Client certificate for etcd (mutual TLS)");
  app.add_option("--etcd-keyfile", o.etcd.key_file, "Client certificate's key");
  app.add_option("--iface", ifaces,
                 "Interface (name or address) whose address is this node's public IP; repeatable, first match wins "
                 "(default: the interface of the default route)");
  app.add_option("--public-ip", public_ip, "This node's public IP (default: the --iface address)");
  app.add_option("--public-ipv6", public_ipv6,
                 "This node's public IPv6 address, for EnableIPv6 (default: the uplink's first global IPv6 address)");
  app.add_option("--subnet-file", o.subnet_file, "Where to write the subnet.env the flannel CNI plugin reads")
      ->capture_default_str();
  app.add_flag("--ip-masq", o.ip_masq, "Masquerade traffic from the cluster network to the outside");
  app.add_flag("--iptables-forward-rules", o.forward_rules,
               "Accept forwarding from and to the cluster network (nftables rules, as flanneld's iptables ones); "
               "=false turns them off")
      ->capture_default_str();
  app.add_option("--iptables-resync", o.rules_resync_s, "Seconds between checks of the masquerade/forward rules")
      ->capture_default_str()
      ->check(CLI::Range(1, 3600));
  app.add_option("--subnet-lease-renew-margin", renew_margin_min, "Minutes before expiry to renew the lease (1-1439)")
      ->capture_default_str()
      ->check(CLI::Range(1, 1439));
  app.add_option("--subnet-lease-ttl", o.lease_ttl_s,
                 "Seconds the lease lives without renewal (flanneld: fixed 24 h; shorter only for testing)")
      ->capture_default_str()
      ->check(CLI::Range(int64_t{2}, int64_t{7 * 24 * 3600}));
  app.add_option("--reconcile-interval", o.reconcile_interval_s,
                 "Seconds between full reconciles of the routes (missing re-added, stale removed)")
      ->capture_default_str()
      ->check(CLI::Range(1, 3600));
  app.add_option("--route-protocol", o.route_protocol, "Protocol number on the agent's routes (ip route: proto N)")
      ->capture_default_str()
      ->check(CLI::Range(5, 255));
  app.add_option("--log-level", log_level, "debug|info|warning|error (logs go to stderr)")
      ->capture_default_str()
      ->check(CLI::IsMember({"debug", "info", "warning", "error"}));
  app.add_flag("--version", version, "Print the version and exit");
  CLI::App* cleanup =
      app.add_subcommand("cleanup",
                         "Remove the agent's nftables rules and every route of its protocol from this node (the lease "
                         "expires on its own)");

  // Go's flag package lets a later flag override an earlier one; so do we (a unit file's flags plus a drop-in's).
  for (CLI::Option* opt : app.get_options()) {
    if (opt->get_type_size_max() <= 1 && opt->get_name() != "--iface") {
      opt->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
    }
  }
  std::vector<std::string> argv = NormalizeGoFlags(argv_in);
  // flanneld's FLANNELD_<FLAG> variables, for every flag the command line does not give (flanneld's
  // flagutil.SetFlagsFromEnv): added in front of it, as --flag=value.
  std::vector<std::string> from_env;
  for (const CLI::Option* opt : app.get_options()) {
    for (const std::string& name : opt->get_lnames()) {
      if (name == "help" || name == "version") continue;
      auto it = env.find(EnvName(name));
      if (it == env.end()) continue;
      const std::string flag = "--" + name;
      bool given = std::any_of(argv.begin() + (argv.empty() ? 0 : 1), argv.end(),
                               [&](const std::string& a) { return a == flag || a.rfind(flag + "=", 0) == 0; });
      if (!given) from_env.push_back(flag + "=" + it->second);
    }
  }
  if (!argv.empty()) argv.insert(argv.begin() + 1, from_env.begin(), from_env.end());
  std::vector<const char*> cargv;
  for (const auto& a : argv) cargv.push_back(a.c_str());
  try {
    app.parse(static_cast<int>(cargv.size()), cargv.data());
  } catch (const CLI::ParseError& e) {
    cmd.kind = Command::kExit;
    cmd.exit_code = app.exit(e, out, err) == 0 ? 0 : 2;
    return cmd;
  }
  if (version) {
    out << cni::VersionLine("netiface-agent") << "\n";
    cmd.kind = Command::kExit;
    return cmd;
  }
  auto usage = [&](const std::string& msg) {
    err << "netiface-agent: " << msg << "\n";
    cmd.kind = Command::kExit;
    cmd.exit_code = 2;
    return cmd;
  };
  o.etcd.endpoints = etcd::SplitEndpoints(endpoints);
  if (o.etcd.endpoints.empty()) return usage("--etcd-endpoints is empty");
  while (o.prefix.size() > 1 && o.prefix.back() == '/') o.prefix.pop_back();
  if (o.prefix.empty() || o.prefix.front() != '/') return usage("--etcd-prefix must start with '/': " + o.prefix);
  o.uplink.ifaces = ifaces;
  if (!public_ip.empty()) {
    auto ip = cni::IpAddr::Parse(public_ip);
    if (!ip || !ip->is_v4()) return usage("--public-ip is not an IPv4 address: " + public_ip);
    o.uplink.public_ip = *ip;
  }
  if (!public_ipv6.empty()) {
    auto ip = cni::IpAddr::Parse(public_ipv6);
    if (!ip || ip->is_v4()) return usage("--public-ipv6 is not an IPv6 address: " + public_ipv6);
    o.uplink.public_ipv6 = *ip;
  }
  o.renew_margin_s = renew_margin_min * 60;
  static const std::map<std::string, log::Level> kLevels = {{"debug", log::Level::kDebug},
                                                            {"info", log::Level::kInfo},
                                                            {"warning", log::Level::kWarn},
                                                            {"error", log::Level::kError}};
  cmd.log_level = kLevels.at(log_level);
  cmd.kind = cleanup->parsed() ? Command::kCleanup : Command::kRun;
  return cmd;
}

}  // namespace netiface::agent
