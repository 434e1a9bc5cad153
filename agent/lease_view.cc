#include "netiface/agent/lease_view.h"

#include <algorithm>

namespace netiface::agent {

LeaseChanges LeaseView::Reset(const LeaseSnapshot& snapshot) {
  LeaseChanges changes;
  std::map<SubnetKey, Lease> next;
  for (const Lease& l : snapshot.leases) next[l.subnet] = l;
  for (const auto& [key, old] : leases_) {
    if (next.count(key) == 0) changes.removed.push_back(old);
  }
  for (const auto& [key, lease] : next) {
    auto it = leases_.find(key);
    if (it == leases_.end() || it->second != lease) changes.upserted.push_back(lease);
  }
  leases_ = std::move(next);
  revision_ = std::max(revision_, snapshot.revision);
  return changes;
}

LeaseChanges LeaseView::Apply(const LeaseEvent& event) {
  LeaseChanges changes;
  const Lease& l = event.lease;
  revision_ = std::max(revision_, l.mod_revision);
  auto it = leases_.find(l.subnet);
  if (it != leases_.end() && l.mod_revision != 0 && l.mod_revision <= it->second.mod_revision) return changes;
  if (event.kind == LeaseEvent::kDelete) {
    if (it == leases_.end()) return changes;
    changes.removed.push_back(it->second);
    leases_.erase(it);
    return changes;
  }
  if (it != leases_.end() && it->second == l) return changes;
  leases_[l.subnet] = l;
  changes.upserted.push_back(l);
  return changes;
}

std::vector<Lease> LeaseView::All() const {
  std::vector<Lease> out;
  out.reserve(leases_.size());
  for (const auto& [key, lease] : leases_) out.push_back(lease);
  return out;
}

std::optional<Lease> LeaseView::Find(const SubnetKey& k) const {
  auto it = leases_.find(k);
  if (it == leases_.end()) return std::nullopt;
  return it->second;
}

}  // namespace netiface::agent
