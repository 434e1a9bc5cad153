#include "netiface/ipam/config.h"

#include "netiface/cni/error.h"
#include "netiface/cni/json_get.h"
#include "netiface/cni/version.h"

namespace netiface::ipam {
namespace {

using cni::IpAddr;
using nlohmann::json;

[[noreturn]] void Invalid(const std::string& msg) { throw cni::Error(cni::kInvalidConfig, msg); }

const json& IpamSection(const cni::NetConf& conf) {
  if (!conf.ipam.is_object()) Invalid("IPAM config missing 'ipam' key");
  return conf.ipam;
}

std::string StringKey(const json& j, const char* key, const std::string& where) {
  return cni::GetOptional<std::string>(
             j, key, [&](const json& v) { Invalid(where + "." + key + " must be a string, got " + v.dump()); })
      .value_or("");
}

// "10.1.2.3" or "10.1.2.3/24" (the prefix length is accepted and ignored, as the reference's ip.IP).
std::optional<IpAddr> ParseRequested(const std::string& text) {
  if (text.find('/') != std::string::npos) {
    auto net = cni::IpNet::Parse(text);
    if (!net) return std::nullopt;
    return Canonical(net->addr());
  }
  return ParseCanonical(text);
}

struct Requested {
  IpAddr ip;
  std::string source;  // where it came from, for messages
};

void AddRequested(std::vector<Requested>& out, const std::string& text, const std::string& where,
                  int code = cni::kInvalidConfig) {
  auto ip = ParseRequested(text);
  if (!ip) throw cni::Error(code, where + ": \"" + text + "\" is not an IP address");
  for (const auto& r : out) {
    if (r.ip == *ip) return;
  }
  out.push_back({*ip, where});
}

void AddRequestedList(std::vector<Requested>& out, const json& obj, const char* key, const std::string& where) {
  auto it = obj.find(key);
  if (it == obj.end() || it->is_null()) return;
  if (!it->is_array()) Invalid(where + " must be an array of strings, got " + it->dump());
  for (size_t i = 0; i < it->size(); ++i) {
    const json& e = (*it)[i];
    std::string at = where + "[" + std::to_string(i) + "]";
    if (!e.is_string()) Invalid(at + " must be a string, got " + e.dump());
    AddRequested(out, e.get<std::string>(), at);
  }
}

std::vector<Requested> CollectRequested(const cni::NetConf& conf, std::string_view cni_args) {
  std::vector<Requested> out;
  if (!cni_args.empty()) {
    auto args = cni::CniArgs::Parse(cni_args, KnownCniArgs());
    if (auto ip = args.Get("IP"); ip && !ip->empty()) AddRequested(out, *ip, "CNI_ARGS IP", cni::kInvalidEnv);
  }
  if (auto cni = conf.args.find("cni"); cni != conf.args.end() && !cni->is_null()) {
    if (!cni->is_object()) Invalid("args.cni must be an object, got " + cni->dump());
    AddRequestedList(out, *cni, "ips", "args.cni.ips");
  }
  AddRequestedList(out, conf.runtime_config, "ips", "runtimeConfig.ips");
  return out;
}

void AppendRangeSets(std::vector<RangeSet>& out, const json& j, const std::string& where) {
  if (!j.is_array()) Invalid(where + " must be an array of range sets, got " + j.dump());
  for (size_t i = 0; i < j.size(); ++i) out.push_back(ParseRangeSet(j[i], where + "[" + std::to_string(i) + "]"));
}

}  // namespace

const std::vector<std::string_view>& KnownCniArgs() {
  static const std::vector<std::string_view> kKnown = {
      "IP", "IgnoreUnknown", "K8S_POD_NAMESPACE", "K8S_POD_NAME", "K8S_POD_INFRA_CONTAINER_ID", "K8S_POD_UID", "MAC"};
  return kKnown;
}

StoreConfig ParseStoreConfig(const cni::NetConf& conf) {
  const json& ipam = IpamSection(conf);
  StoreConfig s;
  s.network = conf.name;
  s.data_dir = StringKey(ipam, "dataDir", "ipam");
  if (s.data_dir.empty()) s.data_dir = std::string(kDefaultDataDir);
  if (auto it = ipam.find("lockTimeoutMs"); it != ipam.end() && !it->is_null()) {
    if (!it->is_number_integer() || it->get<int64_t>() < 0 || it->get<int64_t>() > 3600 * 1000) {
      Invalid("ipam.lockTimeoutMs must be an integer from 0 to 3600000, got " + it->dump());
    }
    s.lock_timeout_ms = it->get<int>();
  }
  return s;
}

IpamConfig ParseIpamConfig(const cni::NetConf& conf, std::string_view cni_args) {
  const json& ipam = IpamSection(conf);
  IpamConfig c;
  c.store = ParseStoreConfig(conf);
  c.cni_version = conf.cni_version;
  c.resolv_conf = StringKey(ipam, "resolvConf", "ipam");

  if (auto it = conf.runtime_config.find("ipRanges"); it != conf.runtime_config.end() && !it->is_null()) {
    AppendRangeSets(c.range_sets, *it, "runtimeConfig.ipRanges");
  }
  if (!StringKey(ipam, "subnet", "ipam").empty()) c.range_sets.push_back(RangeSet({ParseRange(ipam, "ipam")}));
  if (auto it = ipam.find("ranges"); it != ipam.end() && !it->is_null()) {
    AppendRangeSets(c.range_sets, *it, "ipam.ranges");
  }
  if (c.range_sets.empty()) Invalid("no IP ranges specified: set ipam.subnet or ipam.ranges");

  int v4 = 0, v6 = 0;
  for (const auto& s : c.range_sets) (s.ranges().front().range_start.is_v4() ? v4 : v6)++;
  if ((v4 > 1 || v6 > 1) && !cni::VersionAtLeast(c.cni_version, "0.3.0")) {
    Invalid("cniVersion \"" + c.cni_version +
            "\" does not support more than 1 range set per address family (needs 0.3.0)");
  }
  for (size_t a = 0; a < c.range_sets.size(); ++a) {
    for (size_t b = a + 1; b < c.range_sets.size(); ++b) {
      if (c.range_sets[a].Overlaps(c.range_sets[b])) {
        Invalid("range set " + std::to_string(a) + " [" + c.range_sets[a].Describe() + "] overlaps with range set " +
                std::to_string(b) + " [" + c.range_sets[b].Describe() + "]");
      }
    }
  }

  if (auto it = ipam.find("routes"); it != ipam.end() && !it->is_null()) {
    if (!it->is_array()) Invalid("ipam.routes must be an array, got " + it->dump());
    for (size_t i = 0; i < it->size(); ++i) {
      try {
        c.routes.push_back(cni::RouteFromJson((*it)[i]));
      } catch (const cni::Error& e) {
        Invalid("ipam.routes[" + std::to_string(i) + "]: " + (*it)[i].dump() + ": " + e.msg());
      }
    }
  }

  c.requested.assign(c.range_sets.size(), std::nullopt);
  for (const Requested& r : CollectRequested(conf, cni_args)) {
    size_t set = 0;
    while (set < c.range_sets.size() && !c.range_sets[set].Contains(r.ip)) ++set;
    if (set == c.range_sets.size()) {
      Invalid(r.source + ": requested IP " + r.ip.ToString() + " is not in any range set");
    }
    const Range* range = c.range_sets[set].RangeFor(r.ip);
    if (r.ip == range->gateway) {
      Invalid(r.source + ": requested IP " + r.ip.ToString() + " is the gateway of range " + range->ToString());
    }
    if (c.requested[set]) {
      Invalid(r.source + ": requested IP " + r.ip.ToString() + " is in range set " + std::to_string(set) +
              " together with requested IP " + c.requested[set]->ToString() + "; one address per range set");
    }
    c.requested[set] = r.ip;
  }
  return c;
}

cni::Dns ParseResolvConf(std::string_view text) {
  cni::Dns dns;
  while (!text.empty()) {
    size_t nl = text.find('\n');
    std::string_view line = text.substr(0, nl);
    text = nl == std::string_view::npos ? std::string_view() : text.substr(nl + 1);
    std::vector<std::string> fields;
    size_t pos = 0;
    while (pos < line.size()) {
      size_t start = line.find_first_not_of(" \t\r\f\v", pos);
      if (start == std::string_view::npos) break;
      size_t end = line.find_first_of(" \t\r\f\v", start);
      if (end == std::string_view::npos) end = line.size();
      fields.emplace_back(line.substr(start, end - start));
      pos = end;
    }
    if (fields.size() < 2 || fields[0][0] == '#' || fields[0][0] == ';') continue;
    if (fields[0] == "nameserver") {
      dns.nameservers.push_back(fields[1]);
    } else if (fields[0] == "domain") {
      dns.domain = fields[1];
    } else if (fields[0] == "search") {
      dns.search.insert(dns.search.end(), fields.begin() + 1, fields.end());
    } else if (fields[0] == "options") {
      dns.options.insert(dns.options.end(), fields.begin() + 1, fields.end());
    }
  }
  return dns;
}

}  // namespace netiface::ipam
