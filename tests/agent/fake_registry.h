// An in-memory Registry with EtcdRegistry's contract: one store revision bumped by every change, keys
// with create/mod revisions, every change after the first guarded by mod_revision, etcd leases with a
// TTL on a clock the test moves (Advance) or ends at once (Expire). Hooks run at the start of a call,
// before its guard is checked, so that a test can let "another node" change the store in between (a
// lost race). Thread-safe; hooks run without the lock held and may call the registry.
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <limits>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "netiface/agent/registry.h"
#include "netiface/etcd/types.h"

namespace netiface::testing {

class FakeRegistry : public agent::Registry {
 public:
  // nullopt: no config stored (GetConfig throws ConfigError).
  explicit FakeRegistry(std::optional<std::string> config_json = R"({"Network":"10.5.0.0/16"})",
                        std::string prefix = std::string(agent::kDefaultPrefix))
      : config_json_(std::move(config_json)), prefix_(std::move(prefix)) {}

  // Hooks (set before use). Each gets the subnet the call is about.
  std::function<void(const agent::SubnetKey&)> before_create;
  std::function<void(const agent::SubnetKey&)> before_renew;
  std::function<void(const agent::SubnetKey&)> before_delete;
  // When set, ListLeases (and the other calls) throw etcd::Error(kUnavailable) while it returns true.
  std::function<bool()> unavailable;

  // --- Registry
  agent::NetworkConfig GetConfig() override {
    CheckAvailable();
    std::lock_guard<std::mutex> lock(mu_);
    if (!config_json_) throw agent::ConfigError("network config not found at " + agent::ConfigKey(prefix_));
    return agent::ParseNetworkConfig(*config_json_);
  }

  agent::LeaseSnapshot ListLeases() override {
    CheckAvailable();
    std::lock_guard<std::mutex> lock(mu_);
    ++list_calls_;
    agent::LeaseSnapshot snap;
    snap.revision = revision_;
    for (const auto& [subnet, rec] : keys_) snap.leases.push_back(rec.lease);
    return snap;
  }

  std::optional<agent::Lease> CreateLease(const agent::SubnetKey& subnet, const agent::LeaseAttrs& attrs,
                                          int64_t ttl_seconds, int64_t listed_revision) override {
    CheckAvailable();
    if (before_create) before_create(subnet);
    std::lock_guard<std::mutex> lock(mu_);
    ++create_calls_;
    const int64_t lease = GrantLocked(ttl_seconds);
    const bool newer = std::any_of(keys_.begin(), keys_.end(),
                                   [&](const auto& kv) { return kv.second.create_revision > listed_revision; });
    if (keys_.count(subnet) || newer) {
      ++lost_races_;
      etcd_leases_.erase(lease);
      return std::nullopt;
    }
    return PutLocked(subnet, attrs, lease);
  }

  std::optional<agent::Lease> RenewLease(const agent::Lease& current, const agent::LeaseAttrs& attrs,
                                         int64_t ttl_seconds) override {
    CheckAvailable();
    if (before_renew) before_renew(current.subnet);
    std::lock_guard<std::mutex> lock(mu_);
    ++renew_calls_;
    const int64_t lease = GrantLocked(ttl_seconds);
    auto it = keys_.find(current.subnet);
    if (it == keys_.end() || it->second.lease.mod_revision != current.mod_revision) {
      ++lost_races_;
      etcd_leases_.erase(lease);
      return std::nullopt;
    }
    agent::Lease l = PutLocked(current.subnet, attrs, lease);
    if (current.etcd_lease != lease) RevokeLocked(current.etcd_lease);
    return l;
  }

  bool DeleteLease(const agent::Lease& lease) override {
    CheckAvailable();
    if (before_delete) before_delete(lease.subnet);
    std::lock_guard<std::mutex> lock(mu_);
    auto it = keys_.find(lease.subnet);
    if (it == keys_.end() || it->second.lease.mod_revision != lease.mod_revision) return false;
    keys_.erase(it);
    ++revision_;
    ++delete_calls_;
    return true;
  }

  int64_t TimeLeft(const agent::Lease& lease) override {
    CheckAvailable();
    std::lock_guard<std::mutex> lock(mu_);
    if (lease.etcd_lease == 0) return std::numeric_limits<int64_t>::max();
    auto it = etcd_leases_.find(lease.etcd_lease);
    return it == etcd_leases_.end() ? -1 : it->second - now_;
  }

