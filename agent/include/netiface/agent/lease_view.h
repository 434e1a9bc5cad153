// What the agent knows of the cluster's leases, kept from a snapshot and the watch events after it.
// Pure: it only says what changed; the daemon hands the changes to the backend and its own-lease logic.
#pragma once

#include <map>
#include <optional>
#include <vector>

#include "netiface/agent/lease.h"
#include "netiface/agent/registry.h"

namespace netiface::agent {

// One event of the watch, as a lease: a kDelete carries the subnet and the deletion's revision.
struct LeaseEvent {
  enum Kind { kPut, kDelete } kind = kPut;
  Lease lease;
};

struct LeaseChanges {
  std::vector<Lease> upserted;  // new, or changed (another value or etcd lease)
  std::vector<Lease> removed;   // the lease as it was before it went
  bool empty() const { return upserted.empty() && removed.empty(); }
};

class LeaseView {
 public:
  // Replaces what is known by `snapshot`: every lease that is new or differs is upserted, every lease
  // that is no longer there removed (a re-list after a compaction, or the first list).
  LeaseChanges Reset(const LeaseSnapshot& snapshot);
  // Applies one event. An event older than what is known (mod_revision at or below the known one) is
  // ignored: a resumed watch may repeat what a snapshot already had.
  LeaseChanges Apply(const LeaseEvent& event);

  std::vector<Lease> All() const;
  std::optional<Lease> Find(const SubnetKey& k) const;
  int64_t revision() const { return revision_; }  // the newest revision seen (snapshot or event)

 private:
  std::map<SubnetKey, Lease> leases_;
  int64_t revision_ = 0;
};

}  // namespace netiface::agent
