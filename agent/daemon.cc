#include "netiface/agent/daemon.h"

#include <chrono>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <optional>
#include <random>
#include <thread>

#include "netiface/agent/backoff.h"
#include "netiface/agent/hostgw.h"
#include "netiface/agent/lease_manager.h"
#include "netiface/agent/lease_view.h"
#include "netiface/agent/lease_watcher.h"
#include "netiface/agent/subnet_env.h"
#include "netiface/agent/vxlan.h"
#include "netiface/cni/fault.h"
#include "netiface/cni/log.h"
#include "netiface/nat/cluster.h"

namespace netiface::agent {
namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;
using std::chrono::seconds;

constexpr milliseconds kMaxWait(250);

// Updates from the watcher's thread to the loop's.
class Mailbox {
 public:
  void Push(WatchUpdate u) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      items_.push_back(std::move(u));
    }
    cv_.notify_one();
  }
  // Waits until an update is there or `deadline` passes; returns every update queued.
  std::deque<WatchUpdate> WaitUntil(Clock::time_point deadline) {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait_until(lock, deadline, [this] { return !items_.empty(); });
    std::deque<WatchUpdate> out;
    out.swap(items_);
    return out;
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<WatchUpdate> items_;
};

std::string Describe(const SubnetKey& k) { return FormatSubnetKey(k); }

class Daemon {
 public:
  Daemon(const AgentOptions& o, const std::atomic<bool>& stop) : o_(o), stop_(stop), rng_(std::random_device{}()) {}

  int Run() {
    try {
      uplink_ = FindUplink(o_.uplink);
    } catch (const std::exception& e) {
      log::Error("cannot choose the uplink: {}", e.what());
      return 1;
    }
    mine_.public_ip = uplink_.public_ip;
    log::Info("uplink {} (index {}, MTU {}), public IP {}{}", uplink_.name, uplink_.ifindex, uplink_.mtu,
              uplink_.public_ip.ToString(),
              uplink_.public_ipv6 ? ", public IPv6 " + uplink_.public_ipv6->ToString() : "");
    std::unique_ptr<etcd::Client> client;
    try {
      client = std::make_unique<etcd::Client>(o_.etcd);
    } catch (const std::exception& e) {
      log::Error("{}", e.what());
      return 1;
    }
    registry_ = MakeEtcdRegistry(*client, o_.prefix);
    if (!FetchConfig()) return 0;
    if (cfg_.enable_ipv6) mine_.public_ipv6 = uplink_.public_ipv6;
    backend_ = vxlan_ ? MakeVxlanBackend(uplink_, *vxlan_, cfg_.enable_ipv6, o_.route_protocol)
                      : MakeHostGwBackend(uplink_, cfg_.enable_ipv6, o_.route_protocol);
    mine_.backend_type = backend_->Type();
    mine_.backend_data = backend_->BackendData();
    mine_.backend_v6_data = backend_->BackendV6Data();
    if (auto prev = ReadPreviousSubnet(o_.subnet_file)) {
      hint_ = SubnetKey{prev->v4, prev->v6};
      log::Info("previous subnet from {}: {}", o_.subnet_file, Describe(*hint_));
    }

    LeaseWatcher watcher(*client, *registry_, o_.prefix, [this](WatchUpdate u) { mailbox_.Push(std::move(u)); });
    Clock::time_point now = Clock::now();
    acquire_at_ = now;
    while (!stop_) {
      now = Clock::now();
      if (!own_ && now >= acquire_at_) TryAcquire();
      if (own_ && now >= renew_at_) TryRenew();
      if (own_ && now >= reconcile_at_) Reconcile();
      if (own_ && now >= rules_at_) ResyncRules();
      Clock::time_point deadline = NextDeadline();
      for (WatchUpdate& u : mailbox_.WaitUntil(deadline)) Handle(u);
    }
    log::Info("stopping: lease {}, routes, rules and {} stay in place", own_ ? Describe(own_->subnet) : "(none)",
              o_.subnet_file);
    return 0;
  }

