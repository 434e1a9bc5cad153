#include "netiface/cni/ip.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <charconv>
#include <cstring>

namespace netiface::cni {
namespace {

// Adds `delta` (+1 or -1) to the big-endian integer bytes[0..n), wrapping.
void AddOne(uint8_t* bytes, int n, int delta) {
  for (int i = n - 1; i >= 0; --i) {
    if (delta > 0) {
      if (++bytes[i] != 0) return;
    } else {
      if (bytes[i]-- != 0) return;
    }
  }
}

// Keeps the first `prefix_len` bits of bytes[0..n); `set` chooses whether the rest become 1 or 0.
void FillHostBits(uint8_t* bytes, int n, int prefix_len, bool set) {
  for (int i = 0; i < n; ++i) {
    int bit_start = i * 8;
    uint8_t host_mask;
    if (prefix_len >= bit_start + 8) {
      host_mask = 0;
    } else if (prefix_len <= bit_start) {
      host_mask = 0xff;
    } else {
      host_mask = static_cast<uint8_t>(0xff >> (prefix_len - bit_start));
    }
    bytes[i] = set ? (bytes[i] | host_mask) : (bytes[i] & static_cast<uint8_t>(~host_mask));
  }
}

}  // namespace

IpAddr IpAddr::V4(uint32_t host_order) {
  IpAddr a;
  a.family_ = AF_INET;
  a.bytes_[0] = static_cast<uint8_t>(host_order >> 24);
  a.bytes_[1] = static_cast<uint8_t>(host_order >> 16);
  a.bytes_[2] = static_cast<uint8_t>(host_order >> 8);
  a.bytes_[3] = static_cast<uint8_t>(host_order);
  return a;
}

IpAddr IpAddr::FromBytes(int family, const void* bytes) {
  IpAddr a;
  a.family_ = family == AF_INET6 ? AF_INET6 : AF_INET;
  std::memcpy(a.bytes_.data(), bytes, a.family_ == AF_INET ? 4 : 16);
  return a;
}

std::optional<IpAddr> IpAddr::Parse(std::string_view s) {
  if (s.empty() || s.size() > INET6_ADDRSTRLEN) return std::nullopt;
  std::string text(s);
  if (text.find('\0') != std::string::npos) return std::nullopt;
  IpAddr a;
  if (text.find(':') == std::string::npos) {
    if (inet_pton(AF_INET, text.c_str(), a.bytes_.data()) != 1) return std::nullopt;
    a.family_ = AF_INET;
  } else {
    if (inet_pton(AF_INET6, text.c_str(), a.bytes_.data()) != 1) return std::nullopt;
    a.family_ = AF_INET6;
  }
  return a;
}

bool IpAddr::is_v4() const noexcept { return family_ == AF_INET; }

std::string IpAddr::ToString() const {
  char buf[INET6_ADDRSTRLEN] = {};
  inet_ntop(family_, bytes_.data(), buf, sizeof(buf));
  return buf;
}

IpAddr IpAddr::Next() const {
  IpAddr a = *this;
  AddOne(a.bytes_.data(), bits() / 8, +1);
  return a;
}

IpAddr IpAddr::Prev() const {
  IpAddr a = *this;
  AddOne(a.bytes_.data(), bits() / 8, -1);
  return a;
}

bool IpAddr::IsLinkLocal() const {
  if (is_v4()) return bytes_[0] == 169 && bytes_[1] == 254;
  return bytes_[0] == 0xfe && (bytes_[1] & 0xc0) == 0x80;
}

std::optional<IpNet> IpNet::Parse(std::string_view s) {
  size_t slash = s.find('/');
  if (slash == std::string_view::npos) return std::nullopt;
  auto addr = IpAddr::Parse(s.substr(0, slash));
  if (!addr) return std::nullopt;
  std::string_view len_text = s.substr(slash + 1);
  if (len_text.empty() || len_text.size() > 3) return std::nullopt;
  int len = 0;
  auto [ptr, ec] = std::from_chars(len_text.data(), len_text.data() + len_text.size(), len);
  if (ec != std::errc() || ptr != len_text.data() + len_text.size()) return std::nullopt;
  if (len < 0 || len > addr->bits()) return std::nullopt;
  return IpNet(*addr, len);
}

IpNet IpNet::Network() const {
  uint8_t b[16];
  std::memcpy(b, addr_.bytes(), addr_.bits() / 8);
  FillHostBits(b, addr_.bits() / 8, len_, false);
  return IpNet(IpAddr::FromBytes(addr_.family(), b), len_);
}

IpAddr IpNet::LastAddr() const {
  uint8_t b[16];
  std::memcpy(b, addr_.bytes(), addr_.bits() / 8);
  FillHostBits(b, addr_.bits() / 8, len_, true);
  return IpAddr::FromBytes(addr_.family(), b);
}

bool IpNet::Contains(const IpAddr& a) const {
  if (a.family() != family()) return false;
  return IpNet(a, len_).Network() == Network();
}

bool IpNet::Overlaps(const IpNet& o) const {
  if (o.family() != family()) return false;
  return Contains(o.addr()) || o.Contains(addr_);
}

std::string IpNet::ToString() const { return addr_.ToString() + "/" + std::to_string(len_); }

}  // namespace netiface::cni
