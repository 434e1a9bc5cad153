// Spec 1.1 GC for host-local: which reservations no valid attachment owns. Pure.
#pragma once

#include <vector>

#include "netiface/cni/config.h"
#include "netiface/ipam/index.h"

namespace netiface::ipam {

// The reservations to release: those whose (containerID, ifname) is not among `valid`. A legacy file
// (container ID only, or any content without the "\r\n" separator: its first line is taken as the
// container ID) stays when that container ID appears in any valid attachment. Empty files (a reservation
// the reference was killed while writing) belong to nobody and are released. An empty `valid` list means
// that nothing is valid.
std::vector<IndexEntry> PlanGc(const std::vector<IndexEntry>& reservations, const std::vector<cni::Attachment>& valid);

}  // namespace netiface::ipam