 private:
  // Fetches and validates <prefix>/config, retrying (1 s doubling to 30 s) until it works or a stop.
  bool FetchConfig() {
    Backoff backoff(milliseconds(1000), milliseconds(30000));
    std::string last_error;
    while (!stop_) {
      try {
        NetworkConfig cfg = registry_->GetConfig();
        if (cfg.backend_type != "host-gw" && cfg.backend_type != "vxlan") {
          throw ConfigError("backend type \"" + cfg.backend_type +
                            "\" is not supported by this agent (host-gw and vxlan are)");
        }
        std::optional<VxlanConfig> vxlan;
        if (cfg.backend_type == "vxlan") vxlan = ParseVxlanConfig(cfg.backend);  // throws ConfigError naming the key
        if (!cfg.enable_ipv4) {
          throw ConfigError("EnableIPv4 false is not supported: flannel's etcd leases are keyed by an IPv4 subnet");
        }
        if (cfg.enable_ipv6 && !uplink_.public_ipv6) {
          throw ConfigError("EnableIPv6 is set but uplink " + uplink_.name +
                            " has no global IPv6 address (give one with --public-ipv6)");
        }
        cfg_ = std::move(cfg);
        vxlan_ = vxlan;
        log::Info("network {} with /{} subnets ({} .. {}), backend {}", cfg_.network.ToString(), cfg_.subnet_len,
                  cfg_.subnet_min.ToString(), cfg_.subnet_max.ToString(), cfg_.backend_type);
        return true;
      } catch (const std::exception& e) {
        std::string msg = e.what();
        if (msg.find(ConfigKey(o_.prefix)) == std::string::npos) {
          msg = "network config at " + ConfigKey(o_.prefix) + ": " + msg;
        }
        auto wait = backoff.Next();
        if (msg != last_error) log::Error("{}; retrying", msg);
        last_error = msg;
        if (!SleepUntil(Clock::now() + wait)) return false;
      }
    }
    return false;
  }

  bool SleepUntil(Clock::time_point t) {
    while (!stop_ && Clock::now() < t) {
      auto step = std::min<Clock::duration>(t - Clock::now(), kMaxWait);
      std::this_thread::sleep_for(step);
    }
    return !stop_;
  }

  Clock::time_point NextDeadline() const {
    Clock::time_point d = Clock::now() + kMaxWait;
    if (!own_) return std::min(d, acquire_at_);
    for (auto t : {renew_at_, reconcile_at_, rules_at_}) d = std::min(d, t);
    return d;
  }

  bool IsOurs(const Lease& l) const {
    if (own_ && l.subnet == own_->subnet) return true;
    return l.attrs.public_ip && mine_.public_ip && *l.attrs.public_ip == *mine_.public_ip;
  }

  std::vector<Lease> Peers() const {
    std::vector<Lease> peers;
    for (Lease& l : view_.All()) {
      if (!IsOurs(l)) peers.push_back(std::move(l));
    }
    return peers;
  }

  void TryAcquire() {
    try {
      Lease l = AcquireLease(*registry_, cfg_, mine_, hint_, o_.lease_ttl_s, rng_);
      acquire_backoff_.Reset();
      out_of_subnets_ = false;
      log::Info("leased {} (etcd lease {:x}, TTL {} s)", Describe(l.subnet), l.etcd_lease, o_.lease_ttl_s);
      OnLease(l);
    } catch (const OutOfSubnets& e) {
      auto wait = acquire_backoff_.Next();
      if (!out_of_subnets_) log::Error("{}; retrying (and whenever a lease goes)", e.what());
      out_of_subnets_ = true;
      acquire_at_ = Clock::now() + wait;
    } catch (const std::exception& e) {
      auto wait = acquire_backoff_.Next();
      log::Warn("cannot take a lease: {}; retrying in {} ms", e.what(), wait.count());
      acquire_at_ = Clock::now() + wait;
    }
  }

  void OnLease(const Lease& l) {
    bool moved = !own_subnet_ || *own_subnet_ != l.subnet;
    own_ = l;
    hint_ = l.subnet;
    Clock::time_point now = Clock::now();
    renew_at_ = now + seconds(RenewAfterSeconds(o_.lease_ttl_s, o_.renew_margin_s));
    if (moved) {
      routes_ok_ = false;  // subnet.env waits for the routes of the new subnet
      env_written_.reset();
      try {
        backend_->Setup(l);
      } catch (const std::exception& e) {
        // Setup only forgets a route the backend had to this subnet; the reconcile removes it too.
        log::Error("backend setup for {}: {}", Describe(l.subnet), e.what());
      }
      own_subnet_ = l.subnet;
    }
    ResyncRules();
    Reconcile();
  }

  void LoseLease(const std::string& why) {
    log::Warn("lease {} lost ({}): taking a lease again, preferring the same subnet", Describe(own_->subnet), why);
    hint_ = own_->subnet;
    own_.reset();
    acquire_at_ = Clock::now();
    acquire_backoff_.Reset();
  }

