// Apply/Remove/Verify/Gc: list the table, plan the transaction (plan.h), run it in one
// nft_run_cmd_from_buffer. Every call holds a flock across list and commit, so that a Remove that
// deletes the table when it empties cannot race an Apply that is adding to it.
#include "netiface/nat/nat.h"

#include <algorithm>

#include "netiface/cni/error.h"
#include "netiface/cni/file.h"
#include "netiface/cni/log.h"
#include "nftables.h"
#include "plan.h"

namespace netiface::nat {
namespace {

constexpr char kLockDir[] = "/run/netiface";
constexpr char kLockPath[] = "/run/netiface/nat.lock";
constexpr int kLockTimeoutMs = 10000;

cni::FileLock Lock() {
  cni::MakeDirs(kLockDir, 0755);
  return cni::FileLock::Acquire(kLockPath, kLockTimeoutMs);
}

std::string Describe(const Tag& tag) { return tag.network + "/" + tag.container_id + "/" + tag.ifname; }

std::string FirstLine(const std::string& s) { return s.substr(0, s.find('\n')); }

// The table as it is now; an empty Listing when it does not exist.
Listing List(NftContext& nft) {
  std::string out;
  std::string err;
  if (nft.ListJson("list table inet " + std::string(kTable), &out, &err)) return ParseListing(out);
  std::string tables_out;
  std::string tables_err;
  if (!nft.ListJson("list tables", &tables_out, &tables_err)) {
    throw cni::Error(cni::kNatFailure, "cannot list nftables tables: " + FirstLine(tables_err), tables_err);
  }
  if (ListsOurTable(tables_out)) {
    throw cni::Error(cni::kNatFailure, "cannot list table inet netiface: " + FirstLine(err), err);
  }
  return Listing{};
}

void RunIfAny(NftContext& nft, const std::string& commands, const std::string& what) {
  if (commands.empty()) return;
  log::Debug("nftables transaction ({}):\n{}", what, commands);
  nft.Run(commands, what);
}

}  // namespace

void Apply(const Spec& spec) {
  std::vector<Rule> desired = PlanRules(spec);  // validates everything before the first change
  std::string comment = TagComment(spec.tag);
  cni::FileLock lock = Lock();
  NftContext nft;
  RunIfAny(nft, ApplyCommands(List(nft), comment, desired), "cannot install NAT rules for " + Describe(spec.tag));
}

bool Remove(const Tag& tag) {
  cni::FileLock lock = Lock();
  NftContext nft;
  const std::string comment = TagComment(tag);
  Listing listing = List(nft);
  bool found = std::any_of(listing.rules.begin(), listing.rules.end(),
                           [&](const ListedRule& r) { return r.comment == comment; });
  RunIfAny(nft, RemoveCommands(listing, {comment}), "cannot remove NAT rules of " + Describe(tag));
  return found;
}

void Verify(const Spec& spec) {
  std::vector<Rule> desired = PlanRules(spec);
  if (desired.empty()) return;
  cni::FileLock lock = Lock();  // a listing taken while another process deletes the table is torn
  NftContext nft;
  std::vector<std::string> missing = MissingRules(List(nft), TagComment(spec.tag), desired);
  if (missing.empty()) return;
  std::string list;
  for (const auto& m : missing) list += (list.empty() ? "" : "; ") + m;
  throw cni::Error(cni::kNatFailure, "NAT rules of " + Describe(spec.tag) + " missing in table inet netiface: " + list);
}

void Gc(const std::string& network, const std::vector<cni::Attachment>& valid) {
  cni::FileLock lock = Lock();
  NftContext nft;
  Listing listing = List(nft);
  std::set<std::string> stale = StaleComments(listing, network, valid);
  log::Debug("NAT GC of network {}: removing {} attachment(s)", network, stale.size());
  RunIfAny(nft, RemoveCommands(listing, stale), "cannot remove stale NAT rules of network " + network);
}

}  // namespace netiface::nat
