#include "netiface/ipam/range.h"

#include <netinet/in.h>
#include <sys/socket.h>

#include <cstring>

#include "netiface/cni/error.h"

namespace netiface::ipam {
namespace {

using cni::IpAddr;
using cni::IpNet;
using nlohmann::json;

[[noreturn]] void Invalid(const std::string& msg) { throw cni::Error(cni::kInvalidConfig, msg); }

// The address at `where`.`key`, nullopt when absent or empty.
std::optional<IpAddr> AddrKey(const json& j, const std::string& where, const char* key, int family) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return std::nullopt;
  std::string at = where + "." + key;
  if (!it->is_string()) Invalid(at + " must be a string, got " + it->dump());
  std::string text = it->get<std::string>();
  if (text.empty()) return std::nullopt;
  auto a = ParseCanonical(text);
  if (!a) Invalid(at + ": \"" + text + "\" is not an IP address");
  if (a->family() != family) Invalid(at + ": \"" + text + "\" is not of the subnet's address family");
  return a;
}

unsigned __int128 ToInt(const IpAddr& a) {
  unsigned __int128 v = 0;
  for (int i = 0; i < a.bits() / 8; ++i) v = (v << 8) | a.bytes()[i];
  return v;
}

}  // namespace

IpAddr Canonical(const IpAddr& a) {
  static constexpr uint8_t kMapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
  if (a.family() == AF_INET6 && std::memcmp(a.bytes(), kMapped, sizeof(kMapped)) == 0) {
    return IpAddr::FromBytes(AF_INET, a.bytes() + 12);
  }
  return a;
}

std::optional<IpAddr> ParseCanonical(std::string_view s) {
  auto a = IpAddr::Parse(s);
  if (!a) return std::nullopt;
  return Canonical(*a);
}

bool Range::Contains(const IpAddr& a) const {
  IpAddr c = Canonical(a);
  return subnet.Contains(c) && range_start <= c && c <= range_end;
}

bool Range::Overlaps(const Range& o) const {
  if (subnet.family() != o.subnet.family()) return false;
  return Contains(o.range_start) || Contains(o.range_end) || o.Contains(range_start) || o.Contains(range_end);
}

uint64_t Range::Size() const {
  unsigned __int128 n = ToInt(range_end) - ToInt(range_start) + 1;
  return n > UINT64_MAX ? UINT64_MAX : static_cast<uint64_t>(n);
}

std::string Range::ToString() const { return range_start.ToString() + "-" + range_end.ToString(); }

Range ParseRange(const json& j, const std::string& where) {
  if (!j.is_object()) Invalid(where + " must be an object, got " + j.dump());
  auto sit = j.find("subnet");
  if (sit == j.end() || sit->is_null()) Invalid(where + ".subnet is missing");
  if (!sit->is_string()) Invalid(where + ".subnet must be a string, got " + sit->dump());
  const std::string text = sit->get<std::string>();
  auto parsed = IpNet::Parse(text);
  if (!parsed) Invalid(where + ".subnet: \"" + text + "\" is not a CIDR");
  IpNet subnet = *parsed;
  if (IpAddr c = Canonical(subnet.addr()); c.family() != subnet.family()) {
    if (subnet.prefix_len() < 96) Invalid(where + ".subnet: \"" + text + "\" mixes IPv4 and IPv6");
    subnet = IpNet(c, subnet.prefix_len() - 96);
  }
  Range r;
  if (subnet.prefix_len() > subnet.addr().bits() - 2) {
    Invalid(where + ".subnet: network " + text + " is too small to allocate from");
  }
  if (subnet.HasHostBits()) {
    Invalid(where + ".subnet: \"" + text + "\" has host bits set; the network address is " +
            subnet.Network().addr().ToString());
  }
  r.subnet = subnet;
  const int family = subnet.family();
  IpAddr first = subnet.addr().Next();
  r.gateway = AddrKey(j, where, "gateway", family).value_or(first);
  if (auto s = AddrKey(j, where, "rangeStart", family)) {
    if (!subnet.Contains(*s)) Invalid(where + ".rangeStart: " + s->ToString() + " is not in network " + text);
    r.range_start = *s;
  } else {
    r.range_start = first;
  }
  if (auto e = AddrKey(j, where, "rangeEnd", family)) {
    if (!subnet.Contains(*e)) Invalid(where + ".rangeEnd: " + e->ToString() + " is not in network " + text);
    r.range_end = *e;
  } else {
    IpAddr last = subnet.LastAddr();
    r.range_end = family == AF_INET ? last.Prev() : last;
  }
  if (r.range_end < r.range_start) {
    Invalid(where + ".rangeEnd: " + r.range_end.ToString() + " is before rangeStart " + r.range_start.ToString());
  }
  return r;
}

