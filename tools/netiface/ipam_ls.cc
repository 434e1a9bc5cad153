#include "netiface/cli/ipam_ls.h"

#include <algorithm>
#include <filesystem>
#include <system_error>

#include "netiface/cli/table.h"
#include "netiface/cni/error.h"
#include "netiface/cni/file.h"

namespace netiface::cli {
namespace {

namespace fs = std::filesystem;

std::string Trim(std::string s) {
  const char* ws = " \t\r\n\v\f";
  s.erase(0, s.find_first_not_of(ws));
  auto last = s.find_last_not_of(ws);
  s.erase(last == std::string::npos ? 0 : last + 1);
  return s;
}

// Names of the entries of `dir` (sorted); empty when it does not exist.
std::vector<fs::directory_entry> Entries(const std::string& dir) {
  std::vector<fs::directory_entry> out;
  std::error_code ec;
  auto it = fs::directory_iterator(dir, ec);
  if (ec == std::errc::no_such_file_or_directory) return out;
  for (; !ec && it != fs::directory_iterator(); it.increment(ec)) out.push_back(*it);
  if (ec) throw cni::Error(cni::kIoFailure, "failed to read " + dir, ec.message());
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.path() < b.path(); });
  return out;
}

void ListNetwork(const std::string& dir, const std::string& network, std::vector<Reservation>& out) {
  for (const auto& e : Entries(dir)) {
    std::string name = e.path().filename().string();
    if (name.empty() || name[0] == '.' || name == "lock" || name.rfind("last_reserved_ip", 0) == 0) continue;
    std::error_code ec;
    if (!e.is_regular_file(ec)) continue;
    auto addr = cni::IpAddr::Parse(name);
    if (!addr) continue;
    auto content = cni::ReadFileIfExists(e.path().string());
    if (!content) continue;  // released while we were listing
    out.push_back(ParseReservation(network, *addr, *content));
  }
}

}  // namespace

Reservation ParseReservation(const std::string& network, const cni::IpAddr& address, const std::string& content) {
  Reservation r;
  r.network = network;
  r.address = address;
  auto nl = content.find('\n');
  if (nl == std::string::npos) {
    r.container_id = Trim(content);
  } else {
    r.container_id = Trim(content.substr(0, nl));
    r.ifname = Trim(content.substr(nl + 1));
  }
  return r;
}

std::vector<Reservation> ListReservations(const std::string& data_dir, const std::string& network) {
  std::vector<Reservation> out;
  if (!network.empty()) {
    ListNetwork(data_dir + "/" + network, network, out);
  } else {
    for (const auto& e : Entries(data_dir)) {
      std::string name = e.path().filename().string();
      std::error_code ec;
      if (name.empty() || name[0] == '.' || !e.is_directory(ec)) continue;
      ListNetwork(e.path().string(), name, out);
    }
  }
  std::sort(out.begin(), out.end(), [](const Reservation& a, const Reservation& b) {
    return a.network != b.network ? a.network < b.network : a.address < b.address;
  });
  return out;
}

std::string FormatReservationTable(const std::vector<Reservation>& rs) {
  std::vector<std::vector<std::string>> rows = {{"NETWORK", "ADDRESS", "CONTAINER", "IFNAME"}};
  for (const auto& r : rs) {
    rows.push_back({r.network, r.address.ToString(), r.container_id, r.ifname.empty() ? "-" : r.ifname});
  }
  return FormatColumns(rows);
}

nlohmann::json ReservationsToJson(const std::vector<Reservation>& rs) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& r : rs) {
    out.push_back({{"network", r.network},
                   {"address", r.address.ToString()},
                   {"containerId", r.container_id},
                   {"ifname", r.ifname}});
  }
  return out;
}

}  // namespace netiface::cli
