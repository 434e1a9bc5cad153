// The node agent's cluster rules: planned by PlanClusterRules, applied through the same list -> plan ->
// one transaction path and flock as the attachments' rules (table.h).
#include "netiface/nat/cluster.h"

#include "netiface/cni/error.h"
#include "table.h"

namespace netiface::nat {

void ApplyClusterRules(const ClusterRules& rules) {
  std::vector<Rule> desired = PlanClusterRules(rules);  // validates everything before the first change
  ApplyGroup(ClusterComment(rules.owner), desired, "cannot install cluster NAT rules of " + rules.owner);
}

bool RemoveClusterRules(const std::string& owner) {
  return RemoveGroup(ClusterComment(owner), "cannot remove cluster NAT rules of " + owner);
}

std::vector<std::string> MissingClusterRules(const ClusterRules& rules) {
  std::vector<Rule> desired = PlanClusterRules(rules);
  return MissingGroupRules(ClusterComment(rules.owner), desired);
}

}  // namespace netiface::nat
