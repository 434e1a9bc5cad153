#include "agent_peers.h"

#include <fmt/format.h>

namespace netiface::bench::agent {
namespace {

namespace na = netiface::agent;
using cni::IpAddr;
using cni::IpNet;

Peer Base(int second, int third, const std::string& public_ip) {
  Peer p;
  IpAddr net = *IpAddr::Parse(fmt::format("10.{}.{}.0", second, third));
  p.subnet.v4 = IpNet(net, 24);
  p.dst = net.ToString() + "/24";
  p.public_ip = public_ip;
  p.key = na::LeaseKey(na::kDefaultPrefix, p.subnet);
  return p;
}

}  // namespace

std::string Peer::Host(int n) const { return dst.substr(0, dst.rfind(".0/24")) + "." + std::to_string(n); }

Peer HostGwPeer(int second, int third, const std::string& public_ip) {
  Peer p = Base(second, third, public_ip);
  p.gw = public_ip;
  na::LeaseAttrs attrs;
  attrs.public_ip = IpAddr::Parse(public_ip);
  attrs.backend_type = "host-gw";
  p.value = na::EncodeLeaseAttrs(attrs);
  return p;
}

Peer VxlanPeer(int second, int third, const std::string& public_ip, const std::string& mac) {
  Peer p = Base(second, third, public_ip);
  p.gw = p.subnet.v4.addr().ToString();
  p.vtep_mac = mac;
  na::LeaseAttrs attrs;
  attrs.public_ip = IpAddr::Parse(public_ip);
  attrs.backend_type = "vxlan";
  attrs.backend_data = nlohmann::json::object();
  attrs.backend_data["VNI"] = 1;
  attrs.backend_data["VtepMAC"] = mac;
  p.value = na::EncodeLeaseAttrs(attrs);
  return p;
}

std::string GatewayFor(int i) { return fmt::format("192.0.2.{}", 2 + i % 249); }

std::vector<Peer> HostGwOthers(int n) {
  std::vector<Peer> out;
  for (int i = 0; i < n; ++i) out.push_back(HostGwPeer(100 + i / 256, i % 256, GatewayFor(i)));
  return out;
}

std::vector<Peer> VxlanOthers(int n) {
  std::vector<Peer> out;
  for (int i = 0; i < n; ++i) {
    out.push_back(VxlanPeer(100 + i / 256, i % 256, fmt::format("198.18.{}.{}", i / 250, 1 + i % 250),
                            fmt::format("0e:6e:62:01:{:02x}:{:02x}", (i >> 8) & 0xff, i & 0xff)));
  }
  return out;
}

}  // namespace netiface::bench::agent
