#include "nl_util.h"

#include <sys/socket.h>

#include <cstdio>
#include <cstring>

#include "netiface/cni/error.h"

namespace netiface::nl::detail {

void ThrowOutOfMemory(const char* what) { throw cni::Error(cni::kNetlink, std::string("out of memory: ") + what); }

LinkPtr NewLink() { return LinkPtr(NotNull(rtnl_link_alloc(), "link")); }

NlAddrPtr ToNlAddr(const cni::IpAddr& a, int prefix_len) {
  NlAddrPtr n(NotNull(nl_addr_build(a.family(), a.bytes(), a.bits() / 8), "address"));
  nl_addr_set_prefixlen(n.get(), prefix_len);
  return n;
}

cni::IpAddr FromNlAddr(const nl_addr* a, int family) {
  uint8_t bytes[16] = {};
  if (a != nullptr) {
    family = nl_addr_get_family(a);
    unsigned int want = family == AF_INET6 ? 16 : 4;
    unsigned int len = nl_addr_get_len(a);
    if (len > 0) std::memcpy(bytes, nl_addr_get_binary_addr(a), len < want ? len : want);
  }
  return cni::IpAddr::FromBytes(family == AF_INET6 ? AF_INET6 : AF_INET, bytes);
}

std::string FormatMac(const nl_addr* a) {
  if (a == nullptr || nl_addr_get_len(a) == 0) return {};
  const auto* b = static_cast<const uint8_t*>(nl_addr_get_binary_addr(a));
  std::string out;
  char buf[4];
  for (unsigned int i = 0; i < nl_addr_get_len(a); ++i) {
    std::snprintf(buf, sizeof buf, i == 0 ? "%02x" : ":%02x", b[i]);
    out += buf;
  }
  return out;
}

NlAddrPtr ParseMac(const std::string& mac) {
  nl_addr* a = nullptr;
  if (mac.size() != 17 || nl_addr_parse(mac.c_str(), AF_LLC, &a) < 0 || nl_addr_get_len(a) != 6) {
    if (a != nullptr) nl_addr_put(a);
    throw cni::Error(cni::kInvalidConfig, "invalid MAC address \"" + mac + "\"");
  }
  return NlAddrPtr(a);
}

}  // namespace netiface::nl::detail
