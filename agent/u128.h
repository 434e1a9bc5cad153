// Addresses as 128-bit integers, for subnet arithmetic over both families. Private to agent_lib.
#pragma once

#include <sys/socket.h>

#include <cstdint>

#include "netiface/cni/ip.h"

namespace netiface::agent::internal {

using U128 = unsigned __int128;

inline U128 ToU128(const cni::IpAddr& a) {
  U128 v = 0;
  for (int i = 0; i < a.bits() / 8; ++i) v = (v << 8) | a.bytes()[i];
  return v;
}

inline cni::IpAddr FromU128(int family, U128 v) {
  uint8_t b[16];
  const int n = family == AF_INET ? 4 : 16;
  for (int i = n - 1; i >= 0; --i, v >>= 8) b[i] = static_cast<uint8_t>(v);
  return cni::IpAddr::FromBytes(family, b);
}

}  // namespace netiface::agent::internal
