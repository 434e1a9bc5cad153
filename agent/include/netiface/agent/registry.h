// The store of leases, as the lease algorithm needs it. EtcdRegistry is flanneld's etcd layout; tests
// use an in-memory registry with the same contract.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "netiface/agent/lease.h"
#include "netiface/agent/network_config.h"

namespace netiface::etcd {
class Client;
}

namespace netiface::agent {

struct LeaseSnapshot {
  std::vector<Lease> leases;  // every parsable lease under <prefix>/subnets/ (others are skipped with a warning)
  int64_t revision = 0;       // the store's revision the snapshot was taken at
  // Lease keys whose value cannot be read: no peer to route to, but their subnets are taken all the same.
  std::vector<SubnetKey> unreadable;
};

// Every call may throw etcd::Error (kUnavailable when the store cannot be reached).
class Registry {
 public:
  virtual ~Registry() = default;
  // The network config; throws ConfigError when it is missing or invalid (the message says which).
  virtual NetworkConfig GetConfig() = 0;
  virtual LeaseSnapshot ListLeases() = 0;
  // In CreateLease and RenewLease, `ttl_seconds` 0 binds the key to no etcd lease (etcd_lease 0).
  // Creates the lease bound to a new etcd lease of `ttl_seconds`, only if the key does not exist and no
  // lease was created after `listed_revision` (the snapshot the subnet was chosen from): two nodes that
  // chose at once cannot both win, also when their keys differ but share a subnet (a dual-stack key names
  // both subnets). nullopt when either happened (a lost race); the new etcd lease is then revoked.
  virtual std::optional<Lease> CreateLease(const SubnetKey& subnet, const LeaseAttrs& attrs, int64_t ttl_seconds,
                                           int64_t listed_revision) = 0;
  // Rebinds `current` to a new etcd lease of `ttl_seconds` with `attrs`, only if the key's mod_revision
  // is still current.mod_revision; the old etcd lease is revoked afterwards. nullopt when the key changed
  // or vanished meanwhile (the lease is lost).
  virtual std::optional<Lease> RenewLease(const Lease& current, const LeaseAttrs& attrs, int64_t ttl_seconds) = 0;
  // Deletes the key if its mod_revision is still `lease.mod_revision`. False when it had changed or was gone.
  virtual bool DeleteLease(const Lease& lease) = 0;
  // Seconds left of the etcd lease a key is bound to; -1 when expired; INT64_MAX for a lease bound to
  // no etcd lease (etcd_lease 0: never expires).
  virtual int64_t TimeLeft(const Lease& lease) = 0;
};

// flanneld's layout under `prefix` (e.g. "/coreos.com/network").
std::unique_ptr<Registry> MakeEtcdRegistry(etcd::Client& client, std::string prefix);

}  // namespace netiface::agent
