// Pure planning of the published ports (portmap.h): the rules a PortMapSpec needs, their comment, and
// how the kernel's JSON of their statements reads back. No I/O here.
//
// Per mapping and family (container address A, protocol P, host port HP, container port CP; p = ip|ip6):
//   portmap_prerouting, portmap_output:
//     [conditions] p daddr HOSTIP P dport HP dnat p to A:CP            with a host IP of the family
//     [conditions] fib daddr type local P dport HP dnat p to A:CP      without one (any local address;
//                                   "meta nfproto ipv4|ipv6" first when there are no conditions)
//   portmap_postrouting (snat only):
//     p saddr A p daddr A P dport CP masquerade                        hairpin: the container to itself
//     ip saddr 127.0.0.0/8 ip daddr A P dport CP masquerade            IPv4: the host's 127.0.0.1
#pragma once

#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "netiface/nat/portmap.h"
#include "plan.h"

namespace netiface::nat {

inline constexpr std::string_view kPortMapCommentPrefix = "netiface-portmap:";

// "netiface-portmap:<network>:<containerID>:<ifname>" (shortened as TagComment is).
std::string PortMapComment(const Tag& tag);

// The rules `spec` needs, in chain order, without duplicates. Throws cni::Error(kNatFailure) on an
// invalid tag, two container addresses of one family, a port 0, an unknown protocol, or a condition of
// the wrong family.
std::vector<Rule> PlanPortMapRules(const PortMapSpec& spec);

// The comments of `network`'s port-mapping rules whose attachment is not in `valid`.
std::set<std::string> StalePortMapComments(const Listing& listing, const std::string& network,
                                           const std::vector<cni::Attachment>& valid);

// The statements only port mappings use, in PlanPortMapRules' syntax: "meta nfproto ipv4",
// "fib daddr type local", "dnat ip to A:P" / "dnat ip6 to [A]:P". nullopt for any other statement.
std::optional<std::string> PortMapStatementFromJson(const nlohmann::json& statement);

}  // namespace netiface::nat
