// Apply/Remove/Verify/Gc: list the table, plan the transaction (plan.h), run it in one
// nft_run_cmd_from_buffer, all under the table's flock (table.h).
#include "netiface/nat/nat.h"

#include "netiface/cni/error.h"
#include "table.h"

namespace netiface::nat {

void Apply(const Spec& spec) {
  std::vector<Rule> desired = PlanRules(spec);  // validates everything before the first change
  ApplyGroup(TagComment(spec.tag), desired, "cannot install NAT rules for " + DescribeTag(spec.tag));
}

bool Remove(const Tag& tag) { return RemoveGroup(TagComment(tag), "cannot remove NAT rules of " + DescribeTag(tag)); }

void Verify(const Spec& spec) {
  VerifyGroup(TagComment(spec.tag), PlanRules(spec), "NAT rules of " + DescribeTag(spec.tag));
}

void Gc(const std::string& network, const std::vector<cni::Attachment>& valid) {
  GcGroups([&](const Listing& l) { return StaleComments(l, network, valid); }, "NAT rules of network " + network);
}

}  // namespace netiface::nat
