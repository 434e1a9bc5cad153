// The pure half of the plugin: the result ADD reports and the comparison CHECK makes.
#include <sys/socket.h>

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "netiface/cni/error.h"
#include "netiface/loopback/loopback.h"

namespace netiface::loopback {
namespace {

void RequireLoopback(const std::vector<cni::IpNet>& addrs) {
  for (const auto& a : addrs) {
    if (!IsLoopback(a.addr())) {
      throw cni::Error(cni::kInternal,
                       "loopback interface found with non-loopback address \"" + a.addr().ToString() + "\"");
    }
  }
}

}  // namespace

bool IsLoopback(const cni::IpAddr& a) {
  const uint8_t* b = a.bytes();
  if (a.is_v4()) return b[0] == 127;
  static const uint8_t kMapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
  bool mapped = std::equal(b, b + 12, kMapped);
  if (mapped) return b[12] == 127;
  return std::all_of(b, b + 15, [](uint8_t x) { return x == 0; }) && b[15] == 1;
}

cni::Result MakeResult(const Observed& o, const std::string& netns) {
  RequireLoopback(o.v4);
  RequireLoopback(o.v6);
  cni::Result r;
  r.interfaces = {cni::Interface{.name = kLoopbackName, .mac = kLoopbackMac, .sandbox = netns}};
  for (const auto* family : {&o.v4, &o.v6}) {
    if (!family->empty()) r.ips.push_back(cni::IpConfig{.interface = 0, .address = family->front()});
  }
  return r;
}

std::vector<std::string> CompareLoopback(const Observed& o, const std::optional<cni::Result>& prev,
                                         const std::string& netns) {
  std::vector<std::string> problems;
  if (!o.up) problems.push_back("loopback interface is down");
  for (const auto* family : {&o.v4, &o.v6}) {
    for (const auto& a : *family) {
      if (!IsLoopback(a.addr())) problems.push_back("lo carries non-loopback address " + a.ToString());
    }
  }
  if (!prev) return problems;
  for (const auto& ip : prev->ips) {
    if (!ip.interface || *ip.interface < 0 || *ip.interface >= static_cast<int>(prev->interfaces.size())) continue;
    const cni::Interface& itf = prev->interfaces[*ip.interface];
    if (itf.name != kLoopbackName || itf.sandbox != netns) continue;
    const auto& have = ip.address.family() == AF_INET ? o.v4 : o.v6;
    if (std::find(have.begin(), have.end(), ip.address) == have.end()) {
      problems.push_back("lo lacks " + ip.address.ToString() + " of prevResult");
    }
  }
  return problems;
}

}  // namespace netiface::loopback
