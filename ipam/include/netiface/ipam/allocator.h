// The allocator of one range set (the reference's backend/allocator): which address an attachment gets.
// A requested address is taken as it is or not at all; otherwise the set is walked from just after the
// range set's last-reserved pointer (CandidateIter: rangeStart..rangeEnd of each range, wrapping across
// the set, gateways skipped) and the first free address is reserved. The reservation and the pointer
// are written to the store; undoing the reservation when a later step of the caller fails is the
// caller's (host-local's ADD).
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "netiface/cni/ip.h"
#include "netiface/ipam/range.h"
#include "netiface/ipam/store.h"

namespace netiface::ipam {

struct Allocation {
  cni::IpAddr ip;
  const Range* range = nullptr;  // the range of the set holding ip (never null)
  // The address as the result reports it: ip with the range's prefix length.
  cni::IpNet Address() const { return cni::IpNet(ip, range->subnet.prefix_len()); }
};

class Allocator {
 public:
  // `set` is range set number `range_set_index` of the config (the index names its pointer file and
  // appears in errors). REQUIRES: `set` non-empty and outliving the allocator.
  Allocator(const RangeSet& set, size_t range_set_index) : set_(set), index_(range_set_index) {}

  // Reserves one address of the set for (container_id, ifname) and moves the set's last-reserved
  // pointer to it. `held` is what the attachment already holds in the store (Store::Find). Throws
  // Error(kInternal) when it already holds an address of this set (no duplicate allocation), when the
  // requested address lies outside the set, or when the requested address is held (naming the holder);
  // Error(kTryAgainLater) "no IP addresses available in range set: <set>" when every address is taken.
  // Every message starts "failed to allocate for range <index>: ", as the reference's. All or nothing:
  // when it throws (a write of the pointer included), no address of this call stays reserved.
  Allocation Get(Store& store, const Store::Held& held, std::string_view container_id, std::string_view ifname,
                 const std::optional<cni::IpAddr>& requested) const;

 private:
  [[noreturn]] void Fail(int code, const std::string& why) const;

  const RangeSet& set_;
  size_t index_;
};

}  // namespace netiface::ipam