const Range* RangeSet::RangeFor(const IpAddr& a) const {
  for (const Range& r : ranges_) {
    if (r.Contains(a)) return &r;
  }
  return nullptr;
}

bool RangeSet::Overlaps(const RangeSet& o) const {
  for (const Range& a : ranges_) {
    for (const Range& b : o.ranges_) {
      if (a.Overlaps(b)) return true;
    }
  }
  return false;
}

uint64_t RangeSet::Capacity() const {
  uint64_t total = 0;
  for (const Range& r : ranges_) {
    uint64_t n = r.Size() - (r.Contains(r.gateway) ? 1 : 0);
    total = total > UINT64_MAX - n ? UINT64_MAX : total + n;
  }
  return total;
}

std::string RangeSet::Describe() const {
  std::string out;
  for (const Range& r : ranges_) {
    if (!out.empty()) out += ", ";
    out += "subnet " + r.subnet.ToString() + " (" + r.ToString() + ")";
  }
  return out;
}

std::string RangeSet::ToString() const {
  std::string out;
  for (const Range& r : ranges_) out += (out.empty() ? "" : ",") + r.ToString();
  return out;
}

RangeSet ParseRangeSet(const json& j, const std::string& where) {
  if (!j.is_array()) Invalid(where + " must be an array of ranges, got " + j.dump());
  if (j.empty()) Invalid(where + ": empty range set");
  std::vector<Range> ranges;
  for (size_t i = 0; i < j.size(); ++i) {
    std::string at = where + "[" + std::to_string(i) + "]";
    ranges.push_back(ParseRange(j[i], at));
    if (ranges.back().subnet.family() != ranges.front().subnet.family()) {
      Invalid(at + ".subnet: \"" + ranges.back().subnet.ToString() + "\" mixes address families in one range set");
    }
  }
  for (size_t a = 0; a < ranges.size(); ++a) {
    for (size_t b = a + 1; b < ranges.size(); ++b) {
      if (ranges[a].Overlaps(ranges[b])) {
        Invalid(where + ": ranges " + ranges[a].ToString() + " (subnet " + ranges[a].subnet.ToString() + ") and " +
                ranges[b].ToString() + " (subnet " + ranges[b].subnet.ToString() + ") overlap");
      }
    }
  }
  return RangeSet(std::move(ranges));
}

CandidateIter::CandidateIter(const RangeSet& set, const std::optional<IpAddr>& last_reserved) : set_(set) {
  if (last_reserved) {
    const auto& rs = set_.ranges();
    for (size_t i = 0; i < rs.size(); ++i) {
      if (rs[i].Contains(*last_reserved)) {
        range_idx_ = i;
        cur_ = Canonical(*last_reserved);
        return;
      }
    }
  }
  range_idx_ = 0;
}

std::optional<Candidate> CandidateIter::Next() {
  const auto& rs = set_.ranges();
  while (!done_ && !rs.empty()) {
    const Range* r = &rs[range_idx_];
    if (!cur_) {
      cur_ = r->range_start;
      start_ = cur_;
    } else {
      if (*cur_ == r->range_end) {
        range_idx_ = (range_idx_ + 1) % rs.size();
        r = &rs[range_idx_];
        cur_ = r->range_start;
      } else {
        cur_ = cur_->Next();
      }
      if (!start_) {
        start_ = cur_;
      } else if (*cur_ == *start_) {
        done_ = true;
        break;
      }
    }
    if (*cur_ == r->gateway) continue;
    return Candidate{*cur_, r};
  }
  return std::nullopt;
}

}  // namespace netiface::ipam
