// Deterministic names: the host-side veth (Calico's rule) and the endpoint record (Calico's
// WorkloadEndpoint name). Pure.
#pragma once

#include <string>
#include <string_view>

#include "netiface/veth_workload/config.h"

namespace netiface::veth_workload {

// Lower-case hex SHA-1 of `data` (40 digits).
std::string Sha1Hex(std::string_view data);

// What the host veth name hashes: "<namespace>.<pod>" for a pod's eth0 (Calico's rule),
// "<namespace>.<pod>.<ifname>" for its other interfaces, "<containerID>.<ifname>" otherwise.
std::string HostVethHashInput(const Identity& id);
// prefix + the first hex digits of Sha1Hex(HostVethHashInput(id)), 15 characters in all.
// REQUIRES: prefix has 1..11 characters (ParseConfig enforces it).
std::string HostVethName(std::string_view prefix, const Identity& id);

// One segment of an endpoint name: every '-' doubled.
std::string EscapeSegment(std::string_view s);
// "<node>-k8s-<pod>-<ifname>" or "<node>-cni-<containerID>-<ifname>", segments escaped.
std::string EndpointName(const Identity& id);
// The store folder of the endpoint record: the pod namespace, or "_cni" (EndpointRecord::Folder()).
inline std::string RecordFolder(const Identity& id) { return id.IsK8s() ? id.pod_namespace : "_cni"; }

}  // namespace netiface::veth_workload
