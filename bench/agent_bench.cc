// agent-bench: measures the built netiface-agent against a real etcd, entirely in namespaces it makes,
// and writes a markdown report.
//   agent-bench --bin BUILD/bin --out docs/agent-benchmarks.md [--quick]
// The process first moves into a private network namespace of its own (it never acts in the machine's),
// makes an underlay namespace (bridge 192.0.2.254/24, etcd on 192.0.2.254:2379) and a node namespace
// (eth0 = 192.0.2.1/24 on that bridge), then moves its main thread into the node: its etcd clients and
// the route monitor act there, next to the agent. Everything it starts is stopped by pid and everything it
// makes is removed, also on SIGINT/SIGTERM and on failure.
#include <fcntl.h>
#include <net/if.h>
#include <sched.h>
#include <sys/inotify.h>
#include <sys/utsname.h>
#include <poll.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "agent_event_watch.h"
#include "agent_procs.h"
#include "agent_report.h"
#include "agent_route_monitor.h"
#include "netiface/agent/lease.h"
#include "netiface/etcd/client.h"
#include "netiface/netlink/netns.h"
#include "netiface/netlink/route.h"
#include "netiface/netlink/socket.h"

using namespace netiface::bench::agent;
using netiface::cni::IpAddr;
using netiface::cni::IpNet;
namespace agent = netiface::agent;
namespace etcd = netiface::etcd;
namespace nl = netiface::nl;
using std::chrono::milliseconds;
using std::chrono::seconds;

namespace {

constexpr char kEtcdIp[] = "192.0.2.254";
constexpr char kNodeIp[] = "192.0.2.1";
constexpr char kEndpoint[] = "http://192.0.2.254:2379";
constexpr char kNetworkConfig[] = R"({"Network":"10.0.0.0/8","SubnetLen":24,"Backend":{"Type":"host-gw"}})";
constexpr int kProtocol = 78;
constexpr int kWriters = 4;  // etcd clients writing the bulk leases in parallel

struct Options {
  std::string bin, out;
  int n_start = 10;     // starts per start-up case
  int n_event = 20;     // remote leases per event-latency case
  int others = 1000;    // leases of other nodes in the large cases
  int n_bulk_start = 5; // agent starts with `others` leases in etcd
  int n_steady = 10;    // steady-state reconciles
  int n_repair = 5;     // repairs after deleting every route
};

double Ms(Clock::duration d) { return std::chrono::duration<double, std::milli>(d).count(); }

std::string ReadFile(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(f), {});
}

std::string Tail(const std::string& text, size_t bytes = 3000) {
  return text.size() > bytes ? "..." + text.substr(text.size() - bytes) : text;
}

// A remote node's lease in flanneld's format.
struct Peer {
  agent::SubnetKey subnet;
  std::string dst, gw, key, value;
};

Peer MakePeer(int second, int third, int fourth_gw) {
  Peer p;
  IpAddr net = *IpAddr::Parse(fmt::format("10.{}.{}.0", second, third));
  p.subnet.v4 = IpNet(net, 24);
  p.dst = net.ToString() + "/24";
  p.gw = fmt::format("192.0.2.{}", fourth_gw);
  p.key = agent::LeaseKey(agent::kDefaultPrefix, p.subnet);
  agent::LeaseAttrs attrs;
  attrs.public_ip = IpAddr::Parse(p.gw);
  attrs.backend_type = "host-gw";
  p.value = agent::EncodeLeaseAttrs(attrs);
  return p;
}

// Gateways 192.0.2.2 .. 192.0.2.250: on eth0's subnet, shared by many leases.
int GatewayFor(int i) { return 2 + i % 249; }

// The `others` background leases: 10.100.0.0/24 upward (the agent takes its own from 10.0.1.0/24 up).
std::vector<Peer> Others(int n) {
  std::vector<Peer> out;
  for (int i = 0; i < n; ++i) out.push_back(MakePeer(100 + i / 256, i % 256, GatewayFor(i)));
  return out;
}

