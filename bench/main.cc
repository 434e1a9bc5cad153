// cni-bench: runs our plugins and the reference ones on the same work in one run, inside a throw-away
// "host" network namespace, and writes a markdown report plus gnuplot data files.
//   cni-bench --bin BUILD/bin --ref /usr/lib/cni --out docs/benchmarks.md --data OUTDIR [--n 200] [--quick]
#include <fcntl.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <thread>
#include <utility>

#include <fmt/format.h>

#include "chained.h"
#include "kernel_floor.h"
#include "scenario.h"
#include "spawn.h"

using namespace netiface::bench;
using nlohmann::json;
namespace fs = std::filesystem;

namespace {

struct Options {
  std::string bin, ref = "/usr/lib/cni", out, data;
  int n = 200;
  bool quick = false;
  bool only_chained = false;
};

// True when `path` is on ext4 without a journal (this machine's root file system is). Such an ext4 does not
// reuse an inode freed in the last 60 s: every new file scans past all of them first, so right after a run
// that deleted a few thousand files, creating one costs ~1 ms instead of ~0.05 ms.
bool OnJournalLessExt4(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return false;
  std::error_code ec;
  fs::path dev = fs::read_symlink(fmt::format("/sys/dev/block/{}:{}", major(st.st_dev), minor(st.st_dev)), ec);
  if (ec) return false;
  std::string name = dev.filename();
  return fs::exists("/proc/fs/ext4/" + name) && !fs::exists("/proc/fs/jbd2/" + name + "-8");
}

// Lets the machine settle between scenarios: flushes dirty pages (the scale scenario writes and deletes
// 60,000 files) and gives the kernel time to tear down the namespaces the last scenario deleted, which it
// does in the background. Without it the next scenario pays for the previous one.
void Settle() {
  ::sync();
  ::sleep(2);
}

// Settle(), and on a journal-less ext4 also the wait until the inodes the earlier runs freed are past that
// 60 s window. Both implementations get the same wait; --quick skips it.
class Settler {
 public:
  explicit Settler(bool wait_out_freed_inodes) : wait_(wait_out_freed_inodes) {}
  void operator()() {
    Settle();
    if (!wait_) return;
    auto ready = last_deletion_ + std::chrono::seconds(61);
    if (auto now = std::chrono::steady_clock::now(); now < ready) std::this_thread::sleep_for(ready - now);
  }
  // Called after a run that deleted files.
  void Deleted() { last_deletion_ = std::chrono::steady_clock::now(); }

