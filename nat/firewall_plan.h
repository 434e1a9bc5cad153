// Pure planning of the firewall rules (firewall.h): the rules a FirewallSpec needs, their comment, and
// how the kernel's JSON of their statements reads back. No I/O here.
//
// Per container address A (p = ip|ip6), as the reference's CNI-FORWARD rules:
//   firewall_forward:           p daddr A ct state established,related accept
//                               p saddr A accept
// With an isolated bridge B, as the reference's CNI-ISOLATION-STAGE-1/2 (traffic from one isolated bridge
// to another is dropped; to and from anything else it passes):
//   firewall_isolation:         iifname "B" oifname != "B" jump firewall_isolation_stage2
//   firewall_isolation_stage2:  oifname "B" drop
#pragma once

#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "netiface/nat/firewall.h"
#include "plan.h"

namespace netiface::nat {

inline constexpr std::string_view kFirewallCommentPrefix = "netiface-firewall:";

std::string FirewallComment(const Tag& tag);

// The rules `spec` needs, in chain order, without duplicates. Throws cni::Error(kNatFailure) on an
// invalid tag or bridge name.
std::vector<Rule> PlanFirewallRules(const FirewallSpec& spec);

// The comments of `network`'s firewall rules whose attachment is not in `valid`.
std::set<std::string> StaleFirewallComments(const Listing& listing, const std::string& network,
                                            const std::vector<cni::Attachment>& valid);

// The statements only the firewall uses, in PlanFirewallRules' syntax: "ct state established,related",
// "iifname \"B\"", "oifname != \"B\"", "jump C", "drop". nullopt for any other statement.
std::optional<std::string> FirewallStatementFromJson(const nlohmann::json& statement);

}  // namespace netiface::nat
