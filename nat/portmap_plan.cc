#include "portmap_plan.h"

#include <sys/socket.h>

#include <algorithm>
#include <map>

#include "netiface/cni/error.h"

namespace netiface::nat {
namespace {

[[noreturn]] void Invalid(const std::string& what) {
  throw cni::Error(cni::kNatFailure, "invalid port mapping: " + what);
}

std::string PrefixText(const cni::IpNet& n) {
  if (n.prefix_len() >= n.addr().bits()) return n.addr().ToString();
  return n.Network().addr().ToString() + "/" + std::to_string(n.prefix_len());
}

std::string Endpoint(const cni::IpAddr& a, uint16_t port) {
  std::string addr = a.is_v4() ? a.ToString() : "[" + a.ToString() + "]";
  return addr + ":" + std::to_string(port);
}

bool IsUnspecified(const cni::IpAddr& a) { return a == *cni::IpAddr::Parse(a.is_v4() ? "0.0.0.0" : "::"); }

std::string Conditions(const std::vector<AddrMatch>& conditions, int family) {
  std::string out;
  for (const auto& c : conditions) {
    if (c.prefix.family() != family) {
      Invalid("condition " + c.prefix.ToString() + " is not of the family it is listed for");
    }
    std::string p = family == AF_INET ? "ip" : "ip6";
    out += p + (c.source ? " saddr " : " daddr ") + (c.negate ? "!= " : "") + PrefixText(c.prefix) + " ";
  }
  return out;
}

}  // namespace

std::string PortMapComment(const Tag& tag) { return TagCommentWith(kPortMapCommentPrefix, tag); }

std::vector<Rule> PlanPortMapRules(const PortMapSpec& spec) {
  ValidateTag(spec.tag);
  for (const auto& m : spec.mappings) {
    if (m.host_port == 0 || m.container_port == 0) {
      Invalid("port 0 (hostPort " + std::to_string(m.host_port) + ", containerPort " +
              std::to_string(m.container_port) + ")");
    }
    if (m.protocol != "tcp" && m.protocol != "udp" && m.protocol != "sctp") {
      Invalid("protocol \"" + m.protocol + "\" (tcp, udp or sctp)");
    }
  }
  std::map<std::string, std::vector<Rule>> by_chain;
  auto add = [&](const std::string& chain, std::string body) {
    auto& rules = by_chain[chain];
    Rule r{chain, std::move(body)};
    if (std::find(rules.begin(), rules.end(), r) == rules.end()) rules.push_back(std::move(r));
  };
  std::set<int> families;
  for (const auto& a : spec.container_addrs) {
    if (!families.insert(a.family()).second) Invalid("two container addresses of one family");
    const bool v4 = a.is_v4();
    const std::string p = v4 ? "ip" : "ip6";
    const std::string conditions = Conditions(v4 ? spec.conditions_v4 : spec.conditions_v6, a.family());
    for (const auto& m : spec.mappings) {
      std::string dest;
      if (m.host_ip && m.host_ip->family() != a.family()) continue;  // the other family's mapping
      if (m.host_ip && !IsUnspecified(*m.host_ip)) {
        dest = p + " daddr " + m.host_ip->ToString();
      } else {
        dest = (conditions.empty() ? std::string(v4 ? "meta nfproto ipv4 " : "meta nfproto ipv6 ") : "") +
               "fib daddr type local";
      }
      std::string body = conditions + dest + " " + m.protocol + " dport " + std::to_string(m.host_port) + " dnat " + p +
                         " to " + Endpoint(a, m.container_port);
      add("portmap_prerouting", body);
      add("portmap_output", body);
      if (spec.snat) {
        const std::string port = " " + m.protocol + " dport " + std::to_string(m.container_port) + " masquerade";
        add("portmap_postrouting", p + " saddr " + a.ToString() + " " + p + " daddr " + a.ToString() + port);
        if (v4) add("portmap_postrouting", "ip saddr 127.0.0.0/8 ip daddr " + a.ToString() + port);
      }
    }
  }
  std::vector<Rule> out;
  for (const auto& c : Chains()) {
    auto it = by_chain.find(std::string(c.name));
    if (it != by_chain.end()) out.insert(out.end(), it->second.begin(), it->second.end());
  }
  return out;
}

std::set<std::string> StalePortMapComments(const Listing& listing, const std::string& network,
                                           const std::vector<cni::Attachment>& valid) {
  std::set<std::string> keep;
  for (const auto& a : valid) keep.insert(PortMapComment(Tag{network, a.container_id, a.ifname}));
  const std::string prefix = NetworkCommentPrefixWith(kPortMapCommentPrefix, network);
  std::set<std::string> stale;
  for (const auto& r : listing.rules) {
    if (r.comment.starts_with(prefix) && keep.count(r.comment) == 0) stale.insert(r.comment);
  }
  return stale;
}

std::optional<std::string> PortMapStatementFromJson(const nlohmann::json& s) {
  if (!s.is_object() || s.size() != 1) return std::nullopt;
  const std::string& key = s.begin().key();
  const nlohmann::json& val = s.begin().value();
  if (key == "match" && val.is_object() && val.value("op", std::string()) == "==" && val.contains("left") &&
      val.contains("right") && val["right"].is_string()) {
    const auto& left = val["left"];
    const std::string right = val["right"].get<std::string>();
    if (left.is_object() && left.contains("meta") && left["meta"].is_object() &&
        left["meta"].value("key", std::string()) == "nfproto" && (right == "ipv4" || right == "ipv6")) {
      return "meta nfproto " + right;
    }
    if (left.is_object() && left.contains("fib") && left["fib"].is_object() && right == "local") {
      const auto& fib = left["fib"];
      const auto flags = fib.value("flags", nlohmann::json());
      const bool daddr =
          (flags.is_string() && flags == "daddr") || (flags.is_array() && flags.size() == 1 && flags[0] == "daddr");
      if (fib.value("result", std::string()) == "type" && daddr) return "fib daddr type local";
    }
    return std::nullopt;
  }
  if (key == "dnat" && val.is_object() && val.size() == 3 && val.contains("family") && val["family"].is_string() &&
      val.contains("addr") && val["addr"].is_string() && val.contains("port") && val["port"].is_number_integer()) {
    const std::string family = val["family"].get<std::string>();
    auto a = cni::IpAddr::Parse(val["addr"].get<std::string>());
    const int64_t port = val["port"].get<int64_t>();
    if (!a || port <= 0 || port > 65535 || family != (a->is_v4() ? "ip" : "ip6")) return std::nullopt;
    return "dnat " + family + " to " + Endpoint(*a, static_cast<uint16_t>(port));
  }
  return std::nullopt;
}

}  // namespace netiface::nat