// The first event (IN_MOVED_TO or IN_CLOSE_WRITE) on `name` in `dir` after construction.
class FileWatch {
 public:
  FileWatch(const std::string& dir, std::string name) : name_(std::move(name)) {
    fd_ = ::inotify_init1(IN_CLOEXEC | IN_NONBLOCK);
    if (fd_ < 0 || ::inotify_add_watch(fd_, dir.c_str(), IN_MOVED_TO | IN_CLOSE_WRITE) < 0) {
      throw std::runtime_error("inotify on " + dir + ": " + std::strerror(errno));
    }
  }
  ~FileWatch() { ::close(fd_); }
  FileWatch(const FileWatch&) = delete;
  FileWatch& operator=(const FileWatch&) = delete;

  // Waits at most `slice`; the time of the event once it happened (also on a later call).
  std::optional<Clock::time_point> Poll(milliseconds slice) {
    if (seen_) return seen_;
    pollfd p{fd_, POLLIN, 0};
    if (::poll(&p, 1, static_cast<int>(std::max<milliseconds::rep>(0, slice.count()))) <= 0) return std::nullopt;
    Clock::time_point at = Clock::now();
    alignas(inotify_event) char buf[8192];
    ssize_t k = ::read(fd_, buf, sizeof buf);
    for (ssize_t off = 0; off < k;) {
      const auto* ev = reinterpret_cast<const inotify_event*>(buf + off);
      if (ev->len > 0 && name_ == ev->name && !seen_) seen_ = at;
      off += static_cast<ssize_t>(sizeof(inotify_event) + ev->len);
    }
    return seen_;
  }

 private:
  int fd_ = -1;
  std::string name_;
  std::optional<Clock::time_point> seen_;
};

// New "reconcile:" lines of a log file that is being appended to.
class ReconcileTail {
 public:
  explicit ReconcileTail(std::string path) : path_(std::move(path)) {}
  // Skips everything written so far.
  void SkipToEnd() {
    Read();
    lines_.clear();
  }
  // The next reconcile line, waiting up to `timeout`; nullopt when none came.
  std::optional<ReconcileLine> Next(milliseconds timeout) {
    Clock::time_point deadline = Clock::now() + timeout;
    for (;;) {
      Read();
      if (!lines_.empty()) {
        ReconcileLine r = lines_.front();
        lines_.erase(lines_.begin());
        return r;
      }
      if (Clock::now() >= deadline) return std::nullopt;
      std::this_thread::sleep_for(milliseconds(2));
    }
  }

 private:
  void Read() {
    std::ifstream f(path_, std::ios::binary);
    f.seekg(static_cast<std::streamoff>(offset_));
    std::string chunk((std::istreambuf_iterator<char>(f)), {});
    offset_ += chunk.size();
    partial_ += chunk;
    for (size_t nl; (nl = partial_.find('\n')) != std::string::npos;) {
      if (auto r = ParseReconcileLine(std::string_view(partial_).substr(0, nl))) lines_.push_back(*r);
      partial_.erase(0, nl + 1);
    }
  }
  std::string path_;
  size_t offset_ = 0;
  std::string partial_;
  std::vector<ReconcileLine> lines_;
};

struct Results {
  std::vector<double> start_fresh, start_restart, start_restart_others, stop;
  struct Events {
    std::vector<double> put, watch, route, agent;  // from t0: Put returned, watch event, route; route - watch event
  } events_0, events_n;
  double bulk_write_ms = 0, bulk_routes_ms = 0;
  std::vector<double> start_all_routes, steady, repair, repair_back, flush;
  std::set<int> steady_peers, repair_peers;
};

class Bench {
 public:
  explicit Bench(Options o) : o_(std::move(o)), tag_(std::to_string(::getpid() % 100000)) {}

