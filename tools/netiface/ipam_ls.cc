#include "netiface/cli/ipam_ls.h"

#include <algorithm>
#include <filesystem>
#include <system_error>

#include "netiface/cli/table.h"
#include "netiface/cni/error.h"
#include "netiface/ipam/reservation.h"
#include "netiface/ipam/store.h"

namespace netiface::cli {
namespace {

namespace fs = std::filesystem;

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

// The reservations of one network folder, through ipam's reader of the store's format.
void ListNetwork(const std::string& dir, const std::string& network, std::vector<Reservation>& out) {
  auto entries = ipam::ReadReservations(dir);
  if (!entries) return;
  for (const auto& e : *entries) {
    ipam::OwnerFields owner = ipam::SplitOwner(e.owner);
    out.push_back({network, e.ip, std::string(owner.container_id), std::string(owner.ifname)});
  }
}

}  // namespace

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
