#include "netiface/portmap/config.h"

#include <sys/socket.h>

#include <algorithm>
#include <cctype>
#include <sstream>

#include "netiface/cni/error.h"
#include "netiface/cni/json_get.h"
#include "netiface/cni/log.h"

namespace netiface::portmap {
namespace {

using nlohmann::json;

[[noreturn]] void Invalid(const std::string& what, const std::string& details = "") {
  throw cni::Error(cni::kInvalidConfig, "portmap: " + what, details);
}

uint16_t Port(const json& m, const char* key, size_t i) {
  const std::string path = "runtimeConfig.portMappings[" + std::to_string(i) + "]." + key;
  auto v = cni::GetOptional<int64_t>(m, key, "portmap", path);
  if (!v) Invalid("\"" + path + "\" is required");
  if (*v < 1 || *v > 65535) Invalid("\"" + path + "\" must be a port number (1-65535)", std::to_string(*v));
  return static_cast<uint16_t>(*v);
}

std::vector<nat::PortMapping> ParseMappings(const json& runtime_config) {
  std::vector<nat::PortMapping> out;
  auto it = runtime_config.find("portMappings");
  if (it == runtime_config.end() || it->is_null()) return out;
  if (!it->is_array()) Invalid("\"runtimeConfig.portMappings\" must be an array", it->dump());
  for (size_t i = 0; i < it->size(); ++i) {
    const json& m = (*it)[i];
    const std::string at = "runtimeConfig.portMappings[" + std::to_string(i) + "]";
    if (!m.is_object()) Invalid("\"" + at + "\" must be an object", m.dump());
    nat::PortMapping pm;
    pm.host_port = Port(m, "hostPort", i);
    pm.container_port = Port(m, "containerPort", i);
    std::string proto = cni::GetOptional<std::string>(m, "protocol", "portmap", at + ".protocol").value_or("tcp");
    std::transform(proto.begin(), proto.end(), proto.begin(), [](unsigned char c) { return std::tolower(c); });
    if (proto.empty()) proto = "tcp";
    if (proto != "tcp" && proto != "udp" && proto != "sctp") {
      Invalid("\"" + at + ".protocol\" must be tcp, udp or sctp", proto);
    }
    pm.protocol = proto;
    std::string host_ip = cni::GetOptional<std::string>(m, "hostIP", "portmap", at + ".hostIP").value_or("");
    if (!host_ip.empty()) {
      pm.host_ip = cni::IpAddr::Parse(host_ip);
      if (!pm.host_ip) Invalid("\"" + at + ".hostIP\" is not an IP address", host_ip);
    }
    out.push_back(std::move(pm));
  }
  return out;
}

std::vector<std::string> Words(const json& raw, const char* key) {
  std::vector<std::string> words;
  auto list = raw.find(key);
  if (list == raw.end() || list->is_null()) return words;
  if (!list->is_array()) Invalid(std::string("\"") + key + "\" must be an array of strings", list->dump());
  for (const auto& item : *list) {
    if (!item.is_string()) Invalid(std::string("\"") + key + "\" must be an array of strings", item.dump());
    std::istringstream in(item.get<std::string>());
    for (std::string w; in >> w;) words.push_back(w);
  }
  return words;
}

}  // namespace

std::vector<nat::AddrMatch> ParseConditions(const std::vector<std::string>& words, int family, const char* key) {
  std::vector<nat::AddrMatch> out;
  for (size_t i = 0; i < words.size();) {
    nat::AddrMatch m;
    if (words[i] == "!") {
      m.negate = true;
      ++i;
    }
    if (i >= words.size()) Invalid(std::string("\"") + key + "\" ends with \"!\"");
    const std::string& opt = words[i];
    if (opt == "-s" || opt == "--source") {
      m.source = true;
    } else if (opt == "-d" || opt == "--destination") {
      m.source = false;
    } else {
      Invalid(std::string("\"") + key + "\": only \"[!] -s|-d PREFIX\" matches are supported (nftables backend)", opt);
    }
    if (++i >= words.size()) Invalid(std::string("\"") + key + "\": \"" + opt + "\" needs an address");
    const std::string& text = words[i++];
    auto net = cni::IpNet::Parse(text);
    if (!net) {
      auto a = cni::IpAddr::Parse(text);
      if (a) net = cni::IpNet::Host(*a);
    }
    if (!net || net->family() != family) {
      Invalid(std::string("\"") + key + "\": not an " + (family == AF_INET ? "IPv4" : "IPv6") + " prefix", text);
    }
    m.prefix = *net;
    out.push_back(m);
  }
  return out;
}

Config ParseConfig(const cni::NetConf& conf) {
  const json& raw = conf.raw;
  Config c;
  c.cni_version = conf.cni_version;
  c.network = conf.name;
  c.mappings = ParseMappings(conf.runtime_config);
  c.snat = cni::GetOptional<bool>(raw, "snat", "portmap", "snat").value_or(true);
  auto chain = cni::GetOptional<std::string>(raw, "externalSetMarkChain", "portmap", "externalSetMarkChain");
  auto bit = cni::GetOptional<int64_t>(raw, "markMasqBit", "portmap", "markMasqBit");
  if (chain && bit) Invalid("\"externalSetMarkChain\" and \"markMasqBit\" cannot both be set");
  if (bit && (*bit < 0 || *bit > 31)) Invalid("\"markMasqBit\" must be between 0 and 31", std::to_string(*bit));
  if (chain && !chain->empty()) {
    Invalid(
        "\"externalSetMarkChain\" is not supported: the nftables rules masquerade by address and port and "
        "set no mark, so an iptables mark chain would never be used",
        *chain);
  }
  auto backend = cni::GetOptional<std::string>(raw, "backend", "portmap", "backend").value_or("");
  if (!backend.empty() && backend != "nftables" && backend != "iptables") {
    Invalid("\"backend\" must be \"nftables\" or \"iptables\"", backend);
  }
  if (backend == "iptables") log::Debug("backend \"iptables\" is served by nftables");
  c.conditions_v4 = ParseConditions(Words(raw, "conditionsV4"), AF_INET, "conditionsV4");
  c.conditions_v6 = ParseConditions(Words(raw, "conditionsV6"), AF_INET6, "conditionsV6");
  return c;
}

std::vector<cni::IpAddr> ContainerAddrs(const cni::Result& prev, const std::string& ifname) {
  std::optional<cni::IpAddr> v4;
  std::optional<cni::IpAddr> v6;
  for (const auto& ip : prev.ips) {
    auto& slot = ip.address.addr().is_v4() ? v4 : v6;
    if (slot) continue;
    if (ip.interface) {
      const int i = *ip.interface;
      if (i >= 0 && i < static_cast<int>(prev.interfaces.size()) &&
          (prev.interfaces[i].name != ifname || prev.interfaces[i].sandbox.empty())) {
        continue;
      }
    }
    slot = ip.address.addr();
  }
  std::vector<cni::IpAddr> out;
  if (v4) out.push_back(*v4);
  if (v6) out.push_back(*v6);
  return out;
}

nat::PortMapSpec MakeSpec(const Config& c, const std::string& container_id, const std::string& ifname,
                          const std::vector<cni::IpAddr>& addrs) {
  nat::PortMapSpec s;
  s.tag = {c.network, container_id, ifname};
  s.container_addrs = addrs;
  s.mappings = c.mappings;
  s.snat = c.snat;
  s.conditions_v4 = c.conditions_v4;
  s.conditions_v6 = c.conditions_v6;
  return s;
}

std::optional<int> RoutedIfindex(const std::vector<nl::RouteInfo>& routes, const cni::IpAddr& addr) {
  std::optional<int> best;
  int best_len = -1;
  for (const auto& r : routes) {
    if (r.ifindex <= 0 || r.dst.family() != addr.family() || !r.dst.Network().Contains(addr)) continue;
    if (r.dst.prefix_len() > best_len) {
      best_len = r.dst.prefix_len();
      best = r.ifindex;
    }
  }
  return best;
}

}  // namespace netiface::portmap
