// The host-gw backend: one route per remote host-gw lease and family through the uplink, tagged with the
// agent's route protocol. Its socket acts in the namespace current when MakeHostGwBackend was called.
#include "netiface/agent/hostgw.h"

#include <sys/socket.h>

#include "netiface/agent/peer_backend.h"
#include "netiface/cni/log.h"
#include "netiface/netlink/socket.h"

namespace netiface::agent {
namespace {

class HostGwBackend : public PeerBackend {
 public:
  HostGwBackend(const Uplink& uplink, bool ipv6, int protocol)
      : PeerBackend("host-gw", protocol), uplink_(uplink), ipv6_(ipv6), protocol_(protocol) {}

  std::string Type() const override { return "host-gw"; }
  nlohmann::json BackendData() const override { return nullptr; }
  nlohmann::json BackendV6Data() const override { return nullptr; }
  int Mtu() const override { return uplink_.mtu; }

  void Setup(const Lease& own) override {
    PeerBackend::Setup(own);
    log::Info("host-gw: own subnet {} on {} ({})", FormatSubnetKey(own.subnet), uplink_.name,
              uplink_.public_ip.ToString());
  }

 private:
  std::optional<PeerEntries> Plan(const Lease& peer, std::string* why) override {
    return HostGwEntries(peer, uplink_.ifindex, protocol_, ipv6_, why);
  }

  Uplink uplink_;
  bool ipv6_;
  int protocol_;
};

}  // namespace

std::unique_ptr<Backend> MakeHostGwBackend(const Uplink& uplink, bool ipv6, int protocol) {
  return std::make_unique<HostGwBackend>(uplink, ipv6, protocol);
}

int RemoveAgentRoutes(int protocol) {
  nl::Socket s = nl::Socket::Open();
  int removed = 0;
  for (const auto& r : nl::ListRoutes(s, AF_UNSPEC)) {
    if (r.protocol != protocol) continue;
    nl::RouteSpec spec{
        .dst = r.dst.Network(), .gw = r.gw, .ifindex = r.ifindex, .priority = r.priority, .protocol = protocol};
    if (nl::DeleteRoute(s, spec)) ++removed;
  }
  return removed;
}

}  // namespace netiface::agent
