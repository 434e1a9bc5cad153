// Reading a host-local data dir for `netiface ipam ls` through ipam's one reader of the store's format
// (ipam::ReadReservations, ipam::SplitOwner). The default data dir is ipam::kDefaultDataDir. Read-only:
// takes no lock, so a listing taken during an ADD or DEL may be one reservation behind.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "netiface/cni/ip.h"

namespace netiface::cli {

struct Reservation {
  std::string network;
  cni::IpAddr address;
  std::string container_id;
  std::string ifname;  // "" for a legacy (container ID only) file
  bool operator==(const Reservation&) const = default;
};

// Every reservation of `network` under `data_dir` ("" = every network folder), sorted by network
// then address. Only files named by an IP address count: lock, last_reserved_ip.*, dot-files and
// anything else are skipped. A missing data dir or network folder gives an empty list. Throws
// cni::Error(kIoFailure) when a folder exists but cannot be read.
std::vector<Reservation> ListReservations(const std::string& data_dir, const std::string& network);

// "NETWORK  ADDRESS  CONTAINER  IFNAME" columns, one line per reservation ("-" for a missing ifname).
std::string FormatReservationTable(const std::vector<Reservation>& rs);
// [{"network","address","containerId","ifname"}]; ifname is "" for legacy files.
nlohmann::json ReservationsToJson(const std::vector<Reservation>& rs);

}  // namespace netiface::cli
