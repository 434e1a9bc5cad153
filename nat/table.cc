#include "table.h"

#include <algorithm>

#include "netiface/cni/error.h"
#include "netiface/cni/join.h"
#include "netiface/cni/log.h"

namespace netiface::nat {
namespace {

constexpr char kLockDir[] = "/run/netiface";
constexpr char kLockPath[] = "/run/netiface/nat.lock";
constexpr int kLockTimeoutMs = 10000;

std::string FirstLine(const std::string& s) { return s.substr(0, s.find('\n')); }

}  // namespace

cni::FileLock LockTable() {
  cni::MakeDirs(kLockDir, 0755);
  return cni::FileLock::Acquire(kLockPath, kLockTimeoutMs);
}

Listing ListTable(NftContext& nft) {
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

void ApplyGroup(const std::string& comment, const std::vector<Rule>& desired, const std::string& what) {
  cni::FileLock lock = LockTable();
  NftContext nft;
  RunIfAny(nft, ApplyCommands(ListTable(nft), comment, desired), what);
}

bool RemoveGroup(const std::string& comment, const std::string& what) {
  cni::FileLock lock = LockTable();
  NftContext nft;
  Listing listing = ListTable(nft);
  bool found = std::any_of(listing.rules.begin(), listing.rules.end(),
                           [&](const ListedRule& r) { return r.comment == comment; });
  RunIfAny(nft, RemoveCommands(listing, {comment}), what);
  return found;
}

std::vector<std::string> MissingGroupRules(const std::string& comment, const std::vector<Rule>& desired) {
  if (desired.empty()) return {};
  cni::FileLock lock = LockTable();  // a listing taken while another process deletes the table is torn
  NftContext nft;
  return MissingRules(ListTable(nft), comment, desired);
}

void VerifyGroup(const std::string& comment, const std::vector<Rule>& desired, const std::string& what) {
  std::vector<std::string> missing = MissingGroupRules(comment, desired);
  if (missing.empty()) return;
  throw cni::Error(cni::kNatFailure, what + " missing in table inet netiface: " + cni::JoinMessages(missing));
}

void GcGroups(const std::function<std::set<std::string>(const Listing&)>& stale_of, const std::string& what) {
  cni::FileLock lock = LockTable();
  NftContext nft;
  Listing listing = ListTable(nft);
  std::set<std::string> stale = stale_of(listing);
  log::Debug("{}: removing {} attachment(s)", what, stale.size());
  RunIfAny(nft, RemoveCommands(listing, stale), "cannot remove stale " + what);
}

std::string DescribeTag(const Tag& tag) { return tag.network + "/" + tag.container_id + "/" + tag.ifname; }

}  // namespace netiface::nat
