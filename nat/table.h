// What every nat call does to table inet netiface: hold the flock across list and commit, list the
// table, run the planned transaction. Shared by the attachments' calls (nat.cc) and the node agent's
// (cluster.cc). Acts in the current network namespace.
#pragma once

#include <functional>
#include <set>
#include <string>
#include <vector>

#include "netiface/cni/file.h"
#include "nftables.h"
#include "plan.h"

namespace netiface::nat {

// The exclusive flock on /run/netiface/nat.lock (10 s, then cni::Error(kTryAgainLater)).
cni::FileLock LockTable();
// The table as it is now; an empty Listing when it does not exist. Throws cni::Error(kNatFailure).
Listing ListTable(NftContext& nft);
// Runs `commands` as one transaction unless empty. Throws cni::Error(kNatFailure, what + cause).
void RunIfAny(NftContext& nft, const std::string& commands, const std::string& what);

// Under the flock: makes the rules carrying `comment` exactly `desired`; writes nothing when they are.
void ApplyGroup(const std::string& comment, const std::vector<Rule>& desired, const std::string& what);
// Under the flock: deletes every rule carrying `comment` (and what that empties). False when there was none.
bool RemoveGroup(const std::string& comment, const std::string& what);
// Under the flock: MissingRules of the current listing; empty without listing when `desired` is.
std::vector<std::string> MissingGroupRules(const std::string& comment, const std::vector<Rule>& desired);
// Throws cni::Error(kNatFailure, what + " missing in table inet netiface: " + the missing rules) unless every
// rule of `desired` is there.
void VerifyGroup(const std::string& comment, const std::vector<Rule>& desired, const std::string& what);
// Under the flock: deletes the groups `stale_of` names in the current listing, in one transaction.
void GcGroups(const std::function<std::set<std::string>(const Listing&)>& stale_of, const std::string& what);

// "network/containerID/ifname", for messages.
std::string DescribeTag(const Tag& tag);

}  // namespace netiface::nat
