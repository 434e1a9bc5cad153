#include "agent_report_md.h"

#include <fmt/format.h>

#include "agent_cases.h"
#include "agent_report.h"

namespace netiface::bench::agent {
namespace {

std::string Joined(const std::set<int>& s) {
  std::string out;
  for (int v : s) out += (out.empty() ? "" : ", ") + std::to_string(v);
  return out;
}

std::string FirstLine(const std::string& s) { return s.substr(0, s.find('\n')); }

double Median(const std::vector<double>& xs) { return Summarize(xs).median; }

// b[i] - a[i] for every i both have.
std::vector<double> Minus(const std::vector<double>& b, const std::vector<double>& a) {
  std::vector<double> out;
  for (size_t i = 0; i < std::min(a.size(), b.size()); ++i) out.push_back(b[i] - a[i]);
  return out;
}

// The rows every event case has, for one of its two sets of leases.
std::string EventRows(const std::string& label, const std::string& entries, const EventSamples& e) {
  std::string md;
  md += SpreadRow(label + ": **" + entries + " in the kernel (t1 − t0)**", Summarize(e.programmed), 2);
  md += SpreadRow(label + ": Put returned", Summarize(e.put), 2);
  md += SpreadRow(label + ": watch event", Summarize(e.watch), 2);
  md += SpreadRow(label + ": watch event → " + entries + " (the agent's part)", Summarize(e.agent), 2);
  md += SpreadRow(label + ": first answered probe sent", Summarize(e.probe_sent), 2);
  md += SpreadRow(label + ": **echo reply received (pod reached)**", Summarize(e.reply), 2);
  md += SpreadRow(label + ": " + entries + " → echo reply", Summarize(Minus(e.reply, e.programmed)), 2);
  return md;
}

std::string Ratio(double num, double den) { return den > 0 && num > 0 ? fmt::format("{:.2f}", num / den) : "–"; }

// "| label | a | b | b / a |" of two medians.
std::string SideRow(const std::string& label, const std::vector<double>& hostgw, const std::vector<double>& vxlan,
                    int digits = 1) {
  double a = Median(hostgw), b = Median(vxlan);
  return fmt::format("| {} | {:.{}f} | {:.{}f} | {} |\n", label, a, digits, b, digits, Ratio(b, a));
}

std::string Intro(const ReportFacts& f) {
  const std::string others = Thousands(f.counts.others);
  std::string md = "# netiface-agent benchmarks\n\n";
  md += fmt::format(
      "Written by `bash bench/agent.sh [BUILD_DIR]` (root; {}; the run took {:.0f} s). Machine: {} CPUs "
      "(`nproc`), kernel {}, {} (Debian's etcd-server, data dir on /tmp, fsync on every write). All "
      "times in ms; every number is measured in this run, none is asserted.\n\n",
      f.date, f.run_s, f.cpus, f.kernel, f.etcd_version);
  md += "**No reference column.** There is no flanneld in Debian 12: `apt-cache search flannel` ";
  md +=
      f.flannel_search.empty() ? "finds nothing" : "finds only `" + FirstLine(f.flannel_search) + "` (not the daemon)";
  md +=
      ", so these are netiface-agent's own numbers, not a comparison with flanneld. What compares is the "
      "agent's two backends on the same work (section 6).\n\n";
  md +=
      "Set-up (all in namespaces the bench makes and removes): an underlay namespace with bridge 192.0.2.254/24 "
      "and etcd on 192.0.2.254:2379; one node namespace with eth0 = 192.0.2.1/24 on that bridge and a default "
      "route via 192.0.2.254. The agent runs as `ip netns exec <node> netiface-agent "
      "--etcd-endpoints=http://192.0.2.254:2379 --iface=eth0 --subnet-file=<tmp>/subnet.env`, first with the "
      "network config `" +
      std::string(kHostGwConfig) + "`, then, after every lease was removed, with `" + kVxlanConfig +
      "`. Other nodes' leases are written by the bench in flanneld's format. The kernel side is "
      "timed by the bench's own netlink sockets in the node namespace: one on RTNLGRP_IPV4_ROUTE (the "
      "RTM_NEWROUTE of `<subnet> via <gateway>` with proto 78), one on RTNLGRP_NEIGH (the RTM_NEWNEIGH of a "
      "permanent neighbour, and of a bridge-family FDB entry with its destination); subnet.env by inotify on its "
      "folder (the rename).\n\n";
  md += fmt::format(
      "The lease whose latency is measured is always that of one more node, which the bench makes by hand "
      "with `ip` and `bridge` (no second agent: the bench writes that node's lease itself, so it knows when "
      "it was put): a namespace on the underlay with eth0 = 192.0.2.2/24, its own flannel.1 (VNI 1, port 8472, "
      "learning off, MAC 0e:6e:62:ff:00:02) and a pod namespace behind a veth, the way back to this node's "
      "subnet set by hand for each backend (host-gw: a route via 192.0.2.1; vxlan: the neighbour, FDB entry "
      "and onlink route on its flannel.1). This node gets a pod too (a veth, FLANNEL_SUBNET's .1 on the node, "
      ".2 in the pod, default route via .1); both nodes forward. From just before each Put the local pod sends "
      "ICMP echo requests to the far pod every {:.1f} ms (a raw socket in the pod); until the route is in they "
      "leave by the node's default route to the underlay, which drops them. \"first answered probe sent\" is "
      "when the probe that got the first reply left (the path opened at most one interval before), \"echo "
      "reply received\" when its reply was read: the first moment a pod on this node has reached a pod behind "
      "the new node and heard back. A probe sent before the Put that is answered fails the run.\n\n",
      f.probe_interval_ms);
  md += fmt::format(
      "host-gw's {} other leases have PublicIPs 192.0.2.2–250 (many leases per gateway: a route needs a "
      "gateway on eth0's subnet). vxlan's {} are one node each, as in a real cluster: PublicIP "
      "198.18.x.y (reached through the default route; nothing is sent there) and a VtepMAC of its own, "
      "so 3 × {} entries.\n\n",
      others, others, others);
  return md;
}

std::string Starts(const BackendResults& h, const BackendResults& v, const ReportFacts& f) {
  const std::string others = Thousands(f.counts.others);
  std::string md = "## 1. Start until subnet.env is written\n\n";
  md +=
      "t0 just before the fork of `ip netns exec … netiface-agent`, t1 the rename of subnet.env into place "
      "(the agent writes it once lease, backend and rules are in place: for vxlan that includes creating "
      "flannel.1 when it is missing). That includes `ip netns exec`, the exec of the agent and its dynamic "
      "loading: in the agent's own log of a quick run, 30–40 ms lay between its first line and subnet.env for "
      "either backend without other leases, so the no-peer rows move mostly with the machine's load.\n\n";
  md += kSpreadHeader;
  md += SpreadRow("host-gw: new node (no lease in etcd, no subnet.env, no rules)", Summarize(h.start_fresh));
  md += SpreadRow("host-gw: restart, the node's lease still alive", Summarize(h.start_restart));
  md += SpreadRow("host-gw: restart, lease alive, " + others + " other leases, routes flushed",
                  Summarize(h.start_restart_others));
  md += SpreadRow("host-gw: stop: SIGTERM until the exit is reaped", Summarize(h.stop));
  md += SpreadRow("vxlan: new node (also no flannel.1)", Summarize(v.start_fresh));
  md += SpreadRow("vxlan: restart, the node's lease still alive (flannel.1 kept)", Summarize(v.start_restart));
  md += SpreadRow("vxlan: restart, lease alive, " + others + " other leases, flannel.1 deleted",
                  Summarize(v.start_restart_others));
  md += SpreadRow("vxlan: stop: SIGTERM until the exit is reaped", Summarize(v.stop));
  md += "\n";
  return md;
}

std::string HostGwEvents(const BackendResults& h, const ReportFacts& f) {
  const std::string others = Thousands(f.counts.others);
  std::string md =
      "## 2. host-gw: a remote lease in etcd until its route is in the kernel and a pod behind that node answers\n\n";
  md +=
      "One lease of the far node at a time (PublicIP 192.0.2.2, a fresh 10.x.y.0/24 each, all held by the far "
      "pod), t0 just before the Put, t1 the route's RTM_NEWROUTE; the lease is deleted and its route awaited "
      "gone before the next. The agent runs with `--reconcile-interval=600`, so no periodic reconcile falls "
      "into a measurement. To split etcd's part from the agent's, the bench also watches the leases itself (a "
      "second watcher in the node namespace, like the agent's): \"watch event\" is when that PUT reached it, "
      "and \"watch event → route\" is t1 minus that, the agent's own work (parse, view diff, one netlink "
      "request) plus the kernel's notification (it can come out slightly negative when the bench's watcher is "
      "scheduled after the agent). \"Put returned\" is when etcd answered the bench's Put (after its fsync); "
      "the watch event can come earlier. \"route → echo reply\" is the reply's time minus t1, per lease; it "
      "comes out negative when the bench's monitor thread read the kernel's notification after the probe had "
      "already gone through (the bench's threads share the two cores with the agent and etcd).\n\n";
  md += kSpreadHeader;
  md += EventRows("0 other leases", "route", h.events_0);
  md += EventRows(others + " other leases", "route", h.events_n);
  Spread r0 = Summarize(h.events_0.programmed), rn = Summarize(h.events_n.programmed);
  Spread p0 = Summarize(h.events_0.reply), pn = Summarize(h.events_n.reply);
  Spread a0 = Summarize(h.events_0.agent), an = Summarize(h.events_n.agent);
  md += fmt::format(
      "\nRatio {} leases / 0 leases: t1 − t0 median {} (p90 {}); echo reply median {} (p90 {}); the "
      "agent's part median {} (p90 {}). "
      "The agent's part is a fraction of a millisecond in both cases; at that size the scheduling of "
      "the two watchers on the shared cores moves its ratio by a factor of ~2 either way between "
      "runs, so read the ratio of t1 − t0 and the absolute agent's part, not the agent's ratio.\n\n",
      others, Ratio(rn.median, r0.median), Ratio(rn.p90, r0.p90), Ratio(pn.median, p0.median), Ratio(pn.p90, p0.p90),
      Ratio(an.median, a0.median), Ratio(an.p90, a0.p90));
  md += fmt::format(
      "For scale: writing the {} leases with {} parallel clients took {:.0f} ms, and the last of "
      "their routes was in the kernel {:.0f} ms after the first Put (the running agent, from its "
      "watch).\n\n",
      others, kWriters, h.bulk_write_ms, h.bulk_programmed_ms);
  return md;
}

std::string HostGwReconciles(const BackendResults& h, const ReportFacts& f) {
  std::string md = fmt::format("## 3. host-gw: full reconcile with {} remote leases\n\n", Thousands(f.counts.others));
  md +=
      "The agent runs with `--log-level=debug --reconcile-interval=1` and logs \"reconcile: <N> peer(s) in "
      "<X> ms\" after every periodic reconcile (one dump of the main table, then the diff applied); the rows "
      "below are those X, the steady ones from reconciles that began after every route was in. For the repair "
      "the bench deletes every route of proto 78 (`ip route flush proto 78`) right after one reconcile line, "
      "so the next reconcile re-adds all of them.\n\n";
  md += kSpreadHeader;
  md += SpreadRow(fmt::format("steady state (routes in place; peers logged: {})", Joined(h.steady_peers)),
                  Summarize(h.steady), 2);
  md += SpreadRow(fmt::format("repair after all routes were deleted (peers logged: {})", Joined(h.repair_flush.peers)),
                  Summarize(h.repair_flush.reconcile), 2);
  md +=
      SpreadRow("start of an agent with the leases in etcd until all routes are in the kernel", Summarize(h.start_all));
  md += SpreadRow("flush until all routes are back (includes the wait for the next reconcile, ≤ 1 s)",
                  Summarize(h.repair_flush.back));
  md += SpreadRow("the flush itself (`ip route flush proto 78`)", Summarize(h.repair_flush.action));
  md += "\n";
  return md;
}

std::string VxlanEvents(const BackendResults& v, const ReportFacts& f) {
  const std::string others = Thousands(f.counts.others);
  std::string md = "## 4. vxlan: a remote lease in etcd until a pod behind that node answers\n\n";
  md +=
      "As section 2, with the far node's vxlan lease (BackendData `{\"VNI\":1,\"VtepMAC\":\"0e:6e:62:ff:00:02\"}`): "
      "t1 is the last of three notifications (the agent adds the neighbour, then the FDB entry, then the "
      "route), and the first reply crosses both flannel.1 devices.\n\n";
  md += kSpreadHeader;
  md += EventRows("0 other leases", "neighbour + FDB + route", v.events_0);
  md += EventRows(others + " other leases", "neighbour + FDB + route", v.events_n);
  Spread e0 = Summarize(v.events_0.programmed), en = Summarize(v.events_n.programmed);
  Spread p0 = Summarize(v.events_0.reply), pn = Summarize(v.events_n.reply);
  md += fmt::format("\nRatio {} leases / 0 leases: t1 − t0 median {} (p90 {}); echo reply median {} (p90 {}).\n\n",
                    others, Ratio(en.median, e0.median), Ratio(en.p90, e0.p90), Ratio(pn.median, p0.median),
                    Ratio(pn.p90, p0.p90));
  md += fmt::format(
      "For scale: writing the {} vxlan leases with {} parallel clients took {:.0f} ms, and the last of "
      "their {} entries was in the kernel {:.0f} ms after the first Put.\n\n",
      others, kWriters, v.bulk_write_ms, Thousands(3 * f.counts.others), v.bulk_programmed_ms);
  return md;
}

std::string VxlanReconciles(const BackendResults& v, const ReportFacts& f) {
  const std::string entries = Thousands(3 * f.counts.others);
  std::string md = fmt::format("## 5. vxlan: full reconcile with {} remote leases ({} entries)\n\n",
                               Thousands(f.counts.others), entries);
  md +=
      "As in section 3 (`--log-level=debug --reconcile-interval=1`, the logged X). A vxlan reconcile checks "
      "flannel.1 against its plan, dumps the routes and the device's neighbour and FDB tables once each, and "
      "applies the diff. Two repairs, each right after a reconcile line: every route of proto 78 deleted "
      "(the neighbour and FDB entries stay), and flannel.1 deleted (`ip link del flannel.1`: the kernel takes "
      "every neighbour, FDB entry and route of the device along, and the reconcile re-creates the device and "
      "all of them).\n\n";
  md += kSpreadHeader;
  md += SpreadRow(fmt::format("steady state (entries in place; peers logged: {})", Joined(v.steady_peers)),
                  Summarize(v.steady), 2);
  md += SpreadRow(fmt::format("repair after all routes were deleted (peers logged: {})", Joined(v.repair_flush.peers)),
                  Summarize(v.repair_flush.reconcile), 2);
  md += SpreadRow(fmt::format("repair after flannel.1 was deleted (peers logged: {})", Joined(v.repair_device.peers)),
                  Summarize(v.repair_device.reconcile), 2);
  md += SpreadRow(
      "start of an agent with the leases in etcd and no flannel.1 until all " + entries + " entries are in the kernel",
      Summarize(v.start_all));
  md += SpreadRow("flush until all routes are back (includes the wait for the next reconcile, ≤ 1 s)",
                  Summarize(v.repair_flush.back));
  md += SpreadRow("flannel.1 deleted until all " + entries + " entries are back (same wait)",
                  Summarize(v.repair_device.back));
  md += SpreadRow("the flush itself (`ip route flush proto 78`)", Summarize(v.repair_flush.action));
  md += SpreadRow("the delete itself (`ip link del flannel.1`)", Summarize(v.repair_device.action));
  md += "\n";
  return md;
}

std::string SideBySide(const BackendResults& h, const BackendResults& v, const ReportFacts& f) {
  const std::string others = Thousands(f.counts.others);
  std::string md = "## 6. host-gw and vxlan side by side\n\n";
  md +=
      "Medians of the rows above where both backends did the same work; a host-gw peer is one route, a vxlan "
      "peer three entries (neighbour, FDB entry, route) and the device to keep.\n\n";
  md += "| | host-gw | vxlan | vxlan / host-gw |\n|---|---:|---:|---:|\n";
  md += SideRow("start, new node → subnet.env", h.start_fresh, v.start_fresh);
  md += SideRow("start, lease alive → subnet.env", h.start_restart, v.start_restart);
  md += SideRow("start, lease alive, " + others + " leases, nothing of them in the kernel → subnet.env",
                h.start_restart_others, v.start_restart_others);
  md += SideRow("start with " + others + " leases → all their entries in the kernel", h.start_all, v.start_all);
  md += SideRow("remote lease → its entries in the kernel, 0 other leases", h.events_0.programmed,
                v.events_0.programmed, 2);
  md += SideRow("remote lease → its entries in the kernel, " + others + " other leases", h.events_n.programmed,
                v.events_n.programmed, 2);
  md += SideRow("remote lease → echo reply (pod reached), 0 other leases", h.events_0.reply, v.events_0.reply, 2);
  md += SideRow("remote lease → echo reply (pod reached), " + others + " other leases", h.events_n.reply,
                v.events_n.reply, 2);
  md += SideRow("remote lease → watch event (etcd's part), 0 other leases", h.events_0.watch, v.events_0.watch, 2);
  md += SideRow("remote lease → watch event (etcd's part), " + others + " other leases", h.events_n.watch,
                v.events_n.watch, 2);
  md += SideRow("watch event → entries (the agent's part), 0 other leases", h.events_0.agent, v.events_0.agent, 2);
  md += SideRow("watch event → entries (the agent's part), " + others + " other leases", h.events_n.agent,
                v.events_n.agent, 2);
  md += SideRow("reconcile, " + others + " peers, steady state", h.steady, v.steady, 2);
  md += SideRow("reconcile, " + others + " peers, after every route was deleted", h.repair_flush.reconcile,
                v.repair_flush.reconcile, 2);
  md += SideRow("stop", h.stop, v.stop);
  md +=
      "\nThe lease-to-kernel and lease-to-reply rows include etcd's part, which is the same work for both "
      "backends and moves with the disk and the load between the two phases of the run: compare the agent's "
      "part for what the backend itself costs per event (three netlink requests for vxlan, one for host-gw). "
      "The start rows without other leases are mostly process start (section 1).\n\n";
  md += "The machine is shared with other builds (2 cores): spreads are wide, and the p90s are upper bounds.\n";
  return md;
}

}  // namespace

std::string Thousands(int v) {
  std::string digits = std::to_string(v), out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return out;
}

std::string RenderReport(const BackendResults& hostgw, const BackendResults& vxlan, const ReportFacts& f) {
  return Intro(f) + Starts(hostgw, vxlan, f) + HostGwEvents(hostgw, f) + HostGwReconciles(hostgw, f) +
         VxlanEvents(vxlan, f) + VxlanReconciles(vxlan, f) + SideBySide(hostgw, vxlan, f);
}

}  // namespace netiface::bench::agent
