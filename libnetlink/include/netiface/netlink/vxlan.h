// vxlan devices (flannel's vxlan backend: one device per VNI, static peers, no learning). Every
// function acts in the namespace of the socket it is given.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "netiface/cni/ip.h"
#include "netiface/netlink/socket.h"

namespace netiface::nl {

// The kernel's vxlan UDP port when none is given (IFLA_VXLAN_PORT absent), as flannel's default.
inline constexpr int kVxlanDefaultPort = 8472;

struct VxlanSpec {
  std::string name;
  uint32_t vni = 1;                  // < 2^24
  std::optional<cni::IpAddr> local;  // source of the encapsulated packets (v4 or v6)
  int lower_ifindex = 0;             // 0: no lower device
  int port = 0;                      // UDP destination port; 0: kernel default (kVxlanDefaultPort)
  bool learning = false;
  bool gbp = false;  // Group Based Policy extension
  int mtu = 0;       // 0: kernel's choice (lower device's MTU minus the overhead)
  std::string mac;   // "" = kernel's choice
};

struct VxlanInfo {
  int index = 0;
  std::string name;
  uint32_t vni = 0;
  std::optional<cni::IpAddr> local;
  int lower_ifindex = 0;
  int port = 0;  // as the kernel reports it (never 0)
  bool learning = false;
  bool gbp = false;
  int mtu = 0;
  std::string mac;  // "aa:bb:cc:dd:ee:ff"
  bool admin_up = false;
};

// Creates the device (one RTM_NEWLINK, CREATE|EXCL), down. Learning is always sent, so `false`
// really turns it off. Throws cni::Error(kInvalidConfig) for a bad name, VNI, port, MTU or MAC
// before any request, and cni::Error(kNetlink) when the kernel refuses, its errno kept in the
// message (an existing name: the message contains "exists").
void CreateVxlan(Socket& s, const VxlanSpec& spec);
// nullopt when no link has that name; throws cni::Error(kInvalidConfig) when the name is a link of
// another kind (the caller must not delete a device it does not own).
std::optional<VxlanInfo> FindVxlan(Socket& s, const std::string& name);

// Pure. The VxlanSpec field names ("name", "vni", "local", "lower_ifindex", "port", "learning",
// "gbp", "mtu", "mac") where `have` does not satisfy `want`, in that order; empty = compatible.
// port 0 wants kVxlanDefaultPort; mtu 0 and mac "" accept anything; MACs compare case-insensitively.
std::vector<std::string> VxlanDifferences(const VxlanSpec& want, const VxlanInfo& have);

}  // namespace netiface::nl
