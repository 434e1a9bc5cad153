#include "firewall_plan.h"

#include <algorithm>
#include <map>

#include "netiface/cni/error.h"

namespace netiface::nat {

std::string FirewallComment(const Tag& tag) { return TagCommentWith(kFirewallCommentPrefix, tag); }

std::vector<Rule> PlanFirewallRules(const FirewallSpec& spec) {
  ValidateTag(spec.tag);
  const std::string& bridge = spec.isolated_bridge;
  if (!bridge.empty() && (!IsSafeToken(bridge) || bridge.size() > 15)) {
    throw cni::Error(cni::kNatFailure, "invalid bridge name for isolation rules: \"" + bridge + "\"");
  }
  std::map<std::string, std::vector<Rule>> by_chain;
  auto add = [&](const std::string& chain, std::string body) {
    auto& rules = by_chain[chain];
    Rule r{chain, std::move(body)};
    if (std::find(rules.begin(), rules.end(), r) == rules.end()) rules.push_back(std::move(r));
  };
  for (const auto& a : spec.addrs) {
    const std::string p = a.is_v4() ? "ip" : "ip6";
    add("firewall_forward", p + " daddr " + a.ToString() + " ct state established,related accept");
    add("firewall_forward", p + " saddr " + a.ToString() + " accept");
  }
  if (!bridge.empty()) {
    add("firewall_isolation",
        "iifname \"" + bridge + "\" oifname != \"" + bridge + "\" jump firewall_isolation_stage2");
    add("firewall_isolation_stage2", "oifname \"" + bridge + "\" drop");
  }
  std::vector<Rule> out;
  for (const auto& c : Chains()) {
    auto it = by_chain.find(std::string(c.name));
    if (it != by_chain.end()) out.insert(out.end(), it->second.begin(), it->second.end());
  }
  return out;
}

std::set<std::string> StaleFirewallComments(const Listing& listing, const std::string& network,
                                            const std::vector<cni::Attachment>& valid) {
  std::set<std::string> keep;
  for (const auto& a : valid) keep.insert(FirewallComment(Tag{network, a.container_id, a.ifname}));
  const std::string prefix = NetworkCommentPrefixWith(kFirewallCommentPrefix, network);
  std::set<std::string> stale;
  for (const auto& r : listing.rules) {
    if (r.comment.starts_with(prefix) && keep.count(r.comment) == 0) stale.insert(r.comment);
  }
  return stale;
}

std::optional<std::string> FirewallStatementFromJson(const nlohmann::json& s) {
  if (!s.is_object() || s.size() != 1) return std::nullopt;
  const std::string& key = s.begin().key();
  const nlohmann::json& val = s.begin().value();
  if (key == "drop" && val.is_null()) return "drop";
  if (key == "jump" && val.is_object() && val.size() == 1 && val.contains("target") && val["target"].is_string()) {
    const std::string target = val["target"].get<std::string>();
    if (IsSafeToken(target)) return "jump " + target;
    return std::nullopt;
  }
  if (key != "match" || !val.is_object() || !val.contains("left") || !val.contains("right")) return std::nullopt;
  const std::string op = val.value("op", std::string());
  const auto& left = val["left"];
  const auto& right = val["right"];
  if (left.is_object() && left.contains("meta") && left["meta"].is_object() && right.is_string() &&
      (op == "==" || op == "!=")) {
    const std::string meta = left["meta"].value("key", std::string());
    const std::string name = right.get<std::string>();
    if ((meta == "iifname" || meta == "oifname") && IsSafeToken(name)) {
      return meta + (op == "!=" ? " != " : " ") + "\"" + name + "\"";
    }
    return std::nullopt;
  }
  if (left.is_object() && left.contains("ct") && left["ct"].is_object() &&
      left["ct"].value("key", std::string()) == "state" && (op == "in" || op == "==")) {
    std::vector<std::string> states;
    if (right.is_string()) states.push_back(right.get<std::string>());
    if (right.is_array()) {
      for (const auto& v : right) {
        if (!v.is_string()) return std::nullopt;
        states.push_back(v.get<std::string>());
      }
    }
    if (states.empty()) return std::nullopt;
    std::string out = "ct state ";
    for (size_t i = 0; i < states.size(); ++i) out += (i == 0 ? "" : ",") + states[i];
    return out;
  }
  return std::nullopt;
}

}  // namespace netiface::nat
