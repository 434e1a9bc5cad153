// The backup and CHECK's comparison, as values.
#include "netiface/tuning/plan.h"

#include <limits>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "netiface/cni/error.h"

namespace netiface::tuning {

Backup PlanBackup(const Config& c, const LinkState& now, const std::map<std::string, std::string>& sysctls_now,
                  const std::optional<Backup>& earlier) {
  Backup b;
  if (c.mac) b.mac = now.mac;
  if (c.promisc) b.promisc = now.promisc;
  if (c.mtu) b.mtu = now.mtu;
  if (c.allmulti) b.allmulti = now.allmulti;
  if (c.txqlen) b.txqlen = now.txqlen;
  for (const auto& [path, value] : c.sysctls) {
    if (auto it = sysctls_now.find(path); it != sysctls_now.end()) b.sysctls[path] = it->second;
  }
  if (earlier) {
    if (earlier->mac) b.mac = earlier->mac;
    if (earlier->promisc) b.promisc = earlier->promisc;
    if (earlier->mtu) b.mtu = earlier->mtu;
    if (earlier->allmulti) b.allmulti = earlier->allmulti;
    if (earlier->txqlen) b.txqlen = earlier->txqlen;
    for (const auto& [path, value] : earlier->sysctls) b.sysctls[path] = value;
  }
  return b;
}

std::string BackupToJson(const Backup& b) {
  nlohmann::ordered_json j = nlohmann::ordered_json::object();  // the reference's field order
  if (b.mac) j["mac"] = *b.mac;
  if (b.promisc) j["promisc"] = *b.promisc;
  if (b.mtu) j["mtu"] = *b.mtu;
  if (b.allmulti) j["allmulti"] = *b.allmulti;
  if (b.txqlen) j["txQLen"] = *b.txqlen;
  if (!b.sysctls.empty()) j["sysctl"] = b.sysctls;
  return j.dump(1);
}

Backup BackupFromJson(std::string_view text) {
  const nlohmann::json j = nlohmann::json::parse(text, nullptr, false);
  auto bad = [&](const std::string& why) { throw cni::Error(cni::kDecodeFailure, "tuning backup: " + why); };
  if (!j.is_object()) bad("not a JSON object");
  Backup b;
  auto get = [&](const char* key) -> const nlohmann::json* {
    auto it = j.find(key);
    return it == j.end() || it->is_null() ? nullptr : &*it;
  };
  if (const auto* v = get("mac")) {
    if (!v->is_string()) bad("mac is not a string");
    if (!v->get<std::string>().empty()) b.mac = v->get<std::string>();
  }
  if (const auto* v = get("promisc")) {
    if (!v->is_boolean()) bad("promisc is not a boolean");
    b.promisc = v->get<bool>();
  }
  if (const auto* v = get("mtu")) {
    if (!v->is_number_integer() || v->get<int64_t>() < 0 || v->get<int64_t>() > std::numeric_limits<int>::max()) {
      bad("mtu is not an MTU");
    }
    if (v->get<int>() != 0) b.mtu = v->get<int>();  // the reference's 0: not saved
  }
  if (const auto* v = get("allmulti")) {
    if (!v->is_boolean()) bad("allmulti is not a boolean");
    b.allmulti = v->get<bool>();
  }
  if (const auto* v = get("txQLen")) {
    if (!v->is_number_unsigned() || v->get<uint64_t>() > std::numeric_limits<uint32_t>::max()) {
      bad("txQLen is not a queue length");
    }
    b.txqlen = v->get<uint32_t>();
  }
  if (const auto* v = get("sysctl")) {
    if (!v->is_object()) bad("sysctl is not an object");
    for (const auto& [path, value] : v->items()) {
      if (!value.is_string()) bad("sysctl " + path + " is not a string");
      b.sysctls[path] = value.get<std::string>();
    }
  }
  return b;
}

std::vector<std::string> Compare(const Config& c, const LinkState& link,
                                 const std::map<std::string, std::optional<std::string>>& sysctls) {
  std::vector<std::string> out;
  for (const auto& [path, want] : c.sysctls) {
    auto it = sysctls.find(path);
    if (it == sysctls.end() || !it->second) {
      out.push_back(fmt::format("sysctl {} does not exist", path));
    } else if (*it->second != want) {
      out.push_back(fmt::format("sysctl {} is {}, configured {}", path, *it->second, want));
    }
  }
  if (c.mac && *c.mac != link.mac) out.push_back(fmt::format("MAC is {}, configured {}", link.mac, *c.mac));
  if (c.promisc != link.promisc) {
    out.push_back(
        fmt::format("promiscuous mode is {}, configured {}", link.promisc ? "on" : "off", c.promisc ? "on" : "off"));
  }
  if (c.mtu && *c.mtu != link.mtu) out.push_back(fmt::format("MTU is {}, configured {}", link.mtu, *c.mtu));
  if (c.allmulti && *c.allmulti != link.allmulti) {
    out.push_back(fmt::format("all-multicast mode is {}, configured {}", link.allmulti ? "on" : "off",
                              *c.allmulti ? "on" : "off"));
  }
  if (c.txqlen && *c.txqlen != link.txqlen) {
    out.push_back(fmt::format("txqueuelen is {}, configured {}", link.txqlen, *c.txqlen));
  }
  return out;
}

}  // namespace netiface::tuning
