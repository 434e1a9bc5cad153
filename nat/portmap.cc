// ApplyPortMap/RemovePortMap/VerifyPortMap/GcPortMap: the group calls of table.h over the port-mapping
// plan (portmap_plan.h).
#include "netiface/nat/portmap.h"

#include "netiface/cni/error.h"
#include "netiface/cni/log.h"
#include "portmap_plan.h"
#include "table.h"

namespace netiface::nat {
namespace {

std::string Describe(const Tag& tag) { return tag.network + "/" + tag.container_id + "/" + tag.ifname; }

}  // namespace

void ApplyPortMap(const PortMapSpec& spec) {
  std::vector<Rule> desired = PlanPortMapRules(spec);  // validates everything before the first change
  ApplyGroup(PortMapComment(spec.tag), desired, "cannot install port mappings for " + Describe(spec.tag));
}

bool RemovePortMap(const Tag& tag) {
  return RemoveGroup(PortMapComment(tag), "cannot remove port mappings of " + Describe(tag));
}

std::vector<std::string> MissingPortMapRules(const PortMapSpec& spec) {
  return MissingGroupRules(PortMapComment(spec.tag), PlanPortMapRules(spec));
}

void VerifyPortMap(const PortMapSpec& spec) {
  std::vector<std::string> missing = MissingPortMapRules(spec);
  if (missing.empty()) return;
  std::string list;
  for (const auto& m : missing) list += (list.empty() ? "" : "; ") + m;
  throw cni::Error(cni::kNatFailure,
                   "port mappings of " + Describe(spec.tag) + " missing in table inet netiface: " + list);
}

void GcPortMap(const std::string& network, const std::vector<cni::Attachment>& valid) {
  cni::FileLock lock = LockTable();
  NftContext nft;
  Listing listing = ListTable(nft);
  std::set<std::string> stale = StalePortMapComments(listing, network, valid);
  log::Debug("port mapping GC of network {}: removing {} attachment(s)", network, stale.size());
  RunIfAny(nft, RemoveCommands(listing, stale), "cannot remove stale port mappings of network " + network);
}

}  // namespace netiface::nat