  void TryRenew() {
    if (own_->etcd_lease == 0) {
      // An operator's reservation (a key bound to no etcd lease) never expires: nothing to renew.
      renew_at_ = Clock::time_point::max();
      return;
    }
    try {
      auto renewed = registry_->RenewLease(*own_, mine_, o_.lease_ttl_s);
      if (!renewed) {
        LoseLease("changed or deleted in etcd before the renewal");
        return;
      }
      own_ = *renewed;
      cni::fault::Point("renewed lease");
      renew_at_ = Clock::now() + seconds(RenewAfterSeconds(o_.lease_ttl_s, o_.renew_margin_s));
      log::Info("renewed {} (etcd lease {:x})", Describe(own_->subnet), own_->etcd_lease);
    } catch (const std::exception& e) {
      // flanneld retries every minute; a short test TTL needs sooner.
      int64_t retry = std::clamp<int64_t>(RenewAfterSeconds(o_.lease_ttl_s, o_.renew_margin_s) / 10, 1, 60);
      log::Warn("cannot renew {}: {}; retrying in {} s", Describe(own_->subnet), e.what(), retry);
      renew_at_ = Clock::now() + seconds(retry);
    }
  }

  nat::ClusterRules Rules() const {
    nat::ClusterRules r;
    r.v4 = nat::ClusterFamily{cfg_.network, own_->subnet.v4};
    if (cfg_.enable_ipv6 && cfg_.ipv6_network && own_->subnet.v6) {
      r.v6 = nat::ClusterFamily{*cfg_.ipv6_network, *own_->subnet.v6};
    }
    r.masquerade = o_.ip_masq;
    r.forward = o_.forward_rules;
    return r;
  }

  void ResyncRules() {
    rules_at_ = Clock::now() + seconds(o_.rules_resync_s);
    try {
      nat::ApplyClusterRules(Rules());
      cni::fault::Point("cluster rules");
      if (!rules_ok_) log::Info("cluster rules in place (masquerade {}, forward {})", o_.ip_masq, o_.forward_rules);
      rules_ok_ = true;
    } catch (const std::exception& e) {
      log::Error("cannot install the cluster rules: {}; retrying in {} s", e.what(), o_.rules_resync_s);
      rules_ok_ = false;
    }
    WriteEnvIfReady();
  }

  void Reconcile() {
    Clock::time_point start = Clock::now();
    reconcile_at_ = start + seconds(o_.reconcile_interval_s);
    if (!have_snapshot_) return;  // Handle reconciles when the first snapshot arrives
    try {
      std::vector<Lease> peers = Peers();
      backend_->Reconcile(peers);
      routes_ok_ = true;
      log::Debug("reconcile: {} peer(s) in {:.3f} ms", peers.size(),
                 std::chrono::duration<double, std::milli>(Clock::now() - start).count());
    } catch (const std::exception& e) {
      log::Error("reconcile failed: {}; retrying in {} s", e.what(), o_.reconcile_interval_s);
      routes_ok_ = false;
    }
    WriteEnvIfReady();
  }

  // subnet.env is readiness: written once the lease, the routes and the rules are in place, and
  // rewritten when its content should change or the file was changed or removed behind our back.
  void WriteEnvIfReady() {
    if (!own_ || !rules_ok_ || !routes_ok_) return;
    SubnetEnvValues v;
    v.network = cfg_.network;
    v.subnet = own_->subnet.v4;  // rendered as its first host
    if (cfg_.enable_ipv6 && own_->subnet.v6) {
      v.ipv6_network = cfg_.ipv6_network;
      v.ipv6_subnet = own_->subnet.v6;
    }
    v.mtu = backend_->Mtu();
    v.ipmasq = o_.ip_masq;
    std::string text = RenderSubnetEnv(v);
    if (env_written_ && *env_written_ == text) {
      auto on_disk = ReadPreviousSubnet(o_.subnet_file);
      if (on_disk && on_disk->v4 == own_->subnet.v4 && on_disk->v6 == own_->subnet.v6) return;
    }
    try {
      WriteSubnetEnv(o_.subnet_file, v);
      cni::fault::Point("subnet.env");
      if (!env_written_ || *env_written_ != text)
        log::Info("wrote {} (subnet {})", o_.subnet_file, v.subnet->ToString());
      env_written_ = text;
    } catch (const std::exception& e) {
      log::Error("{}", e.what());
    }
  }

  // Every change is handed to the backend in the order etcd made it: a peer that came and went within one
  // response is added, then removed.
  void Handle(const WatchUpdate& u) {
    if (u.snapshot) {
      LeaseChanges changes = view_.Reset(*u.snapshot);
      // Our lease missing from a snapshot taken after we made it: it is gone.
      if (own_ && u.snapshot->revision >= own_->mod_revision && !view_.Find(own_->subnet)) {
        LoseLease("not in etcd any more");
      }
      Apply(changes);
      if (!have_snapshot_) {
        have_snapshot_ = true;
        if (own_) Reconcile();  // the first reconcile waits for the peers: it would remove their routes
      }
    }
    for (const LeaseEvent& ev : u.events) {
      LeaseChanges c = view_.Apply(ev);
      if (ev.kind == LeaseEvent::kDelete && own_ && ev.lease.subnet == own_->subnet &&
          ev.lease.mod_revision > own_->mod_revision) {
        LoseLease("deleted or expired in etcd");
      }
      Apply(c);
    }
  }

