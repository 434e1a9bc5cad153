#include "netiface/portmap/kernel_ops.h"

#include <sys/socket.h>

#include "netiface/cni/log.h"
#include "netiface/netlink/link.h"
#include "netiface/netlink/route.h"
#include "netiface/netlink/socket.h"
#include "netiface/netlink/sysctl.h"
#include "netiface/portmap/config.h"
#include "netiface/portmap/conntrack.h"

namespace netiface::portmap {

void KernelOps::EnableRouteLocalnet(const cni::IpAddr& container) {
  nl::Socket s = nl::Socket::Open();
  auto index = RoutedIfindex(nl::ListRoutes(s, AF_INET), container);
  if (!index) {
    log::Debug("no route to {}: route_localnet left as it is", container.ToString());
    return;
  }
  auto link = nl::FindLinkByIndex(s, *index);
  if (!link) return;
  nl::WriteSysctl(nullptr, "net/ipv4/conf/" + link->name + "/route_localnet", "1");
}

void KernelOps::Apply(const nat::PortMapSpec& spec) { nat::ApplyPortMap(spec); }

bool KernelOps::Remove(const nat::Tag& tag) { return nat::RemovePortMap(tag); }

Observed KernelOps::Observe(const nat::PortMapSpec& spec) { return {nat::MissingPortMapRules(spec)}; }

void KernelOps::Gc(const std::string& network, const std::vector<cni::Attachment>& valid) {
  nat::GcPortMap(network, valid);
}

void KernelOps::FlushUdpConntrack(const std::set<uint16_t>& host_ports) { portmap::FlushUdpConntrack(host_ports); }

}  // namespace netiface::portmap
