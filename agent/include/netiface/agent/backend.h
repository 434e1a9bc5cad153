// A backend turns the leases of the other nodes into kernel state on this node. The daemon calls it
// from one thread: Setup once a lease is held, then one call per watch event, and Reconcile from the
// periodic loop (which is also how it catches up after a failure: a failed AddPeer is logged, and the
// next Reconcile retries it).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "netiface/agent/lease.h"
#include "netiface/agent/network_config.h"
#include "netiface/agent/uplink.h"

namespace netiface::agent {

class Backend {
 public:
  virtual ~Backend() = default;
  virtual std::string Type() const = 0;
  // What this node publishes in its lease: BackendData and, dual stack, BackendV6Data (null for host-gw).
  virtual nlohmann::json BackendData() const = 0;
  virtual nlohmann::json BackendV6Data() const = 0;
  // FLANNEL_MTU for pods on this node.
  virtual int Mtu() const = 0;
  // Called once the node's own lease is known (and again when it changes). Throws on a kernel failure
  // (the caller logs it; Reconcile sets up what Setup could not).
  virtual void Setup(const Lease& own) = 0;
  // A remote lease appeared or changed. Throws on a kernel failure (the caller logs it).
  virtual void AddPeer(const Lease& peer) = 0;
  // A remote lease went away.
  virtual void RemovePeer(const Lease& peer) = 0;
  // Makes the kernel state exactly what `peers` need: re-adds what is missing, removes what is stale.
  // A peer whose entries the kernel refuses is logged and skipped (retried next time); throws only when
  // the state cannot be read at all.
  virtual void Reconcile(const std::vector<Lease>& peers) = 0;
};

}  // namespace netiface::agent
