#include "netiface/cni/result.h"

#include "netiface/cni/error.h"
#include "netiface/cni/version.h"

namespace netiface::cni {
namespace {

using nlohmann::json;

// The result shapes the spec has had: 0.1.0/0.2.0, 0.3.0..0.4.0 (ips[].version), 1.0.0+.
enum class Shape { kV02, kV04, kV10 };

struct VersionShape {
  Shape shape;
  bool v11;  // 1.1.0 fields (interface mtu/socketPath/pciID, route mtu/advmss/...)
};

VersionShape ShapeOf(std::string_view version) {
  if (!IsSupportedVersion(version)) {
    throw Error(kIncompatibleVersion, "unsupported CNI result version \"" + std::string(version) + "\"");
  }
  if (CompareVersions(version, "0.3.0") < 0) return {Shape::kV02, false};
  if (CompareVersions(version, "1.0.0") < 0) return {Shape::kV04, false};
  return {Shape::kV10, CompareVersions(version, "1.1.0") >= 0};
}

[[noreturn]] void Bad(const std::string& what) { throw Error(kDecodeFailure, "failed to parse result: " + what); }

// The value of `key`, or nullptr when it is absent or null (Go leaves the field at its zero value).
const json* Field(const json& j, const char* key) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return nullptr;
  return &*it;
}

std::string OptString(const json& j, const char* key) {
  const json* v = Field(j, key);
  if (!v) return {};
  if (!v->is_string()) Bad(std::string("\"") + key + "\" must be a string");
  return v->get<std::string>();
}

std::optional<int> OptInt(const json& j, const char* key, bool zero_is_absent) {
  const json* v = Field(j, key);
  if (!v) return std::nullopt;
  if (!v->is_number_integer()) Bad(std::string("\"") + key + "\" must be an integer");
  auto i = v->get<int64_t>();
  if (i < INT32_MIN || i > INT32_MAX) Bad(std::string("\"") + key + "\" is out of range");
  if (zero_is_absent && i == 0) return std::nullopt;
  return static_cast<int>(i);
}

std::vector<std::string> OptStrings(const json& j, const char* key) {
  std::vector<std::string> out;
  const json* v = Field(j, key);
  if (!v) return out;
  if (!v->is_array()) Bad(std::string("\"") + key + "\" must be an array of strings");
  for (const auto& e : *v) {
    if (!e.is_string()) Bad(std::string("\"") + key + "\" must be an array of strings");
    out.push_back(e.get<std::string>());
  }
  return out;
}

// An address ("" counts as absent, as Go's net.IP does).
std::optional<IpAddr> OptAddr(const json& j, const char* key) {
  std::string s = OptString(j, key);
  if (s.empty()) return std::nullopt;
  auto a = IpAddr::Parse(s);
  if (!a) Bad(std::string("invalid IP address in \"") + key + "\": " + s);
  return a;
}

IpNet ReqNet(const json& j, const char* key) {
  std::string s = OptString(j, key);
  if (s.empty()) Bad(std::string("missing \"") + key + "\"");
  auto n = IpNet::Parse(s);
  if (!n) Bad(std::string("invalid CIDR in \"") + key + "\": " + s);
  return *n;
}

const json* OptArray(const json& j, const char* key) {
  const json* v = Field(j, key);
  if (v && !v->is_array()) Bad(std::string("\"") + key + "\" must be an array");
  return v;
}

void RequireObject(const json& j, const char* what) {
  if (!j.is_object()) Bad(std::string(what) + " must be an object");
}

Route StripRoute11(Route r) {
  r.mtu = r.advmss = r.priority = r.table = r.scope = std::nullopt;
  return r;
}

std::vector<Route> ParseRoutes(const json& j, const char* key, bool v11) {
  std::vector<Route> out;
  if (const json* arr = OptArray(j, key)) {
    for (const auto& e : *arr) out.push_back(v11 ? RouteFromJson(e) : StripRoute11(RouteFromJson(e)));
  }
  return out;
}

void ParseV02Ip(const json& j, const char* key, Result& r, std::vector<Route>& routes) {
  const json* v = Field(j, key);
  if (!v) return;
  RequireObject(*v, key);
  IpConfig ip;
  ip.address = ReqNet(*v, "ip");
  ip.gateway = OptAddr(*v, "gateway");
  r.ips.push_back(ip);
  auto rs = ParseRoutes(*v, "routes", false);
  routes.insert(routes.end(), rs.begin(), rs.end());
}

json V02Ip(const IpConfig& ip, const std::vector<Route>& routes, std::string_view version) {
  json o = json::object();
  o["ip"] = ip.address.ToString();
  if (ip.gateway) o["gateway"] = ip.gateway->ToString();
  json rs = json::array();
  for (const auto& rt : routes) {
    if (rt.dst.family() == ip.address.family()) rs.push_back(RouteToJson(rt, version));
  }
  if (!rs.empty()) o["routes"] = rs;
  return o;
}

}  // namespace

json DnsToJson(const Dns& d) {
  json o = json::object();
  if (!d.nameservers.empty()) o["nameservers"] = d.nameservers;
  if (!d.domain.empty()) o["domain"] = d.domain;
  if (!d.search.empty()) o["search"] = d.search;
  if (!d.options.empty()) o["options"] = d.options;
  return o;
}

Dns DnsFromJson(const json& j) {
  Dns d;
  if (j.is_null()) return d;
  RequireObject(j, "dns");
  d.nameservers = OptStrings(j, "nameservers");
  d.domain = OptString(j, "domain");
  d.search = OptStrings(j, "search");
  d.options = OptStrings(j, "options");
  return d;
}

