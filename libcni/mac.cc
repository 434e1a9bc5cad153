#include "netiface/cni/mac.h"

#include <cctype>

namespace netiface::cni {

std::optional<std::string> NormalizeMac(std::string_view s) {
  // xx:xx:xx:xx:xx:xx, xx-xx-..., or xxxx.xxxx.xxxx (Go's net.ParseMAC, 6-byte forms).
  std::string hex;
  if (s.size() == 17) {
    char sep = s[2];
    if (sep != ':' && sep != '-') return std::nullopt;
    for (size_t i = 0; i < s.size(); ++i) {
      if (i % 3 == 2) {
        if (s[i] != sep) return std::nullopt;
      } else {
        hex += s[i];
      }
    }
  } else if (s.size() == 14) {
    for (size_t i = 0; i < s.size(); ++i) {
      if (i % 5 == 4) {
        if (s[i] != '.') return std::nullopt;
      } else {
        hex += s[i];
      }
    }
  } else {
    return std::nullopt;
  }
  std::string out;
  for (size_t i = 0; i < hex.size(); ++i) {
    unsigned char ch = static_cast<unsigned char>(hex[i]);
    if (!std::isxdigit(ch)) return std::nullopt;
    if (i > 0 && i % 2 == 0) out += ':';
    out += static_cast<char>(std::tolower(ch));
  }
  return out;
}

}  // namespace netiface::cni
