// Address ranges and range sets as host-local defines them (plugins/ipam/host-local/backend/allocator
// range.go, range_set.go, allocator.go), and the round-robin order in which a set's addresses are tried.
// Pure values: no I/O.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "netiface/cni/ip.h"

namespace netiface::ipam {

// v4-mapped IPv6 addresses become IPv4 (Go's canonicalizeIP); everything else is returned unchanged.
cni::IpAddr Canonical(const cni::IpAddr& a);
// Parses an address (canonicalized); nullopt when `s` is not one.
std::optional<cni::IpAddr> ParseCanonical(std::string_view s);

// One range, after defaults: network address without host bits, rangeStart <= rangeEnd inside it.
struct Range {
  cni::IpNet subnet;
  cni::IpAddr range_start;
  cni::IpAddr range_end;
  cni::IpAddr gateway;

  // In the subnet and within [range_start, range_end].
  bool Contains(const cni::IpAddr& a) const;
  // Same family and either range holds the other's start or end (the reference's rule).
  bool Overlaps(const Range& o) const;
  // The number of addresses in [range_start, range_end], saturating at UINT64_MAX.
  uint64_t Size() const;
  std::string ToString() const;  // "start-end"
  bool operator==(const Range&) const = default;
};

// Parses and validates {subnet, rangeStart, rangeEnd, gateway}. `where` names the object in errors
// (e.g. "ipam.ranges[0][1]"). Throws Error(kInvalidConfig) naming the key and the value when: subnet is
// missing or not a CIDR, has host bits, or is a /31, /32, /127 or /128; an address does not parse or
// is of the other family; rangeStart or rangeEnd lies outside the subnet; rangeStart > rangeEnd.
// Defaults: gateway and rangeStart network+1, rangeEnd the broadcast-1 (v4) or the last address (v6).
Range ParseRange(const nlohmann::json& j, const std::string& where);

// A list of ranges of one family that together yield one address, tried in order.
class RangeSet {
 public:
  RangeSet() = default;
  explicit RangeSet(std::vector<Range> ranges) : ranges_(std::move(ranges)) {}

  const std::vector<Range>& ranges() const { return ranges_; }
  int family() const { return ranges_.empty() ? 0 : ranges_.front().subnet.family(); }
  bool Contains(const cni::IpAddr& a) const { return RangeFor(a) != nullptr; }
  // The range holding `a`, or nullptr.
  const Range* RangeFor(const cni::IpAddr& a) const;
  bool Overlaps(const RangeSet& o) const;
  // Total addresses minus the gateways inside the ranges, saturating.
  uint64_t Capacity() const;
  std::string ToString() const;  // "start-end,start-end"
  // What the user wrote, for errors: "subnet 10.0.0.0/24 (10.0.0.1-10.0.0.254), subnet ...".
  std::string Describe() const;
  bool operator==(const RangeSet&) const = default;

 private:
  std::vector<Range> ranges_;
};

// Parses a JSON array of range objects. Throws Error(kInvalidConfig) when it is not a non-empty array,
// a range is invalid, families are mixed or two ranges overlap.
RangeSet ParseRangeSet(const nlohmann::json& j, const std::string& where);

// One allocation candidate: an address of the set and the range that holds it.
struct Candidate {
  cni::IpAddr ip;
  const Range* range = nullptr;
};

// The reference's RangeIter: starts after `last_reserved` when the set holds it (else at the first
// range's start), walks each range to its end, wraps across the set's ranges and stops when it is back
// where it started; gateways are skipped. Every address of the set is returned at most once, and
// last_reserved itself last. REQUIRES: `set` non-empty and outliving the iterator.
class CandidateIter {
 public:
  CandidateIter(const RangeSet& set, const std::optional<cni::IpAddr>& last_reserved);
  // The next candidate, or nullopt when the set has been walked completely.
  std::optional<Candidate> Next();

 private:
  const RangeSet& set_;
  size_t range_idx_ = 0;
  std::optional<cni::IpAddr> cur_;
  std::optional<cni::IpAddr> start_;
  bool done_ = false;
};

}  // namespace netiface::ipam
