// IPv4/IPv6 addresses and prefixes as values: parsing, formatting, arithmetic. Shared by the
// result types, IPAM and the netlink layer.
#pragma once

#include <array>
#include <compare>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace netiface::cni {

class IpAddr {
 public:
  IpAddr() = default;  // 0.0.0.0
  static IpAddr V4(uint32_t host_order);
  static IpAddr FromBytes(int family, const void* bytes);  // family AF_INET or AF_INET6
  // Accepts dotted IPv4 and any IPv6 text form (also v4-mapped). nullopt on anything else.
  static std::optional<IpAddr> Parse(std::string_view s);

  int family() const noexcept { return family_; }  // AF_INET or AF_INET6
  bool is_v4() const noexcept;
  int bits() const noexcept { return is_v4() ? 32 : 128; }
  const uint8_t* bytes() const noexcept { return bytes_.data(); }  // 4 or 16 bytes, network order
  std::string ToString() const;                                    // canonical (inet_ntop), as Go's net.IP.String()

  IpAddr Next() const;       // +1, wrapping within the family
  IpAddr Prev() const;       // -1, wrapping within the family
  bool IsLinkLocal() const;  // 169.254/16, fe80::/10

  auto operator<=>(const IpAddr&) const = default;

 private:
  int family_ = 2;  // AF_INET
  std::array<uint8_t, 16> bytes_{};
};

class IpNet {
 public:
  IpNet() = default;
  IpNet(IpAddr addr, int prefix_len) : addr_(addr), len_(prefix_len) {}
  // "10.0.0.2/24" or "fd00::1/64"; the address keeps its host bits. nullopt on anything else.
  static std::optional<IpNet> Parse(std::string_view s);
  // A bare address as a host prefix (/32 or /128).
  static IpNet Host(const IpAddr& a) { return IpNet(a, a.bits()); }

  const IpAddr& addr() const noexcept { return addr_; }
  int prefix_len() const noexcept { return len_; }
  int family() const noexcept { return addr_.family(); }
  IpNet Network() const;    // host bits cleared
  IpAddr LastAddr() const;  // all host bits set (broadcast for v4)
  bool Contains(const IpAddr& a) const;
  bool Overlaps(const IpNet& o) const;
  bool HasHostBits() const { return Network().addr() != addr_; }
  std::string ToString() const;  // "addr/len"

  auto operator<=>(const IpNet&) const = default;

 private:
  IpAddr addr_;
  int len_ = 0;
};

}  // namespace netiface::cni
