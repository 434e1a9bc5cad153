// Pure planning for the nat library: which rules an attachment needs, how a rule reads in nft syntax,
// what the kernel's JSON listing holds, and which commands turn one into the other. No I/O here.
//
// Table layout (all ours, family inet, every chain policy accept):
//   table inet netiface
//     chain prerouting           type nat hook prerouting  priority dstnat       floating IP DNAT
//     chain output               type nat hook output      priority -100         floating IP DNAT (host)
//     chain postrouting_floating type nat hook postrouting priority srcnat - 10  floating IP SNAT
//     chain postrouting          type nat hook postrouting priority srcnat       masquerade
//     chain cluster_postrouting  type nat hook postrouting priority srcnat       the agent's masquerade
//     chain cluster_forward      type filter hook forward  priority filter       the agent's forward accepts
//     chain portmap_prerouting   type nat hook prerouting  priority dstnat       published ports (portmap.h)
//     chain portmap_output       type nat hook output      priority -100         published ports, the host's own
//     chain portmap_postrouting  type nat hook postrouting priority srcnat       hairpin/localhost masquerade
//     chain firewall_isolation_stage2  (regular)                                 bridge isolation (firewall.h)
//     chain firewall_isolation   type filter hook forward  priority filter - 5   bridge isolation
//     chain firewall_forward     type filter hook forward  priority filter       accepts per container address
// The cluster chains hold only the node agent's rules (PlanClusterRules), the others only attachments'.
// Every rule carries the comment TagComment(tag). A chain exists only while it holds rules, the table
// only while it holds chains.
#pragma once

#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "netiface/nat/cluster.h"
#include "netiface/nat/nat.h"

namespace netiface::nat {

inline constexpr std::string_view kTable = "netiface";
inline constexpr std::string_view kCommentPrefix = "netiface:";
inline constexpr std::string_view kClusterCommentPrefix = "netiface-agent:";
// libnftables refuses longer comments.
inline constexpr size_t kMaxComment = 128;

struct ChainDef {
  std::string_view name;
  std::string_view definition;  // the part between braces in "add chain"
};
// Every chain of the table, in the order they are created.
const std::vector<ChainDef>& Chains();

// Names and IDs reach nft syntax: only [A-Za-z0-9_.-], not empty.
bool IsSafeToken(std::string_view s);
// Throws cni::Error(kNatFailure) naming the field when a part of the tag is not a safe token.
void ValidateTag(const Tag& tag);

// "netiface:<network>:<containerID>:<ifname>". Parts that would not fit in kMaxComment are replaced
// by "#" + a SHA-256 prefix: the network when longer than 48 characters, then "<containerID>:<ifname>"
// as one. '#' and ':' never occur in safe tokens, so distinct tags give distinct comments.
std::string TagComment(const Tag& tag);
// The comment prefix shared by every rule of `network` ("netiface:<network>:").
std::string NetworkCommentPrefix(const std::string& network);
// The same two under another prefix `kind` (at most 24 characters; the port mappings' "netiface-portmap:").
std::string TagCommentWith(std::string_view kind, const Tag& tag);
std::string NetworkCommentPrefixWith(std::string_view kind, const std::string& network);

// One rule of one attachment. `body` is nft syntax without the comment; it is also the rule's
// signature: RuleBodyFromJson renders a listed rule the same way.
struct Rule {
  std::string chain;
  std::string body;
  bool operator==(const Rule&) const = default;
};

// The rules `spec` needs, in chain order, without duplicates. Throws cni::Error(kNatFailure) on an
// invalid tag or a floating IP pair of two families. A masquerade prefix of length 0 yields no rule
// (nothing lies outside it).
std::vector<Rule> PlanRules(const Spec& spec);

// "netiface-agent:<owner>". Throws cni::Error(kNatFailure) when owner is not a safe token or the
// comment would not fit in kMaxComment.
std::string ClusterComment(const std::string& owner);
// The rules of the group, in chain order (cluster.h gives their meaning and order), without the
// comment. Throws cni::Error(kNatFailure) on an invalid owner, a family holding addresses of another
// family, a network of prefix length 0 or a subnet that is not inside its network.
std::vector<Rule> PlanClusterRules(const ClusterRules& rules);

// A rule of the table as listed by the kernel.
struct ListedRule {
  std::string chain;
  uint64_t handle = 0;
  std::string comment;
  std::string body;  // RuleBodyFromJson of its expressions
};

// What "list table inet netiface" returned (JSON with handles).
struct Listing {
  bool table_exists = false;
  std::vector<std::string> chains;  // names, listing order
  bool has_other_objects = false;   // sets, maps, ... that we never create: the table is kept
  std::vector<ListedRule> rules;    // listing order (chain order within a chain)
};

// Parses libnftables' JSON output of "list table inet netiface". Throws cni::Error(kNatFailure) when
// it is not JSON of the expected shape.
Listing ParseListing(std::string_view json_text);
// True when libnftables' JSON output of "list tables" names table inet netiface.
bool ListsOurTable(std::string_view json_text);
// Renders a rule's "expr" array in the syntax PlanRules produces; parts it does not know are rendered
// as "?<json>" so that they never equal a planned body.
std::string RuleBodyFromJson(const nlohmann::json& expr);

// The transaction that makes the tag's rules exactly `desired`, keeping their position in each chain;
// "" when they already are (Apply is then a no-op).
std::string ApplyCommands(const Listing& listing, const std::string& comment, const std::vector<Rule>& desired);
// The transaction that deletes the listed rules whose comment is in `comments`, then every chain of
// ours left without rules (also one emptied behind our back), then the table when no chain is left;
// "" when there is nothing to delete.
std::string RemoveCommands(const Listing& listing, const std::set<std::string>& comments);
// The comments of `network`'s rules whose attachment is not in `valid`.
std::set<std::string> StaleComments(const Listing& listing, const std::string& network,
                                    const std::vector<cni::Attachment>& valid);
// The desired rules that are not in the listing with `comment`, as "<chain>: <body>".
std::vector<std::string> MissingRules(const Listing& listing, const std::string& comment,
                                      const std::vector<Rule>& desired);

}  // namespace netiface::nat
