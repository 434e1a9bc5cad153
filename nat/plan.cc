#include "plan.h"

#include <sys/socket.h>

#include <algorithm>
#include <map>

#include <fmt/format.h>

#include "firewall_plan.h"
#include "netiface/cni/error.h"
#include "netiface/cni/hash.h"
#include "portmap_plan.h"

namespace netiface::nat {
namespace {

constexpr size_t kMaxNetworkInComment = 48;

std::string Sha256Hex(std::string_view data, size_t hex_chars) {
  return cni::HexDigest(cni::Hash::kSha256, data).substr(0, hex_chars);
}

std::string Proto(int family_bits) { return family_bits == 32 ? "ip" : "ip6"; }

// An address, or a prefix "network/len" (a full-length prefix reads as the bare address, as nft lists it).
std::string PrefixText(const cni::IpNet& n) {
  if (n.prefix_len() >= n.addr().bits()) return n.addr().ToString();
  return n.Network().addr().ToString() + "/" + std::to_string(n.prefix_len());
}

std::string Quoted(std::string_view s) { return "\"" + std::string(s) + "\""; }

std::string RuleCommand(const std::string& verb, const Rule& r, const std::string& comment,
                        std::optional<uint64_t> position = std::nullopt) {
  std::string cmd = verb + " rule inet " + std::string(kTable) + " " + r.chain;
  if (position) cmd += " position " + std::to_string(*position);
  return cmd + " " + r.body + " comment " + Quoted(comment) + "\n";
}

std::string DeleteRuleCommand(const ListedRule& r) {
  return "delete rule inet " + std::string(kTable) + " " + r.chain + " handle " + std::to_string(r.handle) + "\n";
}

bool IsOurChain(const std::string& name) {
  for (const auto& c : Chains()) {
    if (c.name == name) return true;
  }
  return false;
}

// A part the renderer does not know: "?<json>", which never equals a planned body.
std::string Unknown(const nlohmann::json& j) { return "?" + j.dump(); }

std::string ValueFromJson(const nlohmann::json& v) {
  if (v.is_number_integer() && v.get<int64_t>() >= 0) return std::to_string(v.get<int64_t>());  // a port
  if (v.is_string()) {
    auto a = cni::IpAddr::Parse(v.get<std::string>());
    return a ? a->ToString() : Unknown(v);
  }
  if (v.is_object() && v.contains("prefix")) {
    const auto& p = v["prefix"];
    if (p.is_object() && p.contains("addr") && p["addr"].is_string() && p.contains("len") &&
        p["len"].is_number_integer()) {
      auto a = cni::IpAddr::Parse(p["addr"].get<std::string>());
      int len = p["len"].get<int>();
      if (a && len >= 0 && len <= a->bits()) return PrefixText(cni::IpNet(*a, len));
    }
  }
  return Unknown(v);
}

std::string HexText(uint64_t v) { return fmt::format("{:#x}", v); }

// `meta mark & MASK == VALUE`: {"match": {"left": {"&": [{"meta": {"key": "mark"}}, MASK]}, "right": VALUE}}.
std::optional<std::string> MarkMatchFromJson(const nlohmann::json& left, const nlohmann::json& right,
                                             const std::string& op) {
  if (!left.is_object() || left.size() != 1 || !left.contains("&")) return std::nullopt;
  const auto& operands = left["&"];
  if (!operands.is_array() || operands.size() != 2 || !right.is_number_unsigned()) return std::nullopt;
  const auto& meta = operands[0];
  if (!meta.is_object() || !meta.contains("meta") || !meta["meta"].is_object() ||
      meta["meta"].value("key", std::string()) != "mark" || !operands[1].is_number_unsigned()) {
    return std::nullopt;
  }
  return "meta mark & " + HexText(operands[1].get<uint64_t>()) + " " + op + " " + HexText(right.get<uint64_t>());
}

// "masquerade", "masquerade fully-random", "masquerade random,persistent".
std::optional<std::string> MasqueradeFromJson(const nlohmann::json& val) {
  if (val.is_null()) return "masquerade";
  if (!val.is_object() || val.size() != 1 || !val.contains("flags")) return std::nullopt;
  const auto& flags = val["flags"];
  if (flags.is_string()) return "masquerade " + flags.get<std::string>();
  if (!flags.is_array() || flags.empty()) return std::nullopt;
  std::string out = "masquerade ";
  for (size_t i = 0; i < flags.size(); ++i) {
    if (!flags[i].is_string()) return std::nullopt;
    out += (i == 0 ? "" : ",") + flags[i].get<std::string>();
  }
  return out;
}

std::string StatementFromJson(const nlohmann::json& s) {
  if (!s.is_object() || s.size() != 1) return Unknown(s);
  const std::string& key = s.begin().key();
  const nlohmann::json& val = s.begin().value();
  if (key == "match" && val.is_object()) {
    const auto& left = val.value("left", nlohmann::json());
    const auto& op = val.value("op", std::string());
    if (left.is_object() && left.contains("payload") && left["payload"].is_object() && val.contains("right") &&
        (op == "==" || op == "!=")) {
      const auto& p = left["payload"];
      std::string out = p.value("protocol", std::string("?")) + " " + p.value("field", std::string("?")) + " ";
      if (op == "!=") out += "!= ";
      return out + ValueFromJson(val["right"]);
    }
    if (val.contains("right") && (op == "==" || op == "!=")) {
      if (auto mark = MarkMatchFromJson(left, val["right"], op)) return *mark;
    }
  } else if (key == "masquerade") {
    if (auto m = MasqueradeFromJson(val)) return *m;
  } else if ((key == "return" || key == "accept") && val.is_null()) {
    return key;
  } else if ((key == "snat" || key == "dnat") && val.is_object() && val.size() == 2 && val.contains("family") &&
             val["family"].is_string() && val.contains("addr")) {
    return key + " " + val["family"].get<std::string>() + " to " + ValueFromJson(val["addr"]);
  }
  if (auto portmap = PortMapStatementFromJson(s)) return *portmap;
  if (auto firewall = FirewallStatementFromJson(s)) return *firewall;
  return Unknown(s);
}

[[noreturn]] void BadListing(const std::string& why) {
  throw cni::Error(cni::kNatFailure, "unexpected nftables listing: " + why);
}

}  // namespace

const std::vector<ChainDef>& Chains() {
  static const std::vector<ChainDef> kChains = {
      {"prerouting", "type nat hook prerouting priority dstnat; policy accept;"},
      {"output", "type nat hook output priority -100; policy accept;"},
      {"postrouting_floating", "type nat hook postrouting priority srcnat - 10; policy accept;"},
      {"postrouting", "type nat hook postrouting priority srcnat; policy accept;"},
      {"cluster_postrouting", "type nat hook postrouting priority srcnat; policy accept;"},
      {"cluster_forward", "type filter hook forward priority filter; policy accept;"},
      {"portmap_prerouting", "type nat hook prerouting priority dstnat; policy accept;"},
      {"portmap_output", "type nat hook output priority -100; policy accept;"},
      {"portmap_postrouting", "type nat hook postrouting priority srcnat; policy accept;"},
      // Created before the chain that jumps to it, and so (listed in creation order) deleted after it.
      {"firewall_isolation_stage2", ""},
      {"firewall_isolation", "type filter hook forward priority filter - 5; policy accept;"},
      {"firewall_forward", "type filter hook forward priority filter; policy accept;"},
  };
  return kChains;
}

bool IsSafeToken(std::string_view s) {
  if (s.empty()) return false;
  return std::all_of(s.begin(), s.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '.' ||
           c == '-';
  });
}

