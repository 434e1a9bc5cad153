#include "netiface/cli/attachments.h"

#include <algorithm>
#include <set>

#include "netiface/cli/table.h"
#include "netiface/cni/error.h"
#include "netiface/cni/result.h"
#include "netiface/cni/skel.h"

namespace netiface::cli {
namespace {

std::string OrDash(const std::string& s) { return s.empty() ? "-" : s; }

std::string Join(const std::vector<std::string>& v) {
  std::string out;
  for (const auto& s : v) out += (out.empty() ? "" : ",") + s;
  return out;
}

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t' || s.front() == '\r')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) s.remove_suffix(1);
  return s;
}

}  // namespace

std::vector<std::string> CachedAddresses(const cni::CacheEntry& e) {
  std::vector<std::string> out;
  if (!e.result.is_object()) return out;
  try {
    for (const auto& ip : cni::ParseResult(e.result).ips) out.push_back(ip.address.ToString());
  } catch (const cni::Error&) {
    return {};
  }
  return out;
}

std::vector<cni::CacheEntry> AttachmentsOf(std::vector<cni::CacheEntry> cached, const std::string& network) {
  std::erase_if(cached, [&](const cni::CacheEntry& e) { return !network.empty() && e.network_name != network; });
  std::sort(cached.begin(), cached.end(), [](const cni::CacheEntry& a, const cni::CacheEntry& b) {
    return std::tie(a.network_name, a.container_id, a.ifname) < std::tie(b.network_name, b.container_id, b.ifname);
  });
  return cached;
}

std::string FormatAttachmentTable(const std::vector<cni::CacheEntry>& entries) {
  std::vector<std::vector<std::string>> rows = {{"NETWORK", "CONTAINER", "IFNAME", "NETNS", "ADDRESSES"}};
  for (const auto& e : entries) {
    rows.push_back({e.network_name, e.container_id, e.ifname, OrDash(e.netns), OrDash(Join(CachedAddresses(e)))});
  }
  return FormatColumns(rows);
}

nlohmann::json AttachmentsToJson(const std::vector<cni::CacheEntry>& entries) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& e : entries) {
    out.push_back({{"network", e.network_name},
                   {"containerId", e.container_id},
                   {"ifname", e.ifname},
                   {"netns", e.netns},
                   {"addresses", CachedAddresses(e)}});
  }
  return out;
}

std::vector<cni::CacheEntry> GcPlan::Stale() const {
  std::vector<cni::CacheEntry> out;
  for (const auto& d : decisions) {
    if (d.del) out.push_back(d.entry);
  }
  return out;
}

GcPlan PlanGc(const std::vector<cni::CacheEntry>& cached, const std::string& network, const GcOptions& o,
              const std::function<bool(const std::string& netns)>& netns_exists) {
  if (o.valid.empty() && !o.live && !o.all_stale) {
    throw cni::Error(cni::kInvalidEnv,
                     "no valid attachments given: name them (NETNS, --valid, --valid-file), or use --live to keep "
                     "every attachment whose netns exists, or --all-stale to delete every cached attachment");
  }
  GcPlan plan;
  plan.valid = o.valid;
  const std::set<cni::Attachment> listed(o.valid.begin(), o.valid.end());
  for (const auto& e : cached) {
    if (e.network_name != network) continue;
    GcDecision d{e, false, ""};
    if (listed.count({e.container_id, e.ifname})) {
      d.why = "valid";
    } else if (e.netns.empty()) {
      d.del = o.all_stale;
      d.why = o.all_stale ? "netns unknown (older cache entry), --all-stale"
                          : "netns unknown (older cache entry): only --all-stale deletes it";
    } else if (o.live && netns_exists(e.netns)) {
      d.why = "netns exists";
    } else {
      d.del = true;
      d.why = o.live ? "netns gone" : "not valid";
    }
    if (!d.del && !listed.count({e.container_id, e.ifname})) plan.valid.push_back({e.container_id, e.ifname});
    plan.decisions.push_back(std::move(d));
  }
  return plan;
}

std::string FormatGcPlan(const GcPlan& plan, bool gc_plugins) {
  std::vector<std::vector<std::string>> rows = {{"ACTION", "CONTAINER", "IFNAME", "NETNS", "WHY"}};
  for (const auto& d : plan.decisions) {
    rows.push_back({d.del ? "del" : "keep", d.entry.container_id, d.entry.ifname, OrDash(d.entry.netns), d.why});
  }
  std::string out = FormatColumns(rows);
  if (gc_plugins) {
    out += "then GC to every plugin with " + std::to_string(plan.valid.size()) + " valid attachment(s)";
    for (size_t i = 0; i < plan.valid.size(); ++i) {
      out += (i ? ", " : ": ") + plan.valid[i].container_id + "/" + plan.valid[i].ifname;
    }
    out += "\n";
  }
  return out;
}

cni::Attachment ParseAttachment(std::string_view text, const std::string& default_ifname) {
  const size_t slash = text.find('/');
  cni::Attachment a{std::string(text.substr(0, slash)),
                    slash == std::string_view::npos ? default_ifname : std::string(text.substr(slash + 1))};
  cni::ValidateContainerId(a.container_id);
  cni::ValidateIfname(a.ifname);
  return a;
}

std::vector<cni::Attachment> ParseValidList(std::string_view text, const std::string& default_ifname) {
  std::vector<cni::Attachment> out;
  int line_no = 0;
  while (!text.empty()) {
    const size_t nl = text.find('\n');
    std::string_view line = Trim(text.substr(0, nl));
    text.remove_prefix(nl == std::string_view::npos ? text.size() : nl + 1);
    ++line_no;
    if (line.empty() || line.front() == '#') continue;
    try {
      out.push_back(ParseAttachment(line, default_ifname));
    } catch (const cni::Error& e) {
      throw cni::Error(cni::kInvalidEnv, "line " + std::to_string(line_no) + ": " + e.msg(), std::string(line));
    }
  }
  return out;
}

}  // namespace netiface::cli
