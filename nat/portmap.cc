// ApplyPortMap/RemovePortMap/VerifyPortMap/GcPortMap: the group calls of table.h over the port-mapping
// plan (portmap_plan.h).
#include "netiface/nat/portmap.h"

#include "netiface/cni/error.h"
#include "portmap_plan.h"
#include "table.h"

namespace netiface::nat {

void ApplyPortMap(const PortMapSpec& spec) {
  std::vector<Rule> desired = PlanPortMapRules(spec);  // validates everything before the first change
  ApplyGroup(PortMapComment(spec.tag), desired, "cannot install port mappings for " + DescribeTag(spec.tag));
}

bool RemovePortMap(const Tag& tag) {
  return RemoveGroup(PortMapComment(tag), "cannot remove port mappings of " + DescribeTag(tag));
}

std::vector<std::string> MissingPortMapRules(const PortMapSpec& spec) {
  return MissingGroupRules(PortMapComment(spec.tag), PlanPortMapRules(spec));
}

void VerifyPortMap(const PortMapSpec& spec) {
  VerifyGroup(PortMapComment(spec.tag), PlanPortMapRules(spec), "port mappings of " + DescribeTag(spec.tag));
}

void GcPortMap(const std::string& network, const std::vector<cni::Attachment>& valid) {
  GcGroups([&](const Listing& l) { return StalePortMapComments(l, network, valid); },
           "port mappings of network " + network);
}

}  // namespace netiface::nat