 private:
  bool wait_;
  std::chrono::steady_clock::time_point last_deletion_ = std::chrono::steady_clock::now();
};

std::string F(double v) { return fmt::format("{:.2f}", v); }
std::string Ratio(double ours, double ref) { return ref > 0 ? fmt::format("{:.2f}", ours / ref) : "–"; }

json HostLocal(const std::string& subnet, const std::string& dir) {
  return {{"type", "host-local"},
          {"dataDir", dir},
          {"ranges", json::array({json::array({{{"subnet", subnet}}})})},
          {"routes", json::array({{{"dst", "0.0.0.0/0"}}})}};
}

json Conf(const std::string& name, const std::string& type) {
  return {{"cniVersion", "1.0.0"}, {"name", name}, {"type", type}};
}

// Enters a fresh network namespace for the rest of the process: every plugin we start runs in it, so
// nothing touches this machine's own namespace. It has no name, and the pods' named namespaces live in
// a /run/netns of this process's own mount namespace: however the bench ends (SIGTERM, SIGKILL), the
// kernel frees all of them with it, and nothing is left in the machine's /run/netns.
void EnterHostNamespace() {
  auto fail = [](const std::string& what) {
    std::cerr << "cannot " << what << ": " << std::strerror(errno) << "\n";
    std::exit(1);
  };
  if (::unshare(CLONE_NEWNS) != 0) fail("unshare the mount namespace");
  if (::mount(nullptr, "/", nullptr, MS_REC | MS_SLAVE, nullptr) != 0) fail("make / a slave mount");
  ::mkdir("/run/netns", 0755);
  if (::mount("netiface-bench", "/run/netns", "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC, "mode=0755") != 0) {
    fail("mount a private /run/netns");
  }
  if (::unshare(CLONE_NEWNET) != 0) fail("unshare the network namespace");
  if (std::system("ip link set lo up") != 0) fail("bring lo up");
}

std::string SeqRow(const std::string& config, const std::string& impl, const SeqReport& r) {
  return fmt::format("| {} | {} | {} | {} | {:.1f} | {} | {} | {:.1f} | {} | {} / {} | {} |\n", config, impl,
                     F(r.add.median), F(r.add.p95), r.add.ops_per_s, F(r.del.median), F(r.del.p95), r.del.ops_per_s,
                     F(r.check.median), r.rss_add_kb, r.rss_del_kb, r.fails);
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto next = [&]() -> std::string { return i + 1 < argc ? argv[++i] : ""; };
    if (a == "--bin")
      o.bin = next();
    else if (a == "--ref")
      o.ref = next();
    else if (a == "--out")
      o.out = next();
    else if (a == "--data")
      o.data = next();
    else if (a == "--n")
      o.n = std::atoi(next().c_str());
    else if (a == "--quick")
      o.quick = true;
    else if (a == "--only-chained")
      o.only_chained = true;
  }
  if (o.bin.empty() || o.out.empty() || o.data.empty()) {
    std::cerr
        << "usage: cni-bench --bin BUILD/bin --out FILE.md --data DIR [--ref DIR] [--n N] [--quick] [--only-chained]\n";
    return 2;
  }
  if (o.quick) o.n = 20;
  fs::create_directories(o.data);
  const bool journal_less = OnJournalLessExt4(o.data);
  EnterHostNamespace();
  // cni-bench-probe sits beside cni-bench (bench/CMakeLists.txt): every plugin call is spawned through it.
  UseProbe((fs::read_symlink("/proc/self/exe").parent_path() / "cni-bench-probe").string(), o.data + "/probe");
  const std::string work = o.data + "/work";
  const int n = o.n, n_check = std::min(20, n), scale_n = o.quick ? 10 : 50;
  std::ostringstream md, chart;

  md << "# Benchmarks: netiface vs the reference plugins\n\n"
     << "Generated by `bash bench/run.sh` (one run of `cni-bench`, ours and the reference on the same work, "
        "interleaved by scenario, in a throw-away network namespace). Times are wall-clock milliseconds from "
        "spawn to reap of the plugin process, so they include process start and the delegated IPAM process. "
        "Peak RSS is the max of the plugin and the delegate it reaped. Each plugin is spawned by "
        "`cni-bench-probe` (bench/probe.cc), a static helper of a few hundred kB, not by the bench itself: "
        "Linux counts the memory of the process a plugin was spawned from in the plugin's peak RSS, so "
        "spawned from the bench every plugin would seem to weigh at least the bench. The probe's own peak "
        "(the floor no figure can go below) is given at the end. This machine is shared and noisy: read "
        "the ratios, not the absolute numbers.\n\n";
  if (o.data.rfind("/tmp/", 0) != 0)
    md << "The data folders are outside /tmp (bench/run.sh puts them in the build tree): on these machines "
          "ext4 spent 0.1-0.35 ms on each new file in /tmp's part of the disk (its scan for recently freed "
          "inodes) against ~10 us in /root, /var/lib or the build tree, a cost that falls on whichever plugin "
          "creates more files.\n\n";
  if (journal_less)
    md << "The data folders are on ext4 without a journal, which does not reuse an inode freed in the last 60 s: "
          "each new file first scans past all of them, so a run that follows thousands of deletions pays up to "
          "~1 ms per file it creates for the runs before it. "
       << (o.quick ? "This `--quick` run did not wait that out.\n\n"
                   : "Each sequential run below therefore starts 61 s after the previous run's last deletion.\n\n");

  const int existing_mappings = o.quick ? 20 : 100;
  if (o.only_chained) {  // section 7 alone, e.g. to measure a change to the chained plugins
    md << ChainedSection(o.bin, o.ref, work, n, n_check, existing_mappings);
    md << "\nThe probe's own peak RSS, the floor of every peak RSS above: " << ProbeFloorKb() << " kB.\n";
    std::ofstream(o.out) << md.str();
    std::cout << md.str();
    std::error_code ec;
    fs::remove_all(work, ec);
    return 0;
  }

  // 1. Sequential ADD / CHECK / DEL.
  md << "## 1. Sequential: N=" << n << " ADD, " << n_check << " CHECK, N DEL (cniVersion 1.0.0)\n\n"
     << "| config | impl | ADD median | ADD p95 | ADD ops/s | DEL median | DEL p95 | DEL ops/s | CHECK median | "
        "peak RSS kB ADD / DEL | fails |\n|---|---|---|---|---|---|---|---|---|---|---|\n";
  struct Pair {
    std::string config;
    Setup ours, ref;
    bool netns;
  };
  auto bridge_conf = [&](const std::string& br, const std::string& dir) {
    json c = Conf("bench-bridge", "bridge");
    c["bridge"] = br;
    c["isGateway"] = true;
    c["ipMasq"] = false;
    c["ipam"] = HostLocal("10.244.0.0/16", dir);
    return c;
  };
  auto routed_conf = [&](const std::string& type, const std::string& dir) {
    json c = Conf("bench-routed", type);
    c["ipMasq"] = false;
    c["dataDir"] = dir + "-endpoints";  // veth-workload's records (ptp ignores the key)
    c["ipam"] = HostLocal("10.245.0.0/16", dir);
    return c;
  };
  json hl_ours = Conf("bench-ipam", "host-local"), hl_ref = hl_ours;
  hl_ours["ipam"] = HostLocal("10.246.0.0/16", work + "/hl-ours");
  hl_ref["ipam"] = HostLocal("10.246.0.0/16", work + "/hl-ref");

  // flannel: a subnet.env of our own; ours renders bridge + host-local.
  fs::create_directories(work);
  // Before every sequential run (their ADD phases are what the goals compare), the long wait; before the
  // parallel, scale and floor scenarios only the short one.
  Settler settle_run(!o.quick && journal_less);
  auto measure = [&](const Setup& s, bool netns) {
    settle_run();
    SeqReport r = RunSequential(s, n, n_check, netns);
    settle_run.Deleted();
    return r;
  };
  std::ofstream(work + "/subnet.env") << "FLANNEL_NETWORK=10.248.0.0/16\nFLANNEL_SUBNET=10.248.1.1/24\n"
                                         "FLANNEL_MTU=1450\nFLANNEL_IPMASQ=true\n";
  json flannel = Conf("bench-flannel", "flannel");
  flannel["subnetFile"] = work + "/subnet.env";
  flannel["dataDir"] = work + "/flannel-scratch";
  flannel["delegate"] = {{"bridge", "nfb-fl0"}, {"hairpinMode", true}};
  flannel["ipam"] = {{"dataDir", work + "/fl-ours"}};
  // What that flannel config renders for its delegate (the flannel issue's rules; our flannel saves the
  // same object): the reference bridge + host-local runs it right after ours, so that the ratio compares
  // the same kernel work on the same bridge setup, at the same point of the run.
  json flannel_delegate = Conf("bench-flannel", "bridge");
  flannel_delegate["bridge"] = "nfb-fl-r";
  flannel_delegate["hairpinMode"] = true;
  flannel_delegate["ipMasq"] = false;  // FLANNEL_IPMASQ=true: flanneld masquerades
  flannel_delegate["mtu"] = 1450;
  flannel_delegate["isGateway"] = true;
  flannel_delegate["ipam"] = {{"type", "host-local"},
                              {"dataDir", work + "/fl-ref"},
                              {"ranges", json::array({json::array({{{"subnet", "10.248.1.0/24"}}})})},
                              {"routes", json::array({{{"dst", "10.248.0.0/16"}}})}};

  std::vector<Pair> pairs = {
      {"host-local alone",
       {"hl-ours", o.bin + "/host-local", o.bin, hl_ours, work + "/hl-ours"},
       {"hl-ref", o.ref + "/host-local", o.ref, hl_ref, work + "/hl-ref"},
       false},
      {"veth-workload vs ptp (+ host-local)",
       {"vw-ours", o.bin + "/veth-workload", o.bin, routed_conf("veth-workload", work + "/vw-ours"), work + "/vw-ours"},
       {"pt-ref", o.ref + "/ptp", o.ref, routed_conf("ptp", work + "/pt-ref"), work + "/pt-ref"},
       true},
      {"bridge + host-local",
       {"br-ours", o.bin + "/bridge", o.bin, bridge_conf("nfb-br-o", work + "/br-ours"), work + "/br-ours"},
       {"br-ref", o.ref + "/bridge", o.ref, bridge_conf("nfb-br-r", work + "/br-ref"), work + "/br-ref"},
       true},
  };
  std::map<std::string, SeqReport> seq;
  for (auto& p : pairs) {
    std::cerr << "== " << p.config << "\n";
    seq[p.ours.label] = measure(p.ours, p.netns);
    seq[p.ref.label] = measure(p.ref, p.netns);
    md << SeqRow(p.config, "netiface", seq[p.ours.label]) << SeqRow(p.config, "reference", seq[p.ref.label]);
    md << fmt::format("| {} | **ours/ref** | **{}** | {} | | **{}** | {} | | {} | | |\n", p.config,
                      Ratio(seq[p.ours.label].add.median, seq[p.ref.label].add.median),
                      Ratio(seq[p.ours.label].add.p95, seq[p.ref.label].add.p95),
                      Ratio(seq[p.ours.label].del.median, seq[p.ref.label].del.median),
                      Ratio(seq[p.ours.label].del.p95, seq[p.ref.label].del.p95),
                      Ratio(seq[p.ours.label].check.median, seq[p.ref.label].check.median));
    chart << '"' << p.config << "\" " << F(seq[p.ours.label].add.median) << ' ' << F(seq[p.ref.label].add.median) << ' '
          << F(seq[p.ours.label].del.median) << ' ' << F(seq[p.ref.label].del.median) << "\n";
  }
  {
    std::cerr << "== flannel\n";
    Setup fl{"fl-ours", o.bin + "/flannel", o.bin, flannel, work + "/fl-ours"};
    seq["fl-ours"] = measure(fl, true);
    // Our bridge on the same config: what flannel itself adds to the chain.
    json ours_delegate = flannel_delegate;
    ours_delegate["bridge"] = "nfb-fl-o";
    ours_delegate["ipam"]["dataDir"] = work + "/fl-ours-bridge";
    Setup flo{"fl-ours-bridge", o.bin + "/bridge", o.bin, ours_delegate, work + "/fl-ours-bridge"};
    seq["fl-ours-bridge"] = measure(flo, true);
    Setup flb{"fl-ref-bridge", o.ref + "/bridge", o.ref, flannel_delegate, work + "/fl-ref"};
    seq["fl-ref-bridge"] = measure(flb, true);
    md << SeqRow("flannel → bridge + host-local", "netiface", seq["fl-ours"])
       << SeqRow("flannel → bridge + host-local", "netiface bridge + host-local alone, on flannel's delegate config",
                 seq["fl-ours-bridge"])
       << SeqRow("flannel → bridge + host-local", "reference bridge + host-local, on flannel's delegate config",
                 seq["fl-ref-bridge"]);
    std::string ref_flannel = o.ref + "/flannel";
    if (fs::exists(ref_flannel)) {
      Setup flr{"fl-ref", ref_flannel, o.ref, flannel, work + "/fl-ours"};
      seq["fl-ref"] = measure(flr, true);
      md << SeqRow("flannel → bridge + host-local", "reference flannel", seq["fl-ref"]);
    }
    const SeqReport& ours = seq["fl-ours"];
    const SeqReport& ref = seq["fl-ref-bridge"];
    md << fmt::format(
        "| flannel → bridge + host-local | **ours/ref bridge+host-local** | **{}** | {} | | **{}** | {} | | {} | | |\n",
        Ratio(ours.add.median, ref.add.median), Ratio(ours.add.p95, ref.add.p95),
        Ratio(ours.del.median, ref.del.median), Ratio(ours.del.p95, ref.del.p95),
        Ratio(ours.check.median, ref.check.median));
    chart << "\"flannel (ref: bridge)\" " << F(ours.add.median) << ' ' << F(ref.add.median) << ' ' << F(ours.del.median)
          << ' ' << F(ref.del.median) << "\n";
    if (ref.fails > 0)
      md << "\nThe reference bridge's fails on flannel's config are its CHECKs: it reports the routes without a "
            "gateway that flannel's subnet.env adds as missing (its known CHECK bug).\n";
  }
  if (!fs::exists(o.ref + "/flannel"))
    md << "\nThe reference flannel plugin is not installed (Debian does not ship it); flannel is compared with "
          "the reference bridge + host-local it replaces, run on the delegate config flannel renders, right "
          "after ours.\n";

  // 2. VERSION: process start.
  md << "\n## 2. Process start: VERSION (" << n
     << " calls)\n\n| plugin | netiface median / p95 | reference median / p95 | ours/ref |\n|---|---|---|---|\n";
  for (const char* p : {"host-local", "bridge"}) {
    Stats a = RunVersion(o.bin + "/" + p, n), b = RunVersion(o.ref + "/" + p, n);
    md << fmt::format("| {} | {} / {} | {} / {} | {} |\n", p, F(a.median), F(a.p95), F(b.median), F(b.p95),
                      Ratio(a.median, b.median));
  }
  {
    Stats a = RunVersion(o.bin + "/veth-workload", n), b = RunVersion(o.ref + "/ptp", n);
    md << fmt::format("| veth-workload vs ptp | {} / {} | {} / {} | {} |\n", F(a.median), F(a.p95), F(b.median),
                      F(b.p95), Ratio(a.median, b.median));
  }

  // 3. Parallel.
  const int workers = 4, cycles = o.quick ? 5 : 50;
  md << "\n## 3. Parallel: " << workers << " workers × " << cycles
     << " (ADD+DEL), bridge + host-local, shared bridge and dataDir\n\n"
     << "| impl | ADD median / p95 | DEL median / p95 | throughput (ADD+DEL)/s | fails |\n|---|---|---|---|---|\n";
  Settle();
  ParReport par_ours = RunParallel(pairs[2].ours, workers, cycles),
            par_ref = RunParallel(pairs[2].ref, workers, cycles);
  for (auto& [impl, r] : {std::pair{"netiface", par_ours}, std::pair{"reference", par_ref}})
    md << fmt::format("| {} | {} / {} | {} / {} | {:.1f} | {} |\n", impl, F(r.add.median), F(r.add.p95),
                      F(r.del.median), F(r.del.p95), r.ops_per_s, r.fails);
  md << fmt::format("| **ours/ref** | **{}** | **{}** | {:.2f}× | |\n", Ratio(par_ours.add.median, par_ref.add.median),
                    Ratio(par_ours.del.median, par_ref.del.median),
                    par_ref.ops_per_s > 0 ? par_ours.ops_per_s / par_ref.ops_per_s : 0);

  // 4. host-local scale: last of the process scenarios, because creating and deleting 60,000 files
  // keeps the file system's journal busy for a while after it.
  std::ostringstream scale_md;
  scale_md
      << "\n## 4. host-local cost vs pool size (/16, K existing reservations in the reference's format, then "
      << scale_n << " ADD, " << scale_n << " DEL, " << scale_n << " DEL of unknown IDs)\n\n"
      << "| K | netiface ADD | reference ADD | netiface DEL | reference DEL | netiface DEL unknown | reference DEL unknown | fails ours/ref |\n"
         "|---|---|---|---|---|---|---|---|\n";
  std::ostringstream scale_dat;
  json scale_conf = Conf("bench-scale", "host-local");
  std::vector<int> ks = o.quick ? std::vector<int>{0, 1000} : std::vector<int>{0, 1000, 10000, 30000};
  double ours_add0 = 0, ours_del0 = 0, ours_add_max = 0, ours_del_max = 0;
  for (int k : ks) {
    Settle();
    std::cerr << "== host-local scale K=" << k << "\n";
    json co = scale_conf, cr = scale_conf;
    co["ipam"] = HostLocal("10.247.0.0/16", work + "/sc-ours");
    cr["ipam"] = HostLocal("10.247.0.0/16", work + "/sc-ref");
    ScaleReport a = RunHostLocalScale({"sc-ours", o.bin + "/host-local", o.bin, co, work + "/sc-ours"}, k, scale_n);
    ScaleReport b = RunHostLocalScale({"sc-ref", o.ref + "/host-local", o.ref, cr, work + "/sc-ref"}, k, scale_n);
    scale_md << fmt::format("| {} | {} | {} | {} | {} | {} | {} | {} / {} |\n", k, F(a.add.median), F(b.add.median),
                            F(a.del.median), F(b.del.median), F(a.del_unknown.median), F(b.del_unknown.median), a.fails,
                            b.fails);
    scale_dat << k << ' ' << F(a.add.median) << ' ' << F(b.add.median) << ' ' << F(a.del.median) << ' '
              << F(b.del.median) << "\n";
    if (k == 0) {
      ours_add0 = a.add.median;
      ours_del0 = a.del.median;
    }
    ours_add_max = a.add.median;
    ours_del_max = a.del.median;
  }

  md << scale_md.str();

  // 5. Kernel floor.
  Settle();
  std::cerr << "== kernel floor\n";
  FloorReport routed = RunRoutedFloor(n), bridged = RunBridgeFloor(n);
  md << "\n## 5. Kernel floor (the same netlink work in one process: no exec, no JSON, no IPAM; N=" << n << ")\n\n"
     << "| dataplane | ADD median / p95 | DEL median / p95 |\n|---|---|---|\n"
     << fmt::format("| routed (veth-workload's calls) | {} / {} | {} / {} |\n", F(routed.add.median), F(routed.add.p95),
                    F(routed.del.median), F(routed.del.p95))
     << fmt::format("| bridge (bridge's calls) | {} / {} | {} / {} |\n", F(bridged.add.median), F(bridged.add.p95),
                    F(bridged.del.median), F(bridged.del.p95));

  // 6. Goals.
  auto verdict = [](bool ok) { return ok ? "met" : "**not met**"; };
  const auto& vw = seq["vw-ours"];
  const auto& pt = seq["pt-ref"];
  const auto& fl = seq["fl-ours"];
  const auto& br = seq["fl-ref-bridge"];
  const auto& hl = seq["hl-ours"];
  const auto& hlr = seq["hl-ref"];
  md << "\n## 6. Where we stand against the goals of the plugin issues\n\n| goal | measured | verdict |\n|---|---|---|\n"
     << fmt::format("| host-local ADD at {} reservations within 1.5× of an empty pool | {} vs {} ms ({}×) | {} |\n",
                    ks.back(), F(ours_add_max), F(ours_add0), Ratio(ours_add_max, ours_add0),
                    verdict(ours_add_max <= 1.5 * ours_add0))
     << fmt::format("| host-local DEL at {} reservations within 1.5× of an empty pool | {} vs {} ms ({}×) | {} |\n",
                    ks.back(), F(ours_del_max), F(ours_del0), Ratio(ours_del_max, ours_del0),
                    verdict(ours_del_max <= 1.5 * ours_del0))
     << fmt::format("| host-local ADD well under the reference's | {} vs {} ms ({}×) | {} |\n", F(hl.add.median),
                    F(hlr.add.median), Ratio(hl.add.median, hlr.add.median),
                    verdict(hl.add.median < 0.5 * hlr.add.median))
     << fmt::format("| veth-workload ADD ≤ 1/3 of ptp + host-local | {} vs {} ms ({}×) | {} |\n", F(vw.add.median),
                    F(pt.add.median), Ratio(vw.add.median, pt.add.median), verdict(vw.add.median <= pt.add.median / 3))
     << fmt::format("| veth-workload DEL within 1.2× of the kernel floor | {} vs {} ms ({}×) | {} |\n",
                    F(vw.del.median), F(routed.del.median), Ratio(vw.del.median, routed.del.median),
                    verdict(vw.del.median <= 1.2 * routed.del.median))
     << fmt::format(
            "| flannel → bridge → host-local ADD ≤ 1/3 of reference bridge + host-local | {} vs {} ms ({}×) | {} |\n",
            F(fl.add.median), F(br.add.median), Ratio(fl.add.median, br.add.median),
            verdict(fl.add.median <= br.add.median / 3))
     << fmt::format("| flannel DEL within 1.2× of the kernel floor | {} vs {} ms ({}×) | {} |\n", F(fl.del.median),
                    F(bridged.del.median), Ratio(fl.del.median, bridged.del.median),
                    verdict(fl.del.median <= 1.2 * bridged.del.median))
     << fmt::format(
            "| veth-workload + host-local ADD ≤ 1/4 of ptp + host-local (packaging issue) | {} vs {} ms ({}×) "
            "| {} |\n",
            F(vw.add.median), F(pt.add.median), Ratio(vw.add.median, pt.add.median),
            verdict(vw.add.median <= pt.add.median / 4));
  // Peak RSS per call against the reference's, on the three pairs of section 1 (the worst of them).
  double worst_rss = 0;
  std::string worst_rss_pair;
  for (const auto& [ours, ref] : {std::pair{"hl-ours", "hl-ref"}, {"vw-ours", "pt-ref"}, {"br-ours", "br-ref"}}) {
    const SeqReport& a = seq[ours];
    const SeqReport& b = seq[ref];
    const double r = std::max(b.rss_add_kb > 0 ? double(a.rss_add_kb) / double(b.rss_add_kb) : 0.0,
                              b.rss_del_kb > 0 ? double(a.rss_del_kb) / double(b.rss_del_kb) : 0.0);
    if (r >= worst_rss) {
      worst_rss = r;
      worst_rss_pair = fmt::format("{}: {} / {} kB ADD, {} / {} kB DEL", ours, a.rss_add_kb, b.rss_add_kb, a.rss_del_kb,
                                   b.rss_del_kb);
    }
  }
  md << fmt::format(
      "| peak RSS per call ≤ 1/2 of the reference's (packaging issue; worst of section 1's pairs) | "
      "{} ({:.2f}×) | {} |\n",
      worst_rss_pair, worst_rss, verdict(worst_rss > 0 && worst_rss <= 0.5));
  // 7. The chained plugins.
  Settle();
  md << ChainedSection(o.bin, o.ref, work, n, n_check, existing_mappings);
  md << "\nThe probe's own peak RSS, the floor of every peak RSS above: " << ProbeFloorKb() << " kB.\n";
  md << "\n![ours vs reference per operation, and host-local cost vs pool size](benchmarks.png)\n";

  std::ofstream(o.out) << md.str();
  std::ofstream(o.data + "/ops.dat") << chart.str();
  std::ofstream(o.data + "/scale.dat") << scale_dat.str();
  std::cout << md.str();
  std::error_code ec;
  fs::remove_all(work, ec);
  return 0;
}
