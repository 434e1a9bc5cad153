#include "netiface/cli/ipam_stores.h"

#include <algorithm>

#include "netiface/cli/table.h"
#include "netiface/cni/error.h"
#include "netiface/flannel/delegate.h"
#include "netiface/flannel/subnet_env.h"
#include "netiface/ipam/config.h"

namespace netiface::cli {
namespace {

using nlohmann::json;

// The plugin's config as the runtime hands it over: the list's name and version injected.
cni::NetConf PluginConf(const cni::NetConfList& list, json plugin) {
  plugin["name"] = list.name;
  plugin["cniVersion"] = list.cni_version;
  return cni::ParseNetConf(plugin.dump());
}

IpamStore StoreOf(const cni::NetConfList& list, const std::string& plugin, const json& ipam) {
  IpamStore s;
  s.plugin = plugin;
  auto dir = ipam.find("dataDir");
  s.data_dir = dir != ipam.end() && dir->is_string() && !dir->get<std::string>().empty()
                   ? dir->get<std::string>()
                   : std::string(ipam::kDefaultDataDir);
  try {
    s.range_sets = ipam::ParseIpamConfig(PluginConf(list, {{"type", plugin}, {"ipam", ipam}}), "").range_sets;
  } catch (const cni::Error& e) {
    s.why_unknown = e.what();
  }
  return s;
}

}  // namespace

std::vector<IpamStore> IpamStoresOf(const cni::NetConfList& list, const FileReader& read) {
  std::vector<IpamStore> out;
  for (const json& p : list.plugins) {
    const std::string type = p.value("type", "");
    if (type == "flannel") {
      const flannel::Config fc = flannel::ParseConfig(PluginConf(list, p));
      json ipam = fc.ipam.is_object() ? fc.ipam : json::object();
      if (!ipam.contains("type")) ipam["type"] = "host-local";
      std::string why;
      try {
        if (std::optional<std::string> text = read(fc.subnet_file)) {
          ipam = flannel::RenderDelegate(fc, flannel::ParseSubnetEnv(*text, fc.subnet_file))["ipam"];
        } else {
          why = fc.subnet_file + " does not exist (no lease yet)";
        }
      } catch (const cni::Error& e) {
        why = e.what();
      }
      if (ipam.value("type", "") != "host-local") continue;
      IpamStore s = StoreOf(list, type, ipam);
      if (!why.empty()) s.why_unknown = why;
      out.push_back(std::move(s));
      continue;
    }
    auto ipam = p.find("ipam");
    if (ipam == p.end() || !ipam->is_object() || ipam->value("type", "") != "host-local") continue;
    out.push_back(StoreOf(list, type, *ipam));
  }
  return out;
}

std::vector<RangeUsage> UsageOf(const IpamStore& store, const std::vector<Reservation>& reservations) {
  std::vector<RangeUsage> out;
  for (const ipam::RangeSet& rs : store.range_sets) {
    RangeUsage u;
    u.range_set = rs.Describe();
    u.capacity = rs.Capacity();
    u.reserved = static_cast<uint64_t>(std::count_if(reservations.begin(), reservations.end(),
                                                     [&](const Reservation& r) { return rs.Contains(r.address); }));
    u.free = u.capacity > u.reserved ? u.capacity - u.reserved : 0;
    out.push_back(std::move(u));
  }
  return out;
}

std::string FormatUsageTable(const std::vector<RangeUsage>& usage) {
  std::vector<std::vector<std::string>> rows = {{"RANGE SET", "CAPACITY", "RESERVED", "FREE"}};
  for (const auto& u : usage) {
    rows.push_back({u.range_set, std::to_string(u.capacity), std::to_string(u.reserved), std::to_string(u.free)});
  }
  return FormatColumns(rows);
}

json UsageToJson(const std::vector<RangeUsage>& usage) {
  json out = json::array();
  for (const auto& u : usage) {
    out.push_back({{"rangeSet", u.range_set}, {"capacity", u.capacity}, {"reserved", u.reserved}, {"free", u.free}});
  }
  return out;
}

}  // namespace netiface::cli
