// PrintJson: the reference plugins' output bytes (Go's json.MarshalIndent with 4 spaces). nlohmann's
// objects sort their keys, so the struct field order of the Go types is restored from a rank table.
#include <algorithm>
#include <array>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "netiface/cni/result.h"

namespace netiface::cni {
namespace {

using nlohmann::json;

// Key order of the Go structs the reference prints (error, version info, result of every version,
// interface, ip, route, dns). One table serves all: no two structs order a shared key differently.
constexpr std::array<std::string_view, 34> kKeyOrder = {
    "cniVersion", "code",    "msg",        "details",  "supportedVersions", "interfaces", "ips",
    "ip4",        "ip6",     "name",       "mac",      "dst",               "gw",         "mtu",
    "sandbox",    "socketPath", "pciID",   "advmss",   "priority",          "table",      "scope",
    "version",    "interface", "address",  "ip",       "gateway",           "routes",     "dns",
    "nameservers", "domain", "search",     "options",  "containerID",       "ifname"};

size_t KeyRank(const std::string& key) {
  auto it = std::find(kKeyOrder.begin(), kKeyOrder.end(), key);
  return static_cast<size_t>(it - kKeyOrder.begin());
}

// A JSON string literal with Go's HTML-safe escapes (<, >, & as \u003c, \u003e, \u0026).
void AppendString(const std::string& s, std::string& out) {
  // Names, addresses and MACs: printable ASCII with nothing to escape, copied as they are.
  if (std::all_of(s.begin(), s.end(), [](char c) {
        return c >= 0x20 && c < 0x7f && c != '"' && c != '\\' && c != '<' && c != '>' && c != '&';
      })) {
    out += '"';
    out += s;
    out += '"';
    return;
  }
  std::string lit = json(s).dump(-1, ' ', false, json::error_handler_t::replace);
  for (char c : lit) {
    switch (c) {
      case '<': out += "\\u003c"; break;
      case '>': out += "\\u003e"; break;
      case '&': out += "\\u0026"; break;
      default: out += c;
    }
  }
}

void Append(const json& j, int depth, std::string& out) {
  const std::string indent(static_cast<size_t>(depth + 1) * 4, ' ');
  const std::string close_indent(static_cast<size_t>(depth) * 4, ' ');
  if (j.is_object()) {
    if (j.empty()) {
      out += "{}";
      return;
    }
    std::vector<const std::string*> keys;
    for (const auto& [k, v] : j.items()) keys.push_back(&k);
    std::stable_sort(keys.begin(), keys.end(), [](const std::string* a, const std::string* b) {
      size_t ra = KeyRank(*a), rb = KeyRank(*b);
      return ra != rb ? ra < rb : *a < *b;
    });
    out += "{\n";
    for (size_t i = 0; i < keys.size(); ++i) {
      out += indent;
      AppendString(*keys[i], out);
      out += ": ";
      Append(j.at(*keys[i]), depth + 1, out);
      out += i + 1 < keys.size() ? ",\n" : "\n";
    }
    out += close_indent + "}";
  } else if (j.is_array()) {
    if (j.empty()) {
      out += "[]";
      return;
    }
    out += "[\n";
    for (size_t i = 0; i < j.size(); ++i) {
      out += indent;
      Append(j[i], depth + 1, out);
      out += i + 1 < j.size() ? ",\n" : "\n";
    }
    out += close_indent + "]";
  } else if (j.is_string()) {
    AppendString(j.get_ref<const std::string&>(), out);
  } else {
    out += j.dump(-1, ' ', false, json::error_handler_t::replace);
  }
}

}  // namespace

std::string PrintJson(const json& j) {
  std::string out;
  Append(j, 0, out);
  return out;
}

}  // namespace netiface::cni
