// The real Ops: nat/portmap.h and libnetlink in the calling thread's namespace (the host's).
#pragma once

#include "netiface/portmap/ops.h"

namespace netiface::portmap {

class KernelOps : public Ops {
 public:
  void EnableRouteLocalnet(const cni::IpAddr& container) override;
  void Apply(const nat::PortMapSpec& spec) override;
  bool Remove(const nat::Tag& tag) override;
  Observed Observe(const nat::PortMapSpec& spec) override;
  void Gc(const std::string& network, const std::vector<cni::Attachment>& valid) override;
  void FlushUdpConntrack(const std::set<uint16_t>& host_ports) override;
};

}  // namespace netiface::portmap
