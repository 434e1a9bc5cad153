// Go's encoding/json (go_json.h): GoMarshal (json.Marshal) and PrintJson, the reference plugins' output
// bytes (json.MarshalIndent with 4 spaces). nlohmann's objects sort their keys, so PrintJson restores
// the struct field order of the Go types from a rank table. Both write strings with AppendGoString.
#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "netiface/cni/error.h"
#include "netiface/cni/go_json.h"
#include "netiface/cni/result.h"

namespace netiface::cni {
namespace {

using nlohmann::json;

void AppendHexEscape(std::string& out, unsigned cp) {
  char buf[8];
  std::snprintf(buf, sizeof buf, "\\u%04x", cp);
  out += buf;
}

// Length of the valid UTF-8 sequence at s[i], or 0 when it is invalid.
size_t Utf8SeqLen(std::string_view s, size_t i, unsigned& cp) {
  auto c = static_cast<unsigned char>(s[i]);
  size_t n = c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : c >= 0xC0 ? 2 : 0;
  if (n == 0 || c >= 0xF8 || i + n > s.size()) return 0;
  cp = c & (0x7F >> n);
  for (size_t k = 1; k < n; ++k) {
    auto cc = static_cast<unsigned char>(s[i + k]);
    if ((cc & 0xC0) != 0x80) return 0;
    cp = (cp << 6) | (cc & 0x3F);
  }
  static constexpr unsigned kMin[] = {0, 0, 0x80, 0x800, 0x10000};
  if (cp < kMin[n] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return 0;
  return n;
}

}  // namespace

void AppendGoString(std::string& out, std::string_view s) {
  out += '"';
  for (size_t i = 0; i < s.size();) {
    auto c = static_cast<unsigned char>(s[i]);
    if (c < 0x80) {
      switch (c) {
        case '"':
          out += "\\\"";
          break;
        case '\\':
          out += "\\\\";
          break;
        case '\b':
          out += "\\b";
          break;
        case '\f':
          out += "\\f";
          break;
        case '\n':
          out += "\\n";
          break;
        case '\r':
          out += "\\r";
          break;
        case '\t':
          out += "\\t";
          break;
        default:
          if (c < 0x20 || c == '<' || c == '>' || c == '&') {
            AppendHexEscape(out, c);
          } else {
            out += static_cast<char>(c);
          }
      }
      ++i;
      continue;
    }
    unsigned cp = 0;
    size_t n = Utf8SeqLen(s, i, cp);
    if (n == 0) {
      out += "\\ufffd";
      ++i;
    } else if (cp == 0x2028 || cp == 0x2029) {
      AppendHexEscape(out, cp);
      i += n;
    } else {
      out.append(s.substr(i, n));
      i += n;
    }
  }
  out += '"';
}

namespace {

// Go's float64 encoding: shortest round-trip, fixed notation for 1e-6 <= |f| < 1e21.
void AppendGoFloat(std::string& out, double f) {
  if (!std::isfinite(f)) throw Error(kInternal, "cannot encode a non-finite number");
  char buf[64];
  double a = std::fabs(f);
  bool fixed = a == 0 || (a >= 1e-6 && a < 1e21);
  auto r = std::to_chars(buf, buf + sizeof buf, f, fixed ? std::chars_format::fixed : std::chars_format::scientific);
  std::string s(buf, r.ptr);
  if (!fixed) {
    // "1e-07" -> "1e-7", as Go does.
    auto e = s.find('e');
    if (e != std::string::npos && e + 3 < s.size() && s[e + 2] == '0') {
      s.erase(e + 2, 1);
    }
  }
  out += s;
}

}  // namespace

void AppendGoJson(std::string& out, const json& j) {
  switch (j.type()) {
    case json::value_t::null:
      out += "null";
      break;
    case json::value_t::boolean:
      out += j.get<bool>() ? "true" : "false";
      break;
    case json::value_t::number_integer:
      out += std::to_string(j.get<int64_t>());
      break;
    case json::value_t::number_unsigned:
      out += std::to_string(j.get<uint64_t>());
      break;
    case json::value_t::number_float:
      AppendGoFloat(out, j.get<double>());
      break;
    case json::value_t::string:
      AppendGoString(out, j.get_ref<const std::string&>());
      break;
    case json::value_t::array: {
      out += '[';
      bool first = true;
      for (const auto& e : j) {
        if (!first) out += ',';
        first = false;
        AppendGoJson(out, e);
      }
      out += ']';
      break;
    }
    case json::value_t::object: {
      // nlohmann's default object is a std::map: iteration is already in Go's sorted key order.
      out += '{';
      bool first = true;
      for (const auto& [k, v] : j.items()) {
        if (!first) out += ',';
        first = false;
        AppendGoString(out, k);
        out += ':';
        AppendGoJson(out, v);
      }
      out += '}';
      break;
    }
    default:
      throw Error(kInternal, "cannot encode a binary JSON value");
  }
}

std::string GoMarshal(const json& j) {
  std::string out;
  AppendGoJson(out, j);
  return out;
}

namespace {

// Key order of the Go structs the reference prints (error, version info, result of every version,
// interface, ip, route, dns). One table serves all: no two structs order a shared key differently.
constexpr std::array<std::string_view, 34> kKeyOrder = {
    "cniVersion", "code",    "msg",         "details",     "supportedVersions",
    "interfaces", "ips",     "ip4",         "ip6",         "name",
    "mac",        "dst",     "gw",          "mtu",         "sandbox",
    "socketPath", "pciID",   "advmss",      "priority",    "table",
    "scope",      "version", "interface",   "address",     "ip",
    "gateway",    "routes",  "dns",         "nameservers", "domain",
    "search",     "options", "containerID", "ifname"};

size_t KeyRank(const std::string& key) {
  auto it = std::find(kKeyOrder.begin(), kKeyOrder.end(), key);
  return static_cast<size_t>(it - kKeyOrder.begin());
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
      AppendGoString(out, *keys[i]);
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
    AppendGoString(out, j.get_ref<const std::string&>());
  } else {
    AppendGoJson(out, j);
  }
}

}  // namespace

std::string PrintJson(const json& j) {
  std::string out;
  Append(j, 0, out);
  return out;
}

}  // namespace netiface::cni