Route RouteFromJson(const json& j) {
  RequireObject(j, "route");
  Route r;
  r.dst = ReqNet(j, "dst");
  r.gw = OptAddr(j, "gw");
  r.mtu = OptInt(j, "mtu", true);
  r.advmss = OptInt(j, "advmss", true);
  r.priority = OptInt(j, "priority", true);
  r.table = OptInt(j, "table", false);
  r.scope = OptInt(j, "scope", false);
  return r;
}

json RouteToJson(const Route& r, std::string_view version) {
  json o = json::object();
  o["dst"] = r.dst.ToString();
  if (r.gw) o["gw"] = r.gw->ToString();
  if (IsSupportedVersion(version) && CompareVersions(version, "1.1.0") >= 0) {
    if (r.mtu && *r.mtu != 0) o["mtu"] = *r.mtu;
    if (r.advmss && *r.advmss != 0) o["advmss"] = *r.advmss;
    if (r.priority && *r.priority != 0) o["priority"] = *r.priority;
    if (r.table) o["table"] = *r.table;
    if (r.scope) o["scope"] = *r.scope;
  }
  return o;
}

Result ParseResult(const json& j, std::string_view version) {
  VersionShape vs = ShapeOf(version);
  RequireObject(j, "result");
  Result r;
  if (vs.shape == Shape::kV02) {
    std::vector<Route> routes;
    ParseV02Ip(j, "ip4", r, routes);
    ParseV02Ip(j, "ip6", r, routes);
    r.routes = std::move(routes);
  } else {
    if (const json* arr = OptArray(j, "interfaces")) {
      for (const auto& e : *arr) {
        RequireObject(e, "interface");
        Interface i;
        i.name = OptString(e, "name");
        i.mac = OptString(e, "mac");
        i.sandbox = OptString(e, "sandbox");
        if (vs.v11) {
          i.mtu = OptInt(e, "mtu", true);
          i.socket_path = OptString(e, "socketPath");
          i.pci_id = OptString(e, "pciID");
        }
        r.interfaces.push_back(std::move(i));
      }
    }
    if (const json* arr = OptArray(j, "ips")) {
      for (const auto& e : *arr) {
        RequireObject(e, "ip");
        IpConfig ip;
        ip.address = ReqNet(e, "address");
        ip.gateway = OptAddr(e, "gateway");
        ip.interface = OptInt(e, "interface", false);
        if (ip.interface && *ip.interface < 0) Bad("negative interface index");
        if (vs.shape == Shape::kV04) {
          std::string v = OptString(e, "version");
          if (!v.empty() && v != "4" && v != "6") Bad("invalid ip version \"" + v + "\"");
        }
        r.ips.push_back(ip);
      }
    }
    r.routes = ParseRoutes(j, "routes", vs.v11);
  }
  if (const json* d = Field(j, "dns")) r.dns = DnsFromJson(*d);
  return r;
}

Result ParseResult(const json& j) {
  if (!j.is_object()) Bad("result must be an object");
  std::string version = OptString(j, "cniVersion");
  return ParseResult(j, version.empty() ? "0.1.0" : version);
}

bool ResultNeedsAnAddress(std::string_view version) { return ShapeOf(version).shape == Shape::kV02; }

json ResultToJson(const Result& r, std::string_view version) {
  VersionShape vs = ShapeOf(version);
  json o = json::object();
  o["cniVersion"] = std::string(version);
  if (vs.shape == Shape::kV02) {
    const IpConfig* ip4 = nullptr;
    const IpConfig* ip6 = nullptr;
    for (const auto& ip : r.ips) {
      if (ip.address.addr().is_v4() && !ip4) ip4 = &ip;
      if (!ip.address.addr().is_v4() && !ip6) ip6 = &ip;
    }
    if (!ip4 && !ip6) throw Error(kIncompatibleVersion, "cannot convert: no valid IP addresses");
    if (ip4) o["ip4"] = V02Ip(*ip4, r.routes, version);
    if (ip6) o["ip6"] = V02Ip(*ip6, r.routes, version);
    o["dns"] = DnsToJson(r.dns);
    return o;
  }
  if (!r.interfaces.empty()) {
    json arr = json::array();
    for (const auto& i : r.interfaces) {
      json e = json::object();
      e["name"] = i.name;
      if (!i.mac.empty()) e["mac"] = i.mac;
      if (!i.sandbox.empty()) e["sandbox"] = i.sandbox;
      if (vs.v11) {
        if (i.mtu && *i.mtu != 0) e["mtu"] = *i.mtu;
        if (!i.socket_path.empty()) e["socketPath"] = i.socket_path;
        if (!i.pci_id.empty()) e["pciID"] = i.pci_id;
      }
      arr.push_back(std::move(e));
    }
    o["interfaces"] = std::move(arr);
  }
  if (!r.ips.empty()) {
    json arr = json::array();
    for (const auto& ip : r.ips) {
      json e = json::object();
      if (vs.shape == Shape::kV04) e["version"] = ip.address.addr().is_v4() ? "4" : "6";
      if (ip.interface) e["interface"] = *ip.interface;
      e["address"] = ip.address.ToString();
      if (ip.gateway) e["gateway"] = ip.gateway->ToString();
      arr.push_back(std::move(e));
    }
    o["ips"] = std::move(arr);
  }
  if (!r.routes.empty()) {
    json arr = json::array();
    for (const auto& rt : r.routes) arr.push_back(RouteToJson(rt, version));
    o["routes"] = std::move(arr);
  }
  o["dns"] = DnsToJson(r.dns);
  return o;
}

}  // namespace netiface::cni
