#include "netiface/agent/lease.h"

#include <sys/socket.h>

#include <charconv>
#include <stdexcept>

#include "json_fold.h"
#include "netiface/cni/go_json.h"

namespace netiface::agent {
namespace {

// A decimal prefix length of at most `max` (flanneld parses it with ParseUint(s, 10, 5) for IPv4 and
// (s, 10, 7) for IPv6: /32 and /128 are not lease keys).
std::optional<int> ParseLen(std::string_view s, int max) {
  if (s.empty() || s.size() > 3) return std::nullopt;
  for (char c : s) {
    if (c < '0' || c > '9') return std::nullopt;
  }
  int v = 0;
  std::from_chars(s.data(), s.data() + s.size(), v);
  if (v > max) return std::nullopt;
  return v;
}

// "<addr>-<len>" of `family` without host bits.
std::optional<cni::IpNet> ParsePart(std::string_view part, int family) {
  const size_t dash = part.rfind('-');
  if (dash == std::string_view::npos) return std::nullopt;
  std::string_view addr_text = part.substr(0, dash);
  for (char c : addr_text) {
    const bool ok = family == AF_INET ? (c >= '0' && c <= '9') || c == '.'
                                      : (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || c == ':';
    if (!ok) return std::nullopt;
  }
  auto addr = cni::IpAddr::Parse(addr_text);
  auto len = ParseLen(part.substr(dash + 1), family == AF_INET ? 31 : 127);
  if (!addr || addr->family() != family || !len) return std::nullopt;
  cni::IpNet net(*addr, *len);
  if (net.HasHostBits()) return std::nullopt;
  return net;
}

std::optional<cni::IpAddr> DecodeAddr(const nlohmann::ordered_json& obj, const char* key, int family) {
  const nlohmann::ordered_json* v = internal::FindFold(obj, key);
  if (!v) return std::nullopt;
  std::optional<cni::IpAddr> a;
  if (v->is_string()) a = cni::IpAddr::Parse(v->get<std::string>());
  if (!a || a->family() != family) {
    throw std::invalid_argument(std::string(key) + " " + v->dump() + " is not an " +
                                (family == AF_INET ? "IPv4" : "IPv6") + " address");
  }
  if (family == AF_INET && *a == cni::IpAddr()) return std::nullopt;  // Go's zero ip.IP4: not set
  return a;
}

nlohmann::json DecodeRaw(const nlohmann::ordered_json& obj, const char* key) {
  const nlohmann::ordered_json* v = internal::FindFold(obj, key);
  return v ? nlohmann::json::parse(v->dump()) : nlohmann::json();
}

}  // namespace

std::string FormatSubnetKey(const SubnetKey& k) {
  std::string s = k.v4.addr().ToString() + "-" + std::to_string(k.v4.prefix_len());
  if (k.v6) s += "&" + k.v6->addr().ToString() + "-" + std::to_string(k.v6->prefix_len());
  return s;
}

std::optional<SubnetKey> ParseSubnetKey(std::string_view name) {
  const size_t amp = name.find('&');
  SubnetKey k;
  auto v4 = ParsePart(name.substr(0, amp), AF_INET);
  if (!v4) return std::nullopt;
  k.v4 = *v4;
  if (amp != std::string_view::npos) {
    auto v6 = ParsePart(name.substr(amp + 1), AF_INET6);
    if (!v6) return std::nullopt;
    k.v6 = *v6;
  }
  if (FormatSubnetKey(k) != name) return std::nullopt;
  return k;
}

std::string ConfigKey(std::string_view prefix) { return std::string(prefix) + "/config"; }
std::string SubnetsPrefix(std::string_view prefix) { return std::string(prefix) + "/subnets/"; }
std::string LeaseKey(std::string_view prefix, const SubnetKey& k) { return SubnetsPrefix(prefix) + FormatSubnetKey(k); }

std::optional<SubnetKey> SubnetKeyFromEtcdKey(std::string_view prefix, std::string_view etcd_key) {
  const std::string subnets = SubnetsPrefix(prefix);
  if (etcd_key.substr(0, subnets.size()) != subnets) return std::nullopt;
  std::string_view name = etcd_key.substr(subnets.size());
  if (name.find('/') != std::string_view::npos) return std::nullopt;
  return ParseSubnetKey(name);
}

std::string EncodeLeaseAttrs(const LeaseAttrs& a) {
  std::string out = "{\"PublicIP\":\"" + (a.public_ip ? a.public_ip->ToString() : std::string("0.0.0.0")) + "\"";
  out += ",\"PublicIPv6\":" + (a.public_ipv6 ? "\"" + a.public_ipv6->ToString() + "\"" : std::string("null"));
  if (!a.backend_type.empty()) out += ",\"BackendType\":" + cni::GoMarshal(a.backend_type);
  if (!a.backend_data.is_null()) out += ",\"BackendData\":" + cni::GoMarshal(a.backend_data);
  if (!a.backend_v6_data.is_null()) out += ",\"BackendV6Data\":" + cni::GoMarshal(a.backend_v6_data);
  return out + "}";
}

LeaseAttrs DecodeLeaseAttrs(std::string_view json_text) {
  nlohmann::ordered_json root;
  try {
    root = nlohmann::ordered_json::parse(json_text);
  } catch (const nlohmann::ordered_json::exception& e) {
    throw std::invalid_argument(std::string("a lease value is not JSON: ") + e.what());
  }
  if (!root.is_object())
    throw std::invalid_argument("a lease value is not a JSON object: " + root.dump().substr(0, 80));
  LeaseAttrs a;
  a.public_ip = DecodeAddr(root, "PublicIP", AF_INET);
  a.public_ipv6 = DecodeAddr(root, "PublicIPv6", AF_INET6);
  if (const nlohmann::ordered_json* t = internal::FindFold(root, "BackendType")) {
    if (!t->is_string()) throw std::invalid_argument("BackendType " + t->dump() + " is not a string");
    a.backend_type = t->get<std::string>();
  }
  a.backend_data = DecodeRaw(root, "BackendData");
  a.backend_v6_data = DecodeRaw(root, "BackendV6Data");
  return a;
}

}  // namespace netiface::agent
