#include "netiface/veth_workload/naming.h"

#include "netiface/cni/hash.h"

namespace netiface::veth_workload {

std::string Sha1Hex(std::string_view data) { return cni::HexDigest(cni::Hash::kSha1, data); }

std::string HostVethHashInput(const Identity& id) {
  if (!id.IsK8s()) return id.container_id + "." + id.ifname;
  std::string base = id.pod_namespace + "." + id.pod;
  return id.ifname == "eth0" ? base : base + "." + id.ifname;
}

std::string HostVethName(std::string_view prefix, const Identity& id) {
  size_t digits = prefix.size() < kMaxLinkName ? kMaxLinkName - prefix.size() : 0;
  return std::string(prefix) + Sha1Hex(HostVethHashInput(id)).substr(0, digits);
}

std::string EscapeSegment(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    out += c;
    if (c == '-') out += '-';
  }
  return out;
}

std::string EndpointName(const Identity& id) {
  if (id.IsK8s()) {
    return EscapeSegment(id.node) + "-k8s-" + EscapeSegment(id.pod) + "-" + EscapeSegment(id.ifname);
  }
  return EscapeSegment(id.node) + "-cni-" + EscapeSegment(id.container_id) + "-" + EscapeSegment(id.ifname);
}

}  // namespace netiface::veth_workload