  void Run() {
    Setup();
    MeasureStarts();
    TimeStart({"--reconcile-interval=600"});  // ready: subnet.env is written once the backend is set up
    watch_ = std::make_unique<EventWatch>(ClientOpts(), agent::SubnetsPrefix(agent::kDefaultPrefix));
    Log("remote lease -> route, 0 other leases");
    MeasureEvents(200, &r_.events_0);
    WriteOthers();
    Log(fmt::format("remote lease -> route, {} other leases", o_.others));
    MeasureEvents(201, &r_.events_n);
    watch_.reset();
    StopAgent();
    MeasureReconciles();
    StopAgent();
    client_->Revoke(lease_id_);
    etcd_->Stop();
  }

  void WriteReport(const std::string& path) const;

 private:
  static void Log(const std::string& what) { std::cerr << "agent-bench: " << what << "\n"; }

  static etcd::ClientOptions ClientOpts() {
    etcd::ClientOptions c;
    c.endpoints = {kEndpoint};
    return c;
  }

  void Setup() {
    if (::unshare(CLONE_NEWNET) != 0) throw std::runtime_error(std::string("unshare(CLONE_NEWNET): ") + std::strerror(errno));
    dir_ = std::make_unique<TempDir>();
    underlay_ = std::make_unique<Netns>("nab-ul-" + tag_);
    node_ = std::make_unique<Netns>("nab-n-" + tag_);
    const std::string ul = "ip -n " + underlay_->name(), n = "ip -n " + node_->name();
    ShOrThrow(ul + " link add br0 type bridge && " + ul + " addr add " + kEtcdIp + "/24 dev br0 && " + ul +
              " link set br0 up && " + ul + " link add v1 type veth peer name eth0 netns " + node_->name() + " && " +
              ul + " link set v1 master br0 up && " + n + " addr add " + kNodeIp + "/24 dev eth0 && " + n +
              " link set eth0 up && " + n + " route add default via " + kEtcdIp);
    auto ns = nl::NetNs::Open(node_->path());
    if (!ns || ::setns(ns->fd(), CLONE_NEWNET) != 0) throw std::runtime_error("cannot enter " + node_->path());
    eth0_ = static_cast<int>(::if_nametoindex("eth0"));
    monitor_ = std::make_unique<RouteMonitor>(kProtocol);

    Log("starting etcd in " + underlay_->name());
    const std::string peer = std::string("http://") + kEtcdIp + ":2380";
    etcd_ = std::make_unique<Process>(
        std::vector<std::string>{"/bin/ip", "netns", "exec", underlay_->name(), "/usr/bin/etcd", "--name", "bench",
                                 "--data-dir", *dir_ / "etcd", "--listen-client-urls", kEndpoint,
                                 "--advertise-client-urls", kEndpoint, "--listen-peer-urls", peer,
                                 "--initial-advertise-peer-urls", peer, "--initial-cluster", "bench=" + peer,
                                 "--initial-cluster-state", "new", "--log-level", "warn", "--logger", "zap"},
        *dir_ / "etcd.log");
    etcd::ClientOptions opts = ClientOpts();
    opts.connect_timeout_ms = 500;
    opts.request_timeout_ms = 1000;
    etcd::Client probe(opts);
    for (Clock::time_point deadline = Clock::now() + seconds(30);;) {
      try {
        probe.Put(agent::ConfigKey(agent::kDefaultPrefix), kNetworkConfig);
        break;
      } catch (const etcd::Error& e) {
        if (!etcd_->Running()) throw std::runtime_error("etcd exited during start-up: " + Tail(ReadFile(*dir_ / "etcd.log")));
        if (Clock::now() >= deadline) throw std::runtime_error(std::string("etcd did not answer in 30 s: ") + e.what());
        std::this_thread::sleep_for(milliseconds(50));
      }
    }
    client_ = std::make_unique<etcd::Client>(ClientOpts());
    lease_id_ = client_->Grant(3600).id;  // every bench lease hangs on it: one Revoke removes them all
  }

  std::string SubnetEnv() const { return *dir_ / "subnet.env"; }

