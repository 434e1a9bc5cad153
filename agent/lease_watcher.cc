#include "netiface/agent/lease_watcher.h"

#include "netiface/agent/backoff.h"
#include "netiface/cni/log.h"
#include "netiface/etcd/client.h"

namespace netiface::agent {

std::optional<LeaseEvent> ToLeaseEvent(std::string_view prefix, const etcd::Event& e) {
  auto subnet = SubnetKeyFromEtcdKey(prefix, e.kv.key);
  if (!subnet) {
    log::Warn("ignoring etcd key {}: not a lease key", e.kv.key);
    return std::nullopt;
  }
  LeaseEvent ev;
  ev.lease.subnet = *subnet;
  ev.lease.mod_revision = e.kv.mod_revision;
  if (e.type == etcd::EventType::kDelete) {
    ev.kind = LeaseEvent::kDelete;
    return ev;
  }
  try {
    ev.lease.attrs = DecodeLeaseAttrs(e.kv.value);
  } catch (const std::exception& ex) {
    log::Warn("ignoring lease {}: {}", e.kv.key, ex.what());
    return std::nullopt;
  }
  ev.lease.etcd_lease = e.kv.lease;
  return ev;
}

LeaseWatcher::LeaseWatcher(etcd::Client& client, Registry& registry, std::string prefix,
                           std::function<void(WatchUpdate)> sink)
    : client_(client), registry_(registry), prefix_(std::move(prefix)), sink_(std::move(sink)) {
  thread_ = std::thread([this] { Loop(); });
}

LeaseWatcher::~LeaseWatcher() { Stop(); }

void LeaseWatcher::Stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

bool LeaseWatcher::SleepFor(std::chrono::milliseconds d) {
  std::unique_lock<std::mutex> lock(mu_);
  return !cv_.wait_for(lock, d, [this] { return stop_.load(); });
}

void LeaseWatcher::Loop() {
  Backoff backoff(std::chrono::milliseconds(100), std::chrono::milliseconds(5000));
  bool need_snapshot = true;
  bool outage = false;
  bool compacted = false;
  int64_t next_revision = 0;
  const std::string subnets = SubnetsPrefix(prefix_);
  while (!stop_) {
    try {
      if (need_snapshot) {
        LeaseSnapshot snap = registry_.ListLeases();
        next_revision = snap.revision + 1;
        need_snapshot = false;
        log::Info("leases listed at revision {}: {} lease(s)", snap.revision, snap.leases.size());
        sink_(WatchUpdate{std::move(snap), {}});
      }
      client_.WatchPrefix(
          subnets, next_revision,
          [&](const etcd::WatchResponse& r) {
            if (outage) {
              log::Info("etcd reachable again: watch resumed from revision {}", next_revision);
              outage = false;
            }
            if (r.canceled) {
              log::Warn("lease watch canceled by etcd ({}); listing the leases again",
                        r.compact_revision > 0 ? "revision " + std::to_string(next_revision) +
                                                     " compacted, oldest kept " + std::to_string(r.compact_revision)
                                               : r.cancel_reason);
              need_snapshot = true;
              compacted = r.compact_revision > 0;
              return false;
            }
            if (r.created && r.revision > 0 && r.revision + 1 < next_revision) {
              log::Warn("etcd is at revision {}, behind the {} already seen: listing the leases again", r.revision,
                        next_revision - 1);
              need_snapshot = true;
              return false;
            }
            backoff.Reset();  // a healthy message; a cancel keeps the backoff growing
            // A message without events (a progress notification) says every revision up to its header's
            // has been delivered: a later resume need not go back further (and hit a compaction).
            if (r.events.empty() && !r.created && r.revision > 0)
              next_revision = std::max(next_revision, r.revision + 1);
            WatchUpdate u;
            for (const etcd::Event& e : r.events) {
              next_revision = std::max(next_revision, e.kv.mod_revision + 1);
              if (auto ev = ToLeaseEvent(prefix_, e)) u.events.push_back(std::move(*ev));
            }
            if (!u.events.empty()) sink_(std::move(u));
            return !stop_.load();
          },
          &stop_);
      // The stream ended without an error: etcd closed it, or canceled the watch. Only a compaction is
      // answered at once (with a snapshot); anything else waits its backoff, so that a cancel that repeats
      // does not become a tight list-watch loop against etcd.
      if (!stop_ && !compacted && !SleepFor(backoff.Next())) break;
      compacted = false;
    } catch (const std::exception& e) {
      if (stop_) break;
      auto wait = backoff.Next();
      if (!outage) {
        log::Warn("lease watch interrupted: {}; retrying (backoff up to 5 s)", e.what());
        outage = true;
      } else {
        log::Debug("lease watch still failing: {}; next try in {} ms", e.what(), wait.count());
      }
      if (!SleepFor(wait)) break;
    }
  }
}

}  // namespace netiface::agent