  void Apply(const LeaseChanges& changes) {
    for (const Lease& l : changes.removed) {
      if (!own_ && out_of_subnets_) acquire_at_ = Clock::now();  // a subnet was freed
      if (IsOurs(l) || (own_subnet_ && l.subnet == *own_subnet_)) continue;
      log::Info("peer {} ({}) went away", Describe(l.subnet), l.attrs.public_ip ? l.attrs.public_ip->ToString() : "-");
      if (!own_subnet_) continue;  // the backend is set up with the first lease, and keeps its routes after
      try {
        backend_->RemovePeer(l);
      } catch (const std::exception& e) {
        log::Error("removing peer {}: {}; the next reconcile retries", Describe(l.subnet), e.what());
      }
    }
    for (const Lease& l : changes.upserted) {
      if (own_ && l.subnet == own_->subnet) {
        if (l.mod_revision <= own_->mod_revision) continue;
        if (l.attrs.public_ip != mine_.public_ip) {
          LoseLease("taken by " + (l.attrs.public_ip ? l.attrs.public_ip->ToString() : std::string("another node")));
        } else {
          if (l.etcd_lease != own_->etcd_lease) {
            log::Error(
                "lease {} was rewritten by someone else with this node's public IP {} (two nodes with one "
                "public IP? set --public-ip or --iface): adopting it",
                Describe(l.subnet), mine_.public_ip->ToString());
          }
          own_ = l;
        }
        continue;
      }
      if (IsOurs(l)) continue;
      log::Info("peer {} at {} ({})", Describe(l.subnet), l.attrs.public_ip ? l.attrs.public_ip->ToString() : "-",
                l.attrs.backend_type);
      if (!own_subnet_) continue;
      try {
        backend_->AddPeer(l);
      } catch (const std::exception& e) {
        log::Error("adding peer {}: {}; the next reconcile retries", Describe(l.subnet), e.what());
      }
    }
  }

  const AgentOptions& o_;
  const std::atomic<bool>& stop_;
  std::mt19937_64 rng_;
  Uplink uplink_;
  std::unique_ptr<Registry> registry_;
  std::unique_ptr<Backend> backend_;
  NetworkConfig cfg_;
  std::optional<VxlanConfig> vxlan_;  // Backend's keys, when cfg_ is a vxlan network
  LeaseAttrs mine_;
  LeaseView view_;
  Mailbox mailbox_;
  std::optional<Lease> own_;
  std::optional<SubnetKey> own_subnet_;  // the subnet the backend and rules are set up for
  std::optional<SubnetKey> hint_;        // the subnet to ask for first
  std::optional<std::string> env_written_;
  bool have_snapshot_ = false;  // the watcher's first snapshot is in view_
  bool rules_ok_ = false;
  bool routes_ok_ = false;
  bool out_of_subnets_ = false;
  Backoff acquire_backoff_{milliseconds(500), milliseconds(5000)};
  Clock::time_point acquire_at_{}, renew_at_{}, reconcile_at_{}, rules_at_{};
};

}  // namespace

int RunAgent(const AgentOptions& options, const std::atomic<bool>& stop) {
  try {
    Daemon d(options, stop);
    return d.Run();
  } catch (const std::exception& e) {
    // Only start-up can get here (the loop catches what it retries): a netlink socket, a thread.
    log::Error("cannot run: {}", e.what());
    return 1;
  }
}

int RunCleanup(int route_protocol) {
  int rc = 0;
  try {
    bool had = nat::RemoveClusterRules();
    log::Info("cluster rules {}", had ? "removed" : "were not there");
  } catch (const std::exception& e) {
    log::Error("cannot remove the cluster rules: {}", e.what());
    rc = 1;
  }
  try {
    int n = RemoveAgentRoutes(route_protocol);
    log::Info("{} route(s) of protocol {} removed", n, route_protocol);
  } catch (const std::exception& e) {
    log::Error("cannot remove the agent's routes: {}", e.what());
    rc = 1;
  }
  try {
    int n = RemoveVxlanDevices();
    log::Info("{} vxlan device(s) removed", n);
  } catch (const std::exception& e) {
    log::Error("cannot remove the vxlan devices: {}", e.what());
    rc = 1;
  }
  return rc;
}

}  // namespace netiface::agent