  void StartAgent(std::vector<std::string> extra) {
    agent_log_ = *dir_ / fmt::format("agent-{}.log", ++agent_runs_);
    std::vector<std::string> argv = {"/bin/ip", "netns", "exec", node_->name(), o_.bin + "/netiface-agent",
                                     std::string("--etcd-endpoints=") + kEndpoint, "--subnet-file=" + SubnetEnv(),
                                     "--iface=eth0"};
    argv.insert(argv.end(), extra.begin(), extra.end());
    agent_ = std::make_unique<Process>(argv, agent_log_);
  }

  void StopAgent() {
    if (!agent_) return;
    int status = agent_->Stop();
    r_.stop.push_back(Ms(agent_->last_stop()));
    agent_.reset();
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
      throw std::runtime_error(fmt::format("the agent exited with status {:#x} on SIGTERM; log:\n{}", status,
                                           Tail(ReadFile(agent_log_))));
    }
  }

  void CheckAgent() {
    if (agent_ && !agent_->Running()) {
      throw std::runtime_error("the agent exited; log:\n" + Tail(ReadFile(agent_log_)));
    }
  }

  // Runs `poll` in 100 ms slices until it yields a value or `deadline`; fails when the agent dies.
  template <typename F>
  auto WhileAgentRuns(Clock::time_point deadline, const std::string& what, F poll) {
    for (;;) {
      Clock::time_point slice = std::min(deadline, Clock::now() + milliseconds(100));
      if (auto v = poll(slice)) return *v;
      CheckAgent();
      if (Clock::now() >= deadline) throw std::runtime_error(what + ": timed out; agent log:\n" + Tail(ReadFile(agent_log_)));
    }
  }

  // When `w` (made before the agent started) saw subnet.env written.
  Clock::time_point WaitSubnetEnv(Clock::time_point deadline, FileWatch& w) {
    return WhileAgentRuns(deadline, "waiting for subnet.env", [&](Clock::time_point until) {
      return w.Poll(std::chrono::duration_cast<milliseconds>(until - Clock::now()) + milliseconds(1));
    });
  }

  Clock::time_point WaitAll(const std::vector<std::string>& dsts, Clock::time_point since, Clock::time_point deadline,
                            const std::string& what) {
    int overflows = monitor_->overflows();
    Clock::time_point t = WhileAgentRuns(deadline, what, [&](Clock::time_point until) {
      return monitor_->WaitAllAdded(dsts, since, until);
    });
    if (monitor_->overflows() != overflows) throw std::runtime_error(what + ": the route monitor lost notifications");
    return t;
  }

  // Deletes this node's lease (a node that never had one), its subnet.env and its rules and routes.
  void ForgetNode() {
    for (const etcd::KeyValue& kv : client_->GetPrefix(agent::SubnetsPrefix(agent::kDefaultPrefix)).kvs) {
      agent::LeaseAttrs attrs;
      try {
        attrs = agent::DecodeLeaseAttrs(kv.value);
      } catch (const std::invalid_argument&) {
        continue;
      }
      if (attrs.public_ip != IpAddr::Parse(kNodeIp)) continue;
      if (kv.lease != 0) client_->Revoke(kv.lease);
      client_->Delete(kv.key);
    }
    std::filesystem::remove(SubnetEnv());
    ShResult c = Sh("ip netns exec " + node_->name() + " " + o_.bin + "/netiface-agent cleanup");
    if (c.exit_code != 0) throw std::runtime_error("netiface-agent cleanup failed: " + c.out);
  }

  // One start, timed from just before the fork to the rename of subnet.env.
  double TimeStart(const std::vector<std::string>& extra) {
    FileWatch w(dir_->path(), "subnet.env");
    Clock::time_point t0 = Clock::now();
    StartAgent(extra);
    return Ms(WaitSubnetEnv(t0 + seconds(30), w) - t0);
  }

  void MeasureStarts() {
    Log(fmt::format("start -> subnet.env, new node, {} runs", o_.n_start));
    for (int i = 0; i < o_.n_start; ++i) {
      ForgetNode();
      r_.start_fresh.push_back(TimeStart({}));
      StopAgent();
    }
    Log(fmt::format("start -> subnet.env, restart with the lease alive, {} runs", o_.n_start));
    for (int i = 0; i < o_.n_start; ++i) {
      r_.start_restart.push_back(TimeStart({}));
      StopAgent();
    }
  }

  // Remote leases 10.<second>.<i>.0/24 one at a time: t0 just before the Put, t1 the RTM_NEWROUTE of
  // "<subnet> via <gw>"; each is deleted again (and its route awaited gone) before the next.
  void MeasureEvents(int second, Results::Events* out) {
    for (int i = 0; i < o_.n_event; ++i) {
      Peer p = MakePeer(second, i, GatewayFor(i * 7));
      Clock::time_point t0 = Clock::now();
      client_->Put(p.key, p.value, lease_id_);
      Clock::time_point put_done = Clock::now();
      Clock::time_point t1 = WhileAgentRuns(t0 + seconds(10), "route to " + p.dst, [&](Clock::time_point until) {
        return monitor_->WaitAdded(p.dst, p.gw, t0, until);
      });
      std::optional<Clock::time_point> seen = watch_->WaitPut(p.key, t0, t0 + seconds(10));
      if (!seen) throw std::runtime_error("the bench's watch did not see the PUT of " + p.key + ": " + watch_->error());
      out->put.push_back(Ms(put_done - t0));
      out->watch.push_back(Ms(*seen - t0));
      out->route.push_back(Ms(t1 - t0));
      out->agent.push_back(Ms(t1 - *seen));
      client_->Delete(p.key);
      if (!monitor_->WaitRemoved(p.dst, Clock::now() + seconds(10))) {
        throw std::runtime_error("route to " + p.dst + " still there 10 s after its lease was deleted");
      }
      std::this_thread::sleep_for(milliseconds(20));
    }
  }

  // Writes the `others` leases with kWriters clients in parallel while the agent runs, and waits for
  // every route; then checks the main table by a dump.
  void WriteOthers() {
    others_ = Others(o_.others);
    for (const Peer& p : others_) other_dsts_.push_back(p.dst);
    Log(fmt::format("writing {} leases of other nodes", o_.others));
    Clock::time_point t0 = Clock::now();
    std::vector<std::thread> writers;
    std::vector<std::string> errors(kWriters);
    for (int w = 0; w < kWriters; ++w) {
      writers.emplace_back([&, w] {
        try {
          etcd::Client c(ClientOpts());
          for (size_t i = w; i < others_.size(); i += kWriters) c.Put(others_[i].key, others_[i].value, lease_id_);
        } catch (const std::exception& e) {
          errors[w] = e.what();
        }
      });
    }
    for (auto& t : writers) t.join();
    for (const std::string& e : errors) {
      if (!e.empty()) throw std::runtime_error("writing the leases: " + e);
    }
    r_.bulk_write_ms = Ms(Clock::now() - t0);
    r_.bulk_routes_ms = Ms(WaitAll(other_dsts_, t0, t0 + seconds(120), "routes of the bulk leases") - t0);
    CheckTable();
  }

  // Every background lease has exactly its route "<subnet> via <gw> dev eth0 proto 78" in the main table.
  void CheckTable() {
    nl::Socket s = nl::Socket::Open();
    std::map<std::string, const nl::RouteInfo*> by_dst;
    std::vector<nl::RouteInfo> routes = nl::ListRoutes(s, AF_INET);
    for (const nl::RouteInfo& r : routes) by_dst[r.dst.ToString()] = &r;
    for (const Peer& p : others_) {
      auto it = by_dst.find(p.dst);
      if (it == by_dst.end()) throw std::runtime_error("no route to " + p.dst + " in the node's main table");
      const nl::RouteInfo& r = *it->second;
      if (!r.gw || r.gw->ToString() != p.gw || r.ifindex != eth0_ || r.protocol != kProtocol) {
        throw std::runtime_error(fmt::format("route to {} is via {} dev {} proto {}, expected via {} dev eth0 proto {}",
                                             p.dst, r.gw ? r.gw->ToString() : "-", r.ifindex, r.protocol, p.gw,
                                             kProtocol));
      }
    }
  }

  void FlushRoutes() {
    Clock::time_point t0 = Clock::now();
    ShOrThrow("ip -n " + node_->name() + " route flush proto " + std::to_string(kProtocol));
    r_.flush.push_back(Ms(Clock::now() - t0));
  }

  void MeasureReconciles() {
    const std::vector<std::string> flags = {"--log-level=debug", "--reconcile-interval=1"};
    Log(fmt::format("start with {} leases -> all routes, {} runs", o_.others, o_.n_bulk_start));
    for (int i = 0; i < o_.n_bulk_start; ++i) {
      if (i > 0) StopAgent();
      FlushRoutes();
      Clock::time_point deadline = Clock::now() + seconds(5);
      while (monitor_->Present() != 0) {
        if (Clock::now() >= deadline) throw std::runtime_error("routes of proto 78 still there 5 s after the flush");
        std::this_thread::sleep_for(milliseconds(5));
      }
      FileWatch w(dir_->path(), "subnet.env");
      Clock::time_point t0 = Clock::now();
      StartAgent(flags);
      r_.start_all_routes.push_back(Ms(WaitAll(other_dsts_, t0, t0 + seconds(60), "routes after a start") - t0));
      r_.start_restart_others.push_back(Ms(WaitSubnetEnv(t0 + seconds(30), w) - t0));
    }
    CheckTable();

    Log(fmt::format("steady-state reconciles, {}", o_.n_steady));
    std::this_thread::sleep_for(milliseconds(1500));  // past any reconcile that began before the routes were in
    ReconcileTail tail(agent_log_);
    tail.SkipToEnd();
    for (int i = 0; i < o_.n_steady; ++i) {
      auto line = WhileAgentRuns(Clock::now() + seconds(10), "a reconcile line", [&](Clock::time_point until) {
        return tail.Next(std::chrono::duration_cast<milliseconds>(until - Clock::now()));
      });
      r_.steady.push_back(line.ms);
      r_.steady_peers.insert(line.peers);
    }

    // Right after a reconcile line the next reconcile is ~1 s away: the flush falls between two, and the
    // next line is the reconcile that repairs.
    Log(fmt::format("repairs after deleting every route, {}", o_.n_repair));
    for (int i = 0; i < o_.n_repair; ++i) {
      tail.SkipToEnd();
      WhileAgentRuns(Clock::now() + seconds(10), "a reconcile line", [&](Clock::time_point until) {
        return tail.Next(std::chrono::duration_cast<milliseconds>(until - Clock::now()));
      });
      Clock::time_point t0 = Clock::now();
      FlushRoutes();
      Clock::time_point back = WaitAll(other_dsts_, t0, t0 + seconds(10), "routes after the flush");
      r_.repair_back.push_back(Ms(back - t0));
      auto line = WhileAgentRuns(Clock::now() + seconds(10), "the repair's reconcile line", [&](Clock::time_point until) {
        return tail.Next(std::chrono::duration_cast<milliseconds>(until - Clock::now()));
      });
      r_.repair.push_back(line.ms);
      r_.repair_peers.insert(line.peers);
    }
    CheckTable();
  }

  Options o_;
  std::string tag_;
  std::unique_ptr<TempDir> dir_;
  std::unique_ptr<Netns> underlay_, node_;
  std::unique_ptr<Process> etcd_, agent_;
  std::unique_ptr<RouteMonitor> monitor_;
  std::unique_ptr<EventWatch> watch_;
  std::unique_ptr<etcd::Client> client_;
  int64_t lease_id_ = 0;
  int eth0_ = 0;
  int agent_runs_ = 0;
  std::string agent_log_;
  std::vector<Peer> others_;
  std::vector<std::string> other_dsts_;
  Results r_;

};