void ValidateTag(const Tag& tag) {
  auto check = [](std::string_view field, const std::string& v) {
    if (!IsSafeToken(v)) {
      throw cni::Error(cni::kNatFailure, "invalid " + std::string(field) + " for NAT rules: \"" + v + "\"",
                       "only letters, digits, '_', '.' and '-' are allowed");
    }
  };
  check("network name", tag.network);
  check("container ID", tag.container_id);
  check("interface name", tag.ifname);
}

std::string NetworkCommentPrefix(const std::string& network) {
  return NetworkCommentPrefixWith(kCommentPrefix, network);
}

std::string NetworkCommentPrefixWith(std::string_view kind, const std::string& network) {
  std::string key = network.size() <= kMaxNetworkInComment ? network : "#" + Sha256Hex(network, 16);
  return std::string(kind) + key + ":";
}

std::string TagComment(const Tag& tag) { return TagCommentWith(kCommentPrefix, tag); }

std::string TagCommentWith(std::string_view kind, const Tag& tag) {
  std::string prefix = NetworkCommentPrefixWith(kind, tag.network);
  std::string attachment = tag.container_id + ":" + tag.ifname;
  if (prefix.size() + attachment.size() > kMaxComment) {
    attachment = "#" + Sha256Hex(tag.container_id + "\n" + tag.ifname, 32);
  }
  return prefix + attachment;
}

