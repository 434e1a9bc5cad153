// Apply/Remove/Verify/Gc: list the table, plan the transaction (plan.h), run it in one
// nft_run_cmd_from_buffer, all under the table's flock (table.h).
#include "netiface/nat/nat.h"

#include "netiface/cni/error.h"
#include "netiface/cni/log.h"
#include "table.h"

namespace netiface::nat {
namespace {

std::string Describe(const Tag& tag) { return tag.network + "/" + tag.container_id + "/" + tag.ifname; }

}  // namespace

void Apply(const Spec& spec) {
  std::vector<Rule> desired = PlanRules(spec);  // validates everything before the first change
  ApplyGroup(TagComment(spec.tag), desired, "cannot install NAT rules for " + Describe(spec.tag));
}

bool Remove(const Tag& tag) { return RemoveGroup(TagComment(tag), "cannot remove NAT rules of " + Describe(tag)); }

void Verify(const Spec& spec) {
  std::vector<std::string> missing = MissingGroupRules(TagComment(spec.tag), PlanRules(spec));
  if (missing.empty()) return;
  std::string list;
  for (const auto& m : missing) list += (list.empty() ? "" : "; ") + m;
  throw cni::Error(cni::kNatFailure, "NAT rules of " + Describe(spec.tag) + " missing in table inet netiface: " + list);
}

void Gc(const std::string& network, const std::vector<cni::Attachment>& valid) {
  cni::FileLock lock = LockTable();
  NftContext nft;
  Listing listing = ListTable(nft);
  std::set<std::string> stale = StaleComments(listing, network, valid);
  log::Debug("NAT GC of network {}: removing {} attachment(s)", network, stale.size());
  RunIfAny(nft, RemoveCommands(listing, stale), "cannot remove stale NAT rules of network " + network);
}

}  // namespace netiface::nat