  // --- The test's side
  // Writes a lease unconditionally, as another node (or flanneld) would; ttl 0 binds it to no etcd lease.
  agent::Lease Put(const agent::SubnetKey& subnet, const agent::LeaseAttrs& attrs, int64_t ttl_seconds = 0) {
    std::lock_guard<std::mutex> lock(mu_);
    return PutLocked(subnet, attrs, GrantLocked(ttl_seconds));
  }
  // Ends the etcd lease the key is bound to now, deleting every key bound to it (or the key itself when
  // it has none). False when the key is absent.
  bool Expire(const agent::SubnetKey& subnet) {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = keys_.find(subnet);
    if (it == keys_.end()) return false;
    if (it->second.lease.etcd_lease == 0) {
      keys_.erase(it);
      ++revision_;
    } else {
      RevokeLocked(it->second.lease.etcd_lease);
    }
    return true;
  }
  // Moves the clock; etcd leases whose TTL ran out expire with their keys.
  void Advance(int64_t seconds) {
    std::lock_guard<std::mutex> lock(mu_);
    now_ += seconds;
    std::vector<int64_t> due;
    for (const auto& [id, deadline] : etcd_leases_) {
      if (deadline <= now_) due.push_back(id);
    }
    for (int64_t id : due) RevokeLocked(id);
  }
  void SetConfig(std::optional<std::string> json) {
    std::lock_guard<std::mutex> lock(mu_);
    config_json_ = std::move(json);
  }

  std::vector<agent::Lease> Leases() const {
    std::lock_guard<std::mutex> lock(mu_);
    std::vector<agent::Lease> out;
    for (const auto& [subnet, rec] : keys_) out.push_back(rec.lease);
    return out;
  }
  std::optional<agent::Lease> Find(const agent::SubnetKey& subnet) const {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = keys_.find(subnet);
    if (it == keys_.end()) return std::nullopt;
    return it->second.lease;
  }
  int64_t revision() const { return Locked(revision_); }
  int64_t now() const { return Locked(now_); }
  // etcd leases granted and neither revoked nor expired.
  size_t live_etcd_leases() const { return Locked(etcd_leases_).size(); }
  int list_calls() const { return Locked(list_calls_); }
  int create_calls() const { return Locked(create_calls_); }
  int renew_calls() const { return Locked(renew_calls_); }
  int delete_calls() const { return Locked(delete_calls_); }
  int lost_races() const { return Locked(lost_races_); }

 private:
  struct Record {
    agent::Lease lease;
    int64_t create_revision = 0;
  };

  template <typename T>
  T Locked(const T& v) const {
    std::lock_guard<std::mutex> lock(mu_);
    return v;
  }

  void CheckAvailable() {
    if (unavailable && unavailable()) {
      throw etcd::Error(etcd::Error::kUnavailable, "fake registry: unavailable (test)");
    }
  }

  int64_t GrantLocked(int64_t ttl_seconds) {
    if (ttl_seconds <= 0) return 0;
    const int64_t id = next_lease_id_++;
    etcd_leases_[id] = now_ + ttl_seconds;
    return id;
  }

  agent::Lease PutLocked(const agent::SubnetKey& subnet, const agent::LeaseAttrs& attrs, int64_t etcd_lease) {
    ++revision_;
    agent::Lease l{subnet, attrs, etcd_lease, revision_};
    auto it = keys_.find(subnet);
    keys_[subnet] = Record{l, it == keys_.end() ? revision_ : it->second.create_revision};
    return l;
  }

  // As etcd: revoking a lease deletes its keys in one revision; an unknown lease is fine.
  void RevokeLocked(int64_t id) {
    if (id == 0 || !etcd_leases_.erase(id)) return;
    bool deleted = false;
    for (auto it = keys_.begin(); it != keys_.end();) {
      if (it->second.lease.etcd_lease == id) {
        it = keys_.erase(it);
        deleted = true;
      } else {
        ++it;
      }
    }
    if (deleted) ++revision_;
  }

  mutable std::mutex mu_;
  std::optional<std::string> config_json_;
  std::string prefix_;
  std::map<agent::SubnetKey, Record> keys_;
  std::map<int64_t, int64_t> etcd_leases_;  // id -> deadline on the fake clock
  int64_t revision_ = 1;
  int64_t now_ = 0;
  int64_t next_lease_id_ = 0x1000;
  int list_calls_ = 0, create_calls_ = 0, renew_calls_ = 0, delete_calls_ = 0, lost_races_ = 0;
};

}  // namespace netiface::testing