std::vector<Rule> PlanRules(const Spec& spec) {
  ValidateTag(spec.tag);
  std::map<std::string, std::vector<Rule>> by_chain;
  auto add = [&](const std::string& chain, std::string body) {
    auto& rules = by_chain[chain];
    Rule r{chain, std::move(body)};
    if (std::find(rules.begin(), rules.end(), r) == rules.end()) rules.push_back(std::move(r));
  };
  for (const auto& [ext, in] : spec.floating_ips) {
    if (ext.family() != in.family()) {
      throw cni::Error(cni::kNatFailure, "floating IP " + ext.ToString() + " and workload address " + in.ToString() +
                                             " are of different families");
    }
    std::string p = Proto(ext.bits());
    add("prerouting", p + " daddr " + ext.ToString() + " dnat " + p + " to " + in.ToString());
    add("output", p + " daddr " + ext.ToString() + " dnat " + p + " to " + in.ToString());
    add("postrouting_floating", p + " saddr " + in.ToString() + " snat " + p + " to " + ext.ToString());
  }
  for (const auto& m : spec.masquerade) {
    if (m.prefix_len() == 0) continue;
    std::string p = Proto(m.addr().bits());
    std::string multicast = m.addr().is_v4() ? "224.0.0.0/4" : "ff00::/8";
    add("postrouting", p + " saddr " + m.addr().ToString() + " " + p + " daddr != " + PrefixText(m.Network()) + " " +
                           p + " daddr != " + multicast + " masquerade");
  }
  std::vector<Rule> out;
  for (const auto& c : Chains()) {
    auto it = by_chain.find(std::string(c.name));
    if (it != by_chain.end()) out.insert(out.end(), it->second.begin(), it->second.end());
  }
  return out;
}

std::string ClusterComment(const std::string& owner) {
  if (!IsSafeToken(owner) || kClusterCommentPrefix.size() + owner.size() > kMaxComment) {
    throw cni::Error(cni::kNatFailure, "invalid owner for cluster NAT rules: \"" + owner + "\"",
                     "only letters, digits, '_', '.' and '-' are allowed, at most " +
                         std::to_string(kMaxComment - kClusterCommentPrefix.size()) + " characters");
  }
  return std::string(kClusterCommentPrefix) + owner;
}

namespace {

void ValidateClusterFamily(const ClusterFamily& f, int family, const char* which) {
  const auto& net = f.network;
  const auto& sub = f.subnet;
  std::string what = std::string(which) + " cluster network " + net.ToString() + " / node subnet " + sub.ToString();
  if (net.family() != family || sub.family() != family) {
    throw cni::Error(cni::kNatFailure, what + ": addresses of the wrong family");
  }
  if (net.prefix_len() == 0) throw cni::Error(cni::kNatFailure, what + ": the cluster network has prefix length 0");
  if (sub.prefix_len() < net.prefix_len() || !net.Network().Contains(sub.addr())) {
    throw cni::Error(cni::kNatFailure, what + ": the node subnet is not inside the cluster network");
  }
}

}  // namespace

