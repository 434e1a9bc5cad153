#include "netiface/cli/leases.h"

#include <algorithm>
#include <sstream>

#include <fmt/format.h>

#include "netiface/cli/table.h"

namespace netiface::cli {
namespace {

std::string OrDash(const std::optional<cni::IpAddr>& a) { return a ? a->ToString() : "-"; }

}  // namespace

std::string FormatTtl(int64_t s) {
  if (s < 0) return "expired";
  if (s == kNeverExpires) return "never";
  if (s >= 3600) return fmt::format("{}h{}m{}s", s / 3600, s % 3600 / 60, s % 60);
  if (s >= 60) return fmt::format("{}m{}s", s / 60, s % 60);
  return fmt::format("{}s", s);
}

std::string FormatLeaseTable(const std::vector<LeaseRow>& rows) {
  bool v6 = std::any_of(rows.begin(), rows.end(), [](const LeaseRow& r) { return r.lease.subnet.v6.has_value(); });
  std::vector<std::vector<std::string>> cells;
  cells.push_back({"SUBNET", "PUBLIC-IP", "BACKEND", "TIME-LEFT"});
  if (v6) cells.back().insert(cells.back().begin() + 1, "IPV6-SUBNET");
  for (const auto& r : rows) {
    std::vector<std::string> row = {r.lease.subnet.v4.ToString(), OrDash(r.lease.attrs.public_ip),
                                    r.lease.attrs.backend_type.empty() ? "-" : r.lease.attrs.backend_type,
                                    FormatTtl(r.ttl_left)};
    if (v6) row.insert(row.begin() + 1, r.lease.subnet.v6 ? r.lease.subnet.v6->ToString() : "-");
    cells.push_back(std::move(row));
  }
  return FormatColumns(cells);
}

nlohmann::json LeasesToJson(const std::vector<LeaseRow>& rows) {
  nlohmann::json out = nlohmann::json::array();
  auto ip = [](const std::optional<cni::IpAddr>& a) { return a ? nlohmann::json(a->ToString()) : nlohmann::json(); };
  for (const auto& r : rows) {
    const agent::Lease& l = r.lease;
    out.push_back({{"subnet", l.subnet.v4.ToString()},
                   {"ipv6Subnet", l.subnet.v6 ? nlohmann::json(l.subnet.v6->ToString()) : nlohmann::json()},
                   {"publicIP", ip(l.attrs.public_ip)},
                   {"publicIPv6", ip(l.attrs.public_ipv6)},
                   {"backendType", l.attrs.backend_type},
                   {"backendData", l.attrs.backend_data},
                   {"ttlSeconds", r.ttl_left == kNeverExpires ? nlohmann::json() : nlohmann::json(r.ttl_left)},
                   {"etcdLease", fmt::format("{:x}", l.etcd_lease)}});
  }
  return out;
}

}  // namespace netiface::cli
