#include "netiface/ipam/allocator.h"

#include "netiface/cni/error.h"
#include "netiface/cni/log.h"
#include "netiface/ipam/reservation.h"

namespace netiface::ipam {
namespace {

std::string DescribeAttachment(std::string_view container_id, std::string_view ifname) {
  return std::string(container_id) + " (ifname " + std::string(ifname) + ")";
}

}  // namespace

void Allocator::Fail(int code, const std::string& why) const {
  throw cni::Error(code, "failed to allocate for range " + std::to_string(index_) + ": " + why);
}

Allocation Allocator::Get(Store& store, const Store::Held& held, std::string_view container_id, std::string_view ifname,
                          const std::optional<cni::IpAddr>& requested) const {
  for (const auto* list : {&held.exact, &held.legacy}) {
    for (const cni::IpAddr& ip : *list) {
      if (set_.Contains(ip)) {
        Fail(cni::kInternal, ip.ToString() + " has been allocated to " + DescribeAttachment(container_id, ifname) +
                                 ", duplicate allocation is not allowed");
      }
    }
  }
  Allocation got;
  if (requested) {
    got.range = set_.RangeFor(*requested);
    if (!got.range) Fail(cni::kInternal, requested->ToString() + " not in range set " + set_.ToString());
    if (!store.Reserve(*requested, container_id, ifname)) {
      Fail(cni::kInternal, "requested IP address " + requested->ToString() + " is not available in range set " +
                               set_.ToString() + ": it is held by " +
                               DescribeOwner(store.Owner(*requested).value_or("")));
    }
    got.ip = *requested;
  } else {
    CandidateIter it(set_, store.LastReserved(index_));
    auto c = store.ReserveFirst(it, container_id, ifname);
    if (!c) Fail(cni::kTryAgainLater, "no IP addresses available in range set: " + set_.ToString());
    got.ip = c->ip;
    got.range = c->range;
  }
  try {
    store.SetLastReserved(index_, got.ip);
  } catch (...) {
    // All or nothing: the address reserved above must not outlive the failed call.
    try {
      store.ReleaseIfOwner(got.ip, TrimSpace(EncodeOwner(container_id, ifname)));
    } catch (const std::exception& e) {
      log::Error("ipam: cannot release {} after a failed allocation: {}", got.ip.ToString(), e.what());
    }
    throw;
  }
  return got;
}

}  // namespace netiface::ipam
