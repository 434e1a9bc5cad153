// flanneld's etcd layout (pkg/subnet/etcd/registry.go) over the JSON-gateway client. Every change of a
// lease key is a compare-and-swap on its mod_revision, and an etcd lease granted for a change that did
// not happen is revoked, so a lost race leaves nothing behind.
#include <limits>
#include <utility>

#include "netiface/agent/registry.h"
#include "netiface/cni/log.h"
#include "netiface/etcd/client.h"

namespace netiface::agent {
namespace {

class EtcdRegistry : public Registry {
 public:
  EtcdRegistry(etcd::Client& client, std::string prefix) : client_(client), prefix_(std::move(prefix)) {
    while (!prefix_.empty() && prefix_.back() == '/') prefix_.pop_back();
  }

  NetworkConfig GetConfig() override {
    const std::string key = ConfigKey(prefix_);
    etcd::RangeResult r = client_.Get(key);
    if (r.kvs.empty()) throw ConfigError("network config not found at " + key);
    try {
      return ParseNetworkConfig(r.kvs.front().value);
    } catch (const ConfigError& e) {
      throw ConfigError("network config at " + key + ": " + e.what());
    }
  }

  LeaseSnapshot ListLeases() override {
    etcd::RangeResult r = client_.GetPrefix(SubnetsPrefix(prefix_));
    LeaseSnapshot snap;
    snap.revision = r.revision;
    for (const etcd::KeyValue& kv : r.kvs) {
      std::optional<SubnetKey> subnet = SubnetKeyFromEtcdKey(prefix_, kv.key);
      if (!subnet) {
        log::Warn("skipping {}: not a lease key", kv.key);
        continue;
      }
      try {
        snap.leases.push_back(Lease{*subnet, DecodeLeaseAttrs(kv.value), kv.lease, kv.mod_revision});
      } catch (const std::invalid_argument& e) {
        log::Warn("lease {} has a value that cannot be read ({}): its subnet counts as taken", kv.key, e.what());
        snap.unreadable.push_back(*subnet);
      }
    }
    return snap;
  }

  std::optional<Lease> CreateLease(const SubnetKey& subnet, const LeaseAttrs& attrs, int64_t ttl_seconds,
                                   int64_t listed_revision) override {
    return Put(subnet, attrs, ttl_seconds, 0, 0, listed_revision);
  }

  std::optional<Lease> RenewLease(const Lease& current, const LeaseAttrs& attrs, int64_t ttl_seconds) override {
    return Put(current.subnet, attrs, ttl_seconds, current.mod_revision, current.etcd_lease, 0);
  }

  bool DeleteLease(const Lease& lease) override {
    return client_.DeleteIfModRevision(LeaseKey(prefix_, lease.subnet), lease.mod_revision);
  }

  int64_t TimeLeft(const Lease& lease) override {
    if (lease.etcd_lease == 0) return std::numeric_limits<int64_t>::max();
    return client_.TimeToLive(lease.etcd_lease).ttl;
  }

 private:
  // Writes the key bound to a fresh etcd lease (none for ttl 0) if its mod_revision is `mod_revision`
  // (0: absent, and then only if no lease was created after `listed_revision`); `old_lease` is revoked once
  // it is not bound to the key any more.
  // A transaction whose answer is lost (a timeout, or a failover that ran it again on another member,
  // where its compare then fails) may still have been applied: the key is read back, and when it is bound
  // to the fresh lease the write counts. The fresh lease is revoked only when it is certainly unused;
  // when that cannot be told, it is left to expire by itself, since revoking it could delete our own key.
  std::optional<Lease> Put(const SubnetKey& subnet, const LeaseAttrs& attrs, int64_t ttl_seconds, int64_t mod_revision,
                           int64_t old_lease, int64_t listed_revision) {
    const std::string key = LeaseKey(prefix_, subnet);
    const int64_t lease = ttl_seconds > 0 ? client_.Grant(ttl_seconds).id : 0;
    const std::string value = EncodeLeaseAttrs(attrs);
    bool written = false;
    int64_t revision = 0;
    try {
      written = mod_revision == 0 ? client_.CreateIfNoneCreatedAfter(key, value, lease, SubnetsPrefix(prefix_),
                                                                     listed_revision, &revision)
                                  : client_.PutIfModRevision(key, value, lease, mod_revision, &revision);
    } catch (...) {
      ReadBackResult now = ReadBack(key);
      if (now.known && IsOurWrite(now, lease, value))
        return Written(subnet, attrs, lease, now.kv->mod_revision, old_lease);
      if (now.known) RevokeQuietly(lease);  // certainly unused; unknown: it expires by itself
      throw;
    }
    if (!written) {
      // A failover may have run the transaction again on another member after the first one applied it.
      ReadBackResult now = ReadBack(key);
      if (now.known && IsOurWrite(now, lease, value))
        return Written(subnet, attrs, lease, now.kv->mod_revision, old_lease);
      if (now.known) RevokeQuietly(lease);
      return std::nullopt;
    }
    return Written(subnet, attrs, lease, revision, old_lease);
  }

  Lease Written(const SubnetKey& subnet, const LeaseAttrs& attrs, int64_t lease, int64_t revision, int64_t old_lease) {
    if (old_lease != lease) RevokeQuietly(old_lease);
    return Lease{subnet, attrs, lease, revision};
  }

  struct ReadBackResult {
    bool known = false;                // false: etcd could not be asked
    std::optional<etcd::KeyValue> kv;  // the key as it is now (nullopt: absent)
  };
  ReadBackResult ReadBack(const std::string& key) {
    try {
      etcd::RangeResult r = client_.Get(key);
      if (r.kvs.empty()) return {true, std::nullopt};
      return {true, r.kvs.front()};
    } catch (const std::exception& e) {
      log::Warn("cannot read {} back after an unanswered write: {}", key, e.what());
      return {};
    }
  }

  static bool IsOurWrite(const ReadBackResult& now, int64_t lease, const std::string& value) {
    return lease != 0 && now.kv && now.kv->lease == lease && now.kv->value == value;
  }

  // A lease that cannot be revoked now expires by itself.
  void RevokeQuietly(int64_t lease) {
    if (lease == 0) return;
    try {
      client_.Revoke(lease);
    } catch (const std::exception& e) {
      log::Warn("cannot revoke etcd lease {:x} (it will expire by itself): {}", lease, e.what());
    }
  }

  etcd::Client& client_;
  std::string prefix_;
};

}  // namespace

std::unique_ptr<Registry> MakeEtcdRegistry(etcd::Client& client, std::string prefix) {
  return std::make_unique<EtcdRegistry>(client, std::move(prefix));
}

}  // namespace netiface::agent