std::string Joined(const std::set<int>& s) {
  std::string out;
  for (int v : s) out += (out.empty() ? "" : ", ") + std::to_string(v);
  return out;
}

std::string FirstLine(const std::string& s) { return s.substr(0, s.find('\n')); }

// 1000 -> "1,000".
std::string Thousands(int v) {
  std::string digits = std::to_string(v), out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return out;
}

void Bench::WriteReport(const std::string& path) const {
  utsname u{};
  ::uname(&u);
  char date[32];
  std::time_t now = std::time(nullptr);
  std::strftime(date, sizeof date, "%Y-%m-%d %H:%M UTC", std::gmtime(&now));
  std::string etcd_version = FirstLine(Sh("/usr/bin/etcd --version").out);
  if (etcd_version.starts_with("etcd Version: ")) etcd_version = "etcd " + etcd_version.substr(14);
  std::string flannel = Sh("apt-cache search flannel").out;
  const std::string others = Thousands(o_.others);
  Spread route_0 = Summarize(r_.events_0.route), route_n = Summarize(r_.events_n.route);
  Spread agent_0 = Summarize(r_.events_0.agent), agent_n = Summarize(r_.events_n.agent);

  std::string md;
  md += "# netiface-agent benchmarks\n\n";
  md += fmt::format("Written by `bash bench/agent.sh [BUILD_DIR]` (root; {}). Machine: {} CPUs (`nproc`), kernel {}, {} (Debian's "
                    "etcd-server, data dir on /tmp, fsync on every write). All times in ms; every number is measured "
                    "in this run, none is asserted.\n\n",
                    date, std::thread::hardware_concurrency(), u.release, etcd_version);
  md += "**No reference column.** There is no flanneld in Debian 12: `apt-cache search flannel` ";
  md += flannel.empty() ? "finds nothing" : "finds only `" + FirstLine(flannel) + "` (not the daemon)";
  md += ", so these are netiface-agent's own numbers, not a comparison.\n\n";
  md += "Set-up (all in namespaces the bench makes and removes): an underlay namespace with bridge 192.0.2.254/24 "
        "and etcd on 192.0.2.254:2379; one node namespace with eth0 = 192.0.2.1/24 on that bridge and a default "
        "route via 192.0.2.254; the network config `" + std::string(kNetworkConfig) + "`. The agent runs as "
        "`ip netns exec <node> netiface-agent --etcd-endpoints=http://192.0.2.254:2379 --iface=eth0 "
        "--subnet-file=<tmp>/subnet.env`. Other nodes' leases are written by the bench in flanneld's format "
        "(PublicIP 192.0.2.2–250, many leases per gateway). Routes are timed by the bench's own netlink socket "
        "subscribed to RTNLGRP_IPV4_ROUTE in the node namespace (the time it reads the RTM_NEWROUTE of "
        "`<subnet> via <PublicIP>` with proto 78); subnet.env by inotify on its folder (the rename).\n\n";

  md += "## 1. Start until subnet.env is written\n\n";
  md += "t0 just before the fork of `ip netns exec … netiface-agent`, t1 the rename of subnet.env into place "
        "(the agent writes it once lease, routes and rules are in place).\n\n";
  md += kSpreadHeader;
  md += SpreadRow("new node (no lease in etcd, no subnet.env, no rules)", Summarize(r_.start_fresh));
  md += SpreadRow("restart, the node's lease still alive", Summarize(r_.start_restart));
  md += SpreadRow("restart, lease alive, " + others + " other leases, routes flushed", Summarize(r_.start_restart_others));
  md += SpreadRow("stop: SIGTERM until the exit is reaped", Summarize(r_.stop));
  md += "\n";

  md += "## 2. A remote lease in etcd until its route is in the kernel\n\n";
  md += "One lease at a time (a fresh 10.x.y.0/24 each), t0 just before the Put, t1 the route's RTM_NEWROUTE; "
        "the lease is deleted and its route awaited gone before the next. The agent runs with "
        "`--reconcile-interval=600`, so no periodic reconcile falls into a measurement. To split etcd's part "
        "from the agent's, the bench also watches the leases itself (a second watcher in the node namespace, "
        "like the agent's): \"watch event\" is when that PUT reached it, and \"watch event → route\" is "
        "t1 minus that, the agent's own work (parse, view diff, one netlink request) plus the kernel's "
        "notification (it can come out slightly negative when the bench's watcher is scheduled after the agent). \"Put returned\" is when etcd answered the bench's Put (after its fsync); the watch "
        "event can come earlier.\n\n";
  md += kSpreadHeader;
  for (const auto& [label, e] : {std::pair<std::string, const Results::Events*>{"0 other leases", &r_.events_0},
                                 {others + " other leases", &r_.events_n}}) {
    md += SpreadRow(label + ": **route in the kernel (t1 − t0)**", Summarize(e->route), 2);
    md += SpreadRow(label + ": Put returned", Summarize(e->put), 2);
    md += SpreadRow(label + ": watch event", Summarize(e->watch), 2);
    md += SpreadRow(label + ": watch event → route (the agent's part)", Summarize(e->agent), 2);
  }
  md += "\n";
  if (route_0.median > 0 && agent_0.median > 0) {
    md += fmt::format("Ratio {} leases / 0 leases: t1 − t0 median {:.2f} (p90 {:.2f}); the agent's part median "
                      "{:.2f} (p90 {:.2f}).\n\n",
                      others, route_n.median / route_0.median, route_n.p90 / route_0.p90,
                      agent_n.median / agent_0.median, agent_0.p90 > 0 ? agent_n.p90 / agent_0.p90 : 0.0);
    md += "The agent's part is a fraction of a millisecond in both cases; at that size the scheduling of the two "
          "watchers on the shared cores moves its ratio by a factor of ~2 either way between runs, so read the "
          "ratio of t1 − t0 and the absolute agent's part, not the agent's ratio.\n\n";
  }
  md += fmt::format("For scale: writing the {} leases with {} parallel clients took {:.0f} ms, and the last of "
                    "their routes was in the kernel {:.0f} ms after the first Put (the running agent, from its "
                    "watch).\n\n",
                    others, kWriters, r_.bulk_write_ms, r_.bulk_routes_ms);

  md += fmt::format("## 3. Full reconcile with {} remote leases\n\n", others);
  md += "The agent runs with `--log-level=debug --reconcile-interval=1` and logs \"reconcile: <N> peer(s) in "
        "<X> ms\" after every periodic reconcile (one dump of the main table, then the diff applied); the rows "
        "below are those X. For the repair the bench deletes every route of proto 78 (`ip route flush proto 78`) "
        "right after one reconcile line, so the next reconcile re-adds all of them.\n\n";
  md += kSpreadHeader;
  md += SpreadRow(fmt::format("steady state (routes in place; peers logged: {})", Joined(r_.steady_peers)),
                  Summarize(r_.steady), 2);
  md += SpreadRow(fmt::format("repair after all routes were deleted (peers logged: {})", Joined(r_.repair_peers)),
                  Summarize(r_.repair), 2);
  md += SpreadRow("start of an agent with the leases in etcd until all routes are in the kernel",
                  Summarize(r_.start_all_routes));
  md += SpreadRow("flush until all routes are back (includes the wait for the next reconcile, ≤ 1 s)",
                  Summarize(r_.repair_back));
  md += SpreadRow("the flush itself (`ip route flush proto 78`)", Summarize(r_.flush));
  md += "\nThe machine is shared with other builds (2 cores): spreads are wide, and the p90s are upper bounds.\n";

  std::ofstream f(path, std::ios::trunc);
  f << md;
  if (!f) throw std::runtime_error("cannot write " + path);
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
    if (a == "--bin") o.bin = next();
    else if (a == "--out") o.out = next();
    else if (a == "--quick") o = Options{o.bin, o.out, 3, 5, 200, 2, 3, 2};
    else return Usage();
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
    Bench b(o);
    b.Run();
    b.WriteReport(o.out);
    std::cerr << "agent-bench: wrote " << o.out << "\n";
  } catch (const std::exception& e) {
    std::cerr << "agent-bench: " << e.what() << "\n";
    rc = 1;
  }
  TearDownAll();
  return rc;
}