std::vector<Rule> PlanClusterRules(const ClusterRules& rules) {
  ClusterComment(rules.owner);
  if (rules.v4) ValidateClusterFamily(*rules.v4, AF_INET, "IPv4");
  if (rules.v6) ValidateClusterFamily(*rules.v6, AF_INET6, "IPv6");
  std::vector<Rule> masq;
  std::vector<Rule> forward;
  if (rules.masquerade && (rules.v4 || rules.v6)) {
    masq.push_back({"cluster_postrouting", "meta mark & 0x4000 == 0x4000 return"});  // any family
  }
  for (const auto* f : {&rules.v4, &rules.v6}) {
    if (!*f) continue;
    const bool v4 = (*f)->network.addr().is_v4();
    const std::string p = v4 ? "ip" : "ip6";
    const std::string net = PrefixText((*f)->network.Network());
    const std::string sub = PrefixText((*f)->subnet.Network());
    const std::string multicast = v4 ? "224.0.0.0/4" : "ff00::/8";
    const std::string s = p + " saddr ";
    const std::string d = " " + p + " daddr ";
    if (rules.masquerade) {
      const std::string chain = "cluster_postrouting";
      masq.push_back({chain, s + sub + d + net + " return"});
      masq.push_back({chain, s + net + d + sub + " return"});
      masq.push_back({chain, s + "!= " + net + d + sub + " return"});
      masq.push_back({chain, s + net + d + "!= " + multicast + " masquerade fully-random"});
      masq.push_back({chain, s + "!= " + net + d + net + " masquerade fully-random"});
    }
    if (rules.forward) {
      forward.push_back({"cluster_forward", s + net + " accept"});
      forward.push_back({"cluster_forward", p + " daddr " + net + " accept"});
    }
  }
  masq.insert(masq.end(), forward.begin(), forward.end());
  return masq;
}

std::string RuleBodyFromJson(const nlohmann::json& expr) {
  if (!expr.is_array()) return Unknown(expr);
  std::string out;
  for (const auto& s : expr) {
    if (!out.empty()) out += " ";
    out += StatementFromJson(s);
  }
  return out;
}

Listing ParseListing(std::string_view json_text) {
  auto doc = nlohmann::json::parse(json_text, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded() || !doc.is_object() || !doc.contains("nftables") || !doc["nftables"].is_array()) {
    BadListing(std::string(json_text.substr(0, 200)));
  }
  Listing l;
  for (const auto& item : doc["nftables"]) {
    if (!item.is_object() || item.size() != 1) BadListing(item.dump());
    const std::string& kind = item.begin().key();
    const nlohmann::json& obj = item.begin().value();
    if (kind == "metainfo") continue;
    if (!obj.is_object()) BadListing(item.dump());
    if (kind == "table") {
      l.table_exists = true;
    } else if (kind == "chain") {
      l.chains.push_back(obj.value("name", std::string()));
    } else if (kind == "rule") {
      if (!obj.contains("handle") || !obj["handle"].is_number_unsigned()) BadListing("rule without handle");
      ListedRule r;
      r.chain = obj.value("chain", std::string());
      r.handle = obj["handle"].get<uint64_t>();
      r.comment = obj.value("comment", std::string());
      r.body = RuleBodyFromJson(obj.value("expr", nlohmann::json::array()));
      l.rules.push_back(std::move(r));
    } else {
      l.has_other_objects = true;
    }
  }
  return l;
}

bool ListsOurTable(std::string_view json_text) {
  auto doc = nlohmann::json::parse(json_text, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded() || !doc.is_object() || !doc.contains("nftables") || !doc["nftables"].is_array()) {
    BadListing(std::string(json_text.substr(0, 200)));
  }
  for (const auto& item : doc["nftables"]) {
    if (!item.is_object() || !item.contains("table")) continue;
    const auto& t = item["table"];
    if (t.is_object() && t.value("family", std::string()) == "inet" && t.value("name", std::string()) == kTable) {
      return true;
    }
  }
  return false;
}

