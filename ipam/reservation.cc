#include "netiface/ipam/reservation.h"

namespace netiface::ipam {
namespace {

bool IsSpace(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r'; }

}  // namespace

std::string_view TrimSpace(std::string_view s) {
  while (!s.empty() && IsSpace(s.front())) s.remove_prefix(1);
  while (!s.empty() && IsSpace(s.back())) s.remove_suffix(1);
  return s;
}

std::string EncodeOwner(std::string_view container_id, std::string_view ifname) {
  std::string out(TrimSpace(container_id));
  out += kLineBreak;
  out += ifname;
  return out;
}

std::string_view OwnerKey(std::string_view owner) { return owner.substr(0, owner.find(kLineBreak)); }

OwnerFields SplitOwner(std::string_view owner) {
  const size_t br = owner.find(kLineBreak);
  if (br == std::string_view::npos) return {owner, {}};
  return {owner.substr(0, br), owner.substr(br + kLineBreak.size())};
}

std::string DescribeOwner(std::string_view owner) {
  if (owner.empty()) return "an empty reservation file";
  OwnerFields f = SplitOwner(owner);
  if (f.container_id.size() == owner.size()) return "container " + std::string(owner);
  return "container " + std::string(f.container_id) + " (ifname " + std::string(f.ifname) + ")";
}

OwnerMatch MatchOwner(std::string_view owner, std::string_view container_id, std::string_view ifname) {
  std::string_view id = TrimSpace(container_id);
  if (id.empty()) return OwnerMatch::kNone;
  if (owner == id) return OwnerMatch::kLegacy;
  if (owner.size() == id.size() + kLineBreak.size() + ifname.size() && owner.substr(0, id.size()) == id &&
      owner.substr(id.size(), kLineBreak.size()) == kLineBreak &&
      owner.substr(id.size() + kLineBreak.size()) == ifname) {
    return OwnerMatch::kExact;
  }
  return OwnerMatch::kNone;
}

std::optional<cni::IpAddr> ReservationAddress(std::string_view file_name) {
  if (file_name.empty() || file_name.size() > 45) return std::nullopt;
  char c = file_name.front();
  bool hex = (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || c == ':';
  if (!hex) return std::nullopt;  // cheap reject of lock, last_reserved_ip.*, dot files
  auto ip = cni::IpAddr::Parse(file_name);
  if (!ip || ip->ToString() != file_name) return std::nullopt;
  return ip;
}

std::string LastReservedFileName(size_t range_set_index) {
  return std::string(kLastReservedPrefix) + std::to_string(range_set_index);
}

}  // namespace netiface::ipam
