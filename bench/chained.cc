#include "chained.h"

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <iostream>

#include <fmt/format.h>

#include "spawn.h"

namespace netiface::bench {
namespace {

using nlohmann::json;

std::string Ns(const std::string& tag, int i) { return tag + "-" + std::to_string(i); }
std::string HostEnd(const std::string& tag, int i) { return fmt::format("nfc{}{}", tag.substr(tag.size() - 3), i); }
std::string Addr(int i) { return fmt::format("10.250.{}.{}", 1 + i / 250, 1 + i % 250); }

void Sh(const std::string& cmd) {
  if (std::system(cmd.c_str()) != 0) std::cerr << "bench: failed: " << cmd.substr(0, 200) << "\n";
}

// Containers [0, count): a namespace each, eth0 in it, its peer up in ours.
void Prepare(const std::string& tag, int count) {
  std::string cmd;
  for (int i = 0; i < count; ++i) {
    const std::string ns = Ns(tag, i), host = HostEnd(tag, i);
    cmd += fmt::format(
        "ip netns add {0} && ip -n {0} link set lo up && ip link add {1} type veth peer name eth0 netns {0} && "
        "ip link set {1} up && ip -n {0} link set eth0 up && ip -n {0} addr add {2}/16 dev eth0\n",
        ns, host, Addr(i));
  }
  Sh(cmd);
}

void Remove(const std::string& tag, int count) {
  std::string cmd;
  for (int i = 0; i < count; ++i) cmd += "ip netns del " + Ns(tag, i) + " 2>/dev/null; ";
  Sh(cmd);
}

json Prev(const std::string& tag, int i) {
  return {{"cniVersion", "1.0.0"},
          {"interfaces",
           json::array({{{"name", HostEnd(tag, i)}, {"mac", "ee:ee:ee:ee:ee:ee"}},
                        {{"name", "eth0"}, {"mac", "0a:58:0a:fa:00:02"}, {"sandbox", "/run/netns/" + Ns(tag, i)}}})},
          {"ips", json::array({{{"address", Addr(i) + "/16"}, {"interface", 1}}})}};
}

}  // namespace

SeqReport RunChained(const ChainedSetup& s, int n, int n_check, int existing) {
  const std::string tag = fmt::format("nfc{}{}", getpid() % 1000, s.label.substr(0, 3));
  const int total = existing + n;
  Prepare(tag, total);
  auto call = [&](const std::string& cmd, int i) {
    json c = s.conf(i);
    c["prevResult"] = Prev(tag, i);
    return Spawn(
        CniCall(s.plugin, cmd, "bench-" + std::to_string(i), "/run/netns/" + Ns(tag, i), "/nonexistent", c.dump()));
  };
  SeqReport r;
  for (int i = 0; i < existing; ++i) {
    if (call("ADD", i).exit_code != 0) ++r.fails;
  }
  std::vector<double> add, del, check;
  for (int i = existing; i < total; ++i) {
    auto o = call("ADD", i);
    if (o.exit_code != 0) ++r.fails;
    add.push_back(o.ms);
    r.rss_add_kb = std::max(r.rss_add_kb, o.max_rss_kb);
  }
  for (int i = existing; i < existing + std::min(n, n_check); ++i) {
    auto o = call("CHECK", i);
    if (o.exit_code != 0) ++r.fails;
    check.push_back(o.ms);
  }
  for (int i = existing; i < total; ++i) {
    auto o = call("DEL", i);
    if (o.exit_code != 0) ++r.fails;
    del.push_back(o.ms);
    r.rss_del_kb = std::max(r.rss_del_kb, o.max_rss_kb);
  }
  for (int i = 0; i < existing; ++i) {
    if (call("DEL", i).exit_code != 0) ++r.fails;
  }
  Remove(tag, total);
  r.add = Summarize(add);
  r.del = Summarize(del);
  r.check = Summarize(check);
  return r;
}

std::string ChainedSection(const std::string& bin, const std::string& ref, const std::string& work, int n, int n_check,
                           int existing) {
  auto base = [](const std::string& type) {
    return json{{"cniVersion", "1.0.0"}, {"name", "bench-" + type}, {"type", type}};
  };
  auto portmap = [&](int i) {
    json c = base("portmap");
    c["runtimeConfig"] = {
        {"portMappings", json::array({{{"hostPort", 20000 + i}, {"containerPort", 80}, {"protocol", "tcp"}}})}};
    return c;
  };
  auto bandwidth = [&](int) {
    json c = base("bandwidth");
    c.update({{"ingressRate", 8000000}, {"ingressBurst", 80000}, {"egressRate", 16000000}, {"egressBurst", 160000}});
    return c;
  };
  auto tuning = [&](const std::string& dir) {
    return [dir, base](int) {
      json c = base("tuning");
      c.update({{"sysctl", {{"net.core.somaxconn", "500"}}}, {"mtu", 1400}, {"promisc", true}, {"dataDir", dir}});
      return c;
    };
  };
  auto firewall = [&](int) { return base("firewall"); };
  struct Row {
    std::string config;
    std::string plugin;
    std::function<json(int)> ours, theirs;
    int existing;
  };
  const std::vector<Row> rows = {
      {"portmap (1 mapping)", "portmap", portmap, portmap, 0},
      {fmt::format("portmap, {} attachments' mappings already on the node", existing), "portmap", portmap, portmap,
       existing},
      {"bandwidth (ingress + egress)", "bandwidth", bandwidth, bandwidth, 0},
      {"tuning (sysctl, mtu, promisc)", "tuning", tuning(work + "/tuning-ours"), tuning(work + "/tuning-ref"), 0},
      {"firewall", "firewall", firewall, firewall, 0},
  };
  std::string md = fmt::format(
      "\n## 7. Chained plugins: N={} ADD, {} CHECK, N DEL on prepared attachments (cniVersion 1.0.0)\n\n"
      "Each container is a namespace with eth0 (its veth peer in the bench's host namespace) and an address; "
      "the plugin gets the prevResult a main plugin would have printed. The reference's portmap and firewall "
      "run iptables (Debian's iptables-nft); ours write nftables through libnftables.\n\n"
      "| config | ADD ours / ref | ADD ours/ref | DEL ours / ref | DEL ours/ref | CHECK ours / ref | peak RSS kB "
      "ADD ours / ref | fails ours / ref |\n|---|---|---|---|---|---|---|---|\n",
      n, n_check);
  auto F = [](double v) { return fmt::format("{:.2f}", v); };
  auto ratio = [&](double a, double b) { return b > 0 ? F(a / b) : std::string("–"); };
  auto row = [&](const std::string& config, const SeqReport& a, const SeqReport& b) {
    return fmt::format("| {} | {} / {} | **{}** | {} / {} | **{}** | {} / {} | {} / {} | {} / {} |\n", config,
                       F(a.add.median), F(b.add.median), ratio(a.add.median, b.add.median), F(a.del.median),
                       F(b.del.median), ratio(a.del.median, b.del.median), F(a.check.median), F(b.check.median),
                       a.rss_add_kb, b.rss_add_kb, a.fails, b.fails);
  };
  for (const Row& r : rows) {
    std::cerr << "== chained: " << r.config << "\n";
    SeqReport a = RunChained({"ours-" + r.plugin, bin + "/" + r.plugin, r.ours}, n, n_check, r.existing);
    SeqReport b = RunChained({"ref-" + r.plugin, ref + "/" + r.plugin, r.theirs}, n, n_check, r.existing);
    md += row(r.config, a, b);
  }
  {
    std::cerr << "== loopback\n";
    Setup ours{"lo-ours", bin + "/loopback", bin, base("loopback"), ""};
    Setup theirs{"lo-ref", ref + "/loopback", ref, base("loopback"), ""};
    md += row("loopback", RunSequential(ours, n, n_check, true), RunSequential(theirs, n, n_check, true));
  }
  std::error_code ec;
  std::filesystem::remove_all(work + "/tuning-ours", ec);
  std::filesystem::remove_all(work + "/tuning-ref", ec);
  return md;
}

}  // namespace netiface::bench
