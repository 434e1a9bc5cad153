// agent-bench: measures the built netiface-agent against a real etcd, host-gw and then vxlan, entirely
// in namespaces it makes (agent_rig.h), and writes a markdown report.
//   agent-bench --bin BUILD/bin --out docs/agent-benchmarks.md [--quick]
#include <sys/utsname.h>
#include <unistd.h>

#include <ctime>
#include <fstream>
#include <iostream>
#include <stdexcept>
#include <string>
#include <thread>

#include "agent_cases.h"
#include "agent_pod_path.h"
#include "agent_procs.h"
#include "agent_report_md.h"
#include "agent_rig.h"

using namespace netiface::bench::agent;

namespace {

constexpr std::chrono::microseconds kProbeInterval(500);

struct Options {
  std::string bin, out;
  Counts counts;
};

ReportFacts Facts(const Counts& counts, double run_s) {
  ReportFacts f;
  utsname u{};
  ::uname(&u);
  f.kernel = u.release;
  char date[32];
  std::time_t now = std::time(nullptr);
  std::strftime(date, sizeof date, "%Y-%m-%d %H:%M UTC", std::gmtime(&now));
  f.date = date;
  f.cpus = std::thread::hardware_concurrency();
  std::string v = Sh("/usr/bin/etcd --version").out;
  v = v.substr(0, v.find('\n'));
  f.etcd_version = v.starts_with("etcd Version: ") ? "etcd " + v.substr(14) : v;
  f.flannel_search = Sh("apt-cache search flannel").out;
  f.counts = counts;
  f.probe_interval_ms = std::chrono::duration<double, std::milli>(kProbeInterval).count();
  f.run_s = run_s;
  return f;
}

void Run(const Options& o) {
  Clock::time_point start = Clock::now();
  Rig rig(o.bin);
  rig.Setup(kHostGwConfig);
  std::vector<Peer> subnets;
  for (auto [second, vxlan] : {std::pair{200, false}, {201, false}, {210, true}, {211, true}}) {
    for (const Peer& p : RemoteNodePeers(second, o.counts.n_event, vxlan)) subnets.push_back(p);
  }
  RemoteNode remote(rig, subnets);
  BackendResults hostgw = RunHostGw(rig, remote, o.counts, kProbeInterval);
  BackendResults vxlan = RunVxlan(rig, remote, o.counts, kProbeInterval);
  rig.Finish();
  std::string md = RenderReport(hostgw, vxlan, Facts(o.counts, Ms(Clock::now() - start) / 1000));
  std::ofstream f(o.out, std::ios::trunc);
  f << md;
  if (!f) throw std::runtime_error("cannot write " + o.out);
}

int Usage() {
  std::cerr << "usage: agent-bench --bin BUILD/bin --out REPORT.md [--quick]\n";
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  InstallSignalTeardown();
  Options o;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto next = [&]() -> std::string { return i + 1 < argc ? argv[++i] : ""; };
    if (a == "--bin")
      o.bin = next();
    else if (a == "--out")
      o.out = next();
    else if (a == "--quick")
      o.counts = Counts{.n_start = 3, .n_event = 5, .others = 200, .n_bulk_start = 2, .n_steady = 3, .n_repair = 2};
    else
      return Usage();
  }
  if (o.bin.empty() || o.out.empty()) return Usage();
  if (::geteuid() != 0) {
    std::cerr << "agent-bench: needs root (it makes network namespaces)\n";
    return 2;
  }
  if (::access((o.bin + "/netiface-agent").c_str(), X_OK) != 0) {
    std::cerr << "agent-bench: no " << o.bin << "/netiface-agent: build it first\n";
    return 2;
  }
  int rc = 0;
  try {
    Run(o);
    std::cerr << "agent-bench: wrote " << o.out << "\n";
  } catch (const std::exception& e) {
    std::cerr << "agent-bench: " << e.what() << "\n";
    rc = 1;
  }
  TearDownAll();
  return rc;
}
