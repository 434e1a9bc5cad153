#include "node_state.h"

#include <algorithm>

namespace netiface::testing {
namespace {

bool HasFlag(const nlohmann::json& obj, const char* key, const std::string& flag) {
  auto it = obj.find(key);
  if (it == obj.end()) return false;
  if (it->is_string()) return it->get<std::string>() == flag;
  if (!it->is_array()) return false;
  return std::any_of(it->begin(), it->end(), [&](const nlohmann::json& f) { return f.is_string() && f == flag; });
}

std::vector<std::string> Sorted(std::vector<std::string> v) {
  std::sort(v.begin(), v.end());
  return v;
}

}  // namespace

std::optional<VxlanLink> ReadVxlanLink(const TempNetns& ns, const std::string& dev) {
  nlohmann::json links = ns.IpJson("-d addr show dev " + dev);
  if (!links.is_array() || links.size() != 1) return std::nullopt;
  const nlohmann::json& l = links[0];
  const nlohmann::json info = l.value("linkinfo", nlohmann::json::object());
  if (info.value("info_kind", "") != "vxlan") return std::nullopt;
  const nlohmann::json data = info.value("info_data", nlohmann::json::object());
  VxlanLink v;
  v.ifindex = l.value("ifindex", 0);
  v.mac = l.value("address", "");
  v.mtu = l.value("mtu", 0);
  v.vni = data.value("id", int64_t{-1});
  v.local = data.contains("local") ? data.value("local", "") : data.value("local6", "");
  v.port = data.value("port", 0);
  v.learning = data.value("learning", true);
  for (const auto& a : l.value("addr_info", nlohmann::json::array())) {
    if (a.value("scope", "") != "global") continue;
    v.addresses.push_back(a.value("local", "") + "/" + std::to_string(a.value("prefixlen", -1)));
  }
  std::sort(v.addresses.begin(), v.addresses.end());
  return v;
}

std::string FdbText(const TempNetns& ns, const std::string& dev) {
  RunResult r = ns.Sh("bridge fdb show dev " + dev);
  return r.exit_code == 0 ? r.out : "";
}

std::vector<std::string> FdbEntries(const TempNetns& ns, const std::string& dev) {
  RunResult r = ns.Sh("bridge -j fdb show dev " + dev);
  nlohmann::json j = nlohmann::json::parse(r.out, nullptr, false);
  std::vector<std::string> out;
  if (r.exit_code != 0 || !j.is_array()) return out;
  for (const auto& e : j) {
    std::string line = e.value("mac", "") + " dst " + e.value("dst", "-");
    if (HasFlag(e, "flags", "self")) line += " self";
    if (HasFlag(e, "state", "permanent")) line += " permanent";
    out.push_back(line);
  }
  return Sorted(out);
}

std::vector<std::string> PermanentNeighbours(const TempNetns& ns, const std::string& dev) {
  std::vector<std::string> out;
  for (const char* family : {"-4", "-6"}) {
    for (const auto& n : ns.IpJson(std::string(family) + " neigh show dev " + dev + " nud permanent")) {
      out.push_back(n.value("dst", "") + " lladdr " + n.value("lladdr", "-"));
    }
  }
  return Sorted(out);
}

std::vector<std::string> ProtoRoutes(const TempNetns& ns, int family, int protocol) {
  std::vector<std::string> out;
  for (const auto& r : ns.IpJson("-" + std::to_string(family) + " route show proto " + std::to_string(protocol))) {
    std::string line = r.value("dst", "");
    if (r.contains("gateway")) line += " via " + r.value("gateway", "");
    line += " dev " + r.value("dev", "");
    if (HasFlag(r, "flags", "onlink")) line += " onlink";
    out.push_back(line);
  }
  return Sorted(out);
}

}  // namespace netiface::testing
