// host-local's on-disk vocabulary (backend/disk/backend.go), byte for byte: a reservation is the file
// <dataDir>/<network>/<ip> holding "<containerID>\r\n<ifname>" (container ID trimmed, no final
// newline); files written by old versions hold only the container ID. Pure functions.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "netiface/cni/ip.h"

namespace netiface::ipam {

inline constexpr std::string_view kLineBreak = "\r\n";
inline constexpr std::string_view kLockFileName = "lock";
inline constexpr std::string_view kLastReservedPrefix = "last_reserved_ip.";

// Go's strings.TrimSpace for ASCII whitespace (\t \n \v \f \r and space).
std::string_view TrimSpace(std::string_view s);

// The content of a reservation file for an attachment: TrimSpace(container_id) + "\r\n" + ifname.
std::string EncodeOwner(std::string_view container_id, std::string_view ifname);

// The container ID of a (trimmed) file content: the part before the first "\r\n", or all of it (a
// legacy file).
std::string_view OwnerKey(std::string_view owner);

// The attachment a (trimmed) file content names: the container ID before the first "\r\n" and the
// ifname after it; a legacy file (no "\r\n") has an empty ifname.
struct OwnerFields {
  std::string_view container_id;
  std::string_view ifname;
};
OwnerFields SplitOwner(std::string_view owner);

// For messages: "container <id> (ifname <ifname>)", "container <id>" for a legacy file, or "an empty
// reservation file".
std::string DescribeOwner(std::string_view owner);

enum class OwnerMatch { kNone, kExact, kLegacy };
// How a trimmed file content relates to an attachment, with the reference's comparisons:
// kExact when it equals EncodeOwner(id, ifname), kLegacy when it equals TrimSpace(id).
OwnerMatch MatchOwner(std::string_view owner, std::string_view container_id, std::string_view ifname);

// The address a directory entry reserves: its name must be an address in canonical text form (the
// reference names files ip.String()). nullopt for lock, last_reserved_ip.*, temporaries and the rest.
std::optional<cni::IpAddr> ReservationAddress(std::string_view file_name);

// The file name of the round-robin cursor of a range set.
std::string LastReservedFileName(size_t range_set_index);

}  // namespace netiface::ipam
