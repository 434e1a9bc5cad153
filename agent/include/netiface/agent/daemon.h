// The agent's main loop: fetch the network config, take a lease, program the backend and the rules,
// write subnet.env (readiness), then keep all of it true: renew the lease, follow the other nodes'
// leases, re-take a lost lease (preferring the same subnet), reconcile routes and rules periodically.
// One thread does all of it; the lease watcher feeds it from another.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>

#include "netiface/agent/uplink.h"
#include "netiface/etcd/client.h"

namespace netiface::agent {

struct AgentOptions {
  etcd::ClientOptions etcd;
  std::string prefix = "/coreos.com/network";
  UplinkQuery uplink;
  std::string subnet_file = "/run/flannel/subnet.env";
  bool ip_masq = false;
  bool forward_rules = true;
  int64_t renew_margin_s = 60 * 60;
  int64_t lease_ttl_s = 24 * 3600;
  int reconcile_interval_s = 10;  // routes (and subnet.env's content)
  int rules_resync_s = 5;         // masquerade and forward rules
  int route_protocol = 78;
};

// Runs until `stop` becomes true (looked at least every 250 ms). Returns the process exit code: 0 after
// a stop, 1 when the agent cannot start on this node (no uplink, bad etcd options). Every failure of etcd,
// the kernel or nftables after that is logged and retried; state already programmed stays in place, and
// so it does on exit (lease, routes, rules, subnet.env), as with flanneld: a restart changes nothing.
int RunAgent(const AgentOptions& options, const std::atomic<bool>& stop);

// `netiface-agent cleanup`: removes the cluster rules and every route carrying the agent's protocol.
// Leaves the lease and subnet.env. Returns 0, or 1 when something could not be removed.
int RunCleanup(int route_protocol);

}  // namespace netiface::agent
