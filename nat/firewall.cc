// ApplyFirewall/RemoveFirewall/MissingFirewallRules/GcFirewall: the group calls of table.h over the
// firewall plan (firewall_plan.h).
#include "netiface/nat/firewall.h"

#include "firewall_plan.h"
#include "table.h"

namespace netiface::nat {

void ApplyFirewall(const FirewallSpec& spec) {
  std::vector<Rule> desired = PlanFirewallRules(spec);  // validates everything before the first change
  ApplyGroup(FirewallComment(spec.tag), desired, "cannot install firewall rules for " + DescribeTag(spec.tag));
}

bool RemoveFirewall(const Tag& tag) {
  return RemoveGroup(FirewallComment(tag), "cannot remove firewall rules of " + DescribeTag(tag));
}

std::vector<std::string> MissingFirewallRules(const FirewallSpec& spec) {
  return MissingGroupRules(FirewallComment(spec.tag), PlanFirewallRules(spec));
}

void GcFirewall(const std::string& network, const std::vector<cni::Attachment>& valid) {
  GcGroups([&](const Listing& l) { return StaleFirewallComments(l, network, valid); },
           "firewall rules of network " + network);
}

}  // namespace netiface::nat