std::string RemoveCommands(const Listing& listing, const std::set<std::string>& comments) {
  std::string cmds;
  std::map<std::string, int> remaining;
  for (const auto& c : listing.chains) remaining[c] = 0;
  for (const auto& r : listing.rules) {
    if (comments.count(r.comment) != 0) {
      cmds += DeleteRuleCommand(r);
    } else {
      ++remaining[r.chain];
    }
  }
  std::vector<std::string> empty_chains;
  bool table_empty = listing.table_exists && !listing.has_other_objects;
  for (const auto& c : listing.chains) {
    if (remaining[c] == 0 && IsOurChain(c)) {
      empty_chains.push_back(c);
    } else {
      table_empty = false;
    }
  }
  if (table_empty) return cmds + "delete table inet " + std::string(kTable) + "\n";
  if (cmds.empty() && empty_chains.empty()) return "";
  for (const auto& c : empty_chains) cmds += "delete chain inet " + std::string(kTable) + " " + c + "\n";
  return cmds;
}

std::string ApplyCommands(const Listing& listing, const std::string& comment, const std::vector<Rule>& desired) {
  if (desired.empty()) return RemoveCommands(listing, {comment});
  std::string setup = "add table inet " + std::string(kTable) + "\n";
  std::string changes;
  std::map<std::string, int> others;  // rules of other tags per chain
  for (const auto& r : listing.rules) {
    if (r.comment != comment) ++others[r.chain];
  }
  for (const auto& def : Chains()) {
    std::string chain(def.name);
    std::vector<const ListedRule*> existing;
    for (const auto& r : listing.rules) {
      if (r.chain == chain && r.comment == comment) existing.push_back(&r);
    }
    std::vector<const Rule*> wanted;
    for (const auto& r : desired) {
      if (r.chain == chain) wanted.push_back(&r);
    }
    bool same = existing.size() == wanted.size() &&
                std::equal(existing.begin(), existing.end(), wanted.begin(),
                           [](const ListedRule* a, const Rule* b) { return a->body == b->body; });
    if (same) continue;
    bool chain_exists = std::find(listing.chains.begin(), listing.chains.end(), chain) != listing.chains.end();
    if (!wanted.empty() && !chain_exists) {
      setup += "add chain inet " + std::string(kTable) + " " + chain + " { " + std::string(def.definition) + " }\n";
    }
    if (existing.empty()) {
      for (const Rule* r : wanted) changes += RuleCommand("add", *r, comment);
    } else {
      // "add ... position H" inserts right after H: adding in reverse keeps the planned order.
      uint64_t anchor = existing.back()->handle;
      for (auto it = wanted.rbegin(); it != wanted.rend(); ++it) changes += RuleCommand("add", **it, comment, anchor);
      for (const ListedRule* r : existing) changes += DeleteRuleCommand(*r);
      if (wanted.empty() && others[chain] == 0) {
        changes += "delete chain inet " + std::string(kTable) + " " + chain + "\n";
      }
    }
  }
  if (changes.empty()) return "";
  return setup + changes;
}

std::set<std::string> StaleComments(const Listing& listing, const std::string& network,
                                    const std::vector<cni::Attachment>& valid) {
  std::set<std::string> keep;
  for (const auto& a : valid) keep.insert(TagComment(Tag{network, a.container_id, a.ifname}));
  std::string prefix = NetworkCommentPrefix(network);
  std::set<std::string> stale;
  for (const auto& r : listing.rules) {
    if (r.comment.starts_with(prefix) && keep.count(r.comment) == 0) stale.insert(r.comment);
  }
  return stale;
}

std::vector<std::string> MissingRules(const Listing& listing, const std::string& comment,
                                      const std::vector<Rule>& desired) {
  std::vector<std::string> missing;
  for (const auto& d : desired) {
    bool found = std::any_of(listing.rules.begin(), listing.rules.end(), [&](const ListedRule& r) {
      return r.chain == d.chain && r.comment == comment && r.body == d.body;
    });
    if (!found) missing.push_back(d.chain + ": " + d.body);
  }
  return missing;
}

}  // namespace netiface::nat
