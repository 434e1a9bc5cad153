// Links: lookup, veth pairs created with each end directly in its final namespace, bridges, state.
// Every function acts in the namespace of the socket it is given.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "netiface/netlink/socket.h"

namespace netiface::nl {

class NetNs;

struct LinkInfo {
  int index = 0;
  std::string name;
  std::string kind;  // "veth", "bridge", ... ("" for a plain device)
  std::string mac;   // "aa:bb:cc:dd:ee:ff"
  int mtu = 0;
  bool admin_up = false;  // IFF_UP
  bool oper_up = false;   // operstate UP (or UNKNOWN with IFF_RUNNING)
  int master_index = 0;   // 0 when not enslaved
  int peer_index = 0;     // IFLA_LINK: a veth's peer index (in the peer's namespace)
  bool hairpin = false;   // bridge port hairpin mode (only meaningful on an enslaved link)
  bool promisc = false;
  bool allmulti = false;  // IFF_ALLMULTI
  uint32_t txqlen = 0;    // IFLA_TXQLEN
};

std::optional<LinkInfo> FindLink(Socket& s, const std::string& name);
std::optional<LinkInfo> FindLinkByIndex(Socket& s, int index);
// Every link of the socket's namespace (one dump, in the kernel's order; hairpin is not filled in).
std::vector<LinkInfo> ListLinks(Socket& s);
// Returns false when no such link exists.
bool DeleteLink(Socket& s, const std::string& name);

struct VethSpec {
  std::string name;                // this end: created in the socket's namespace
  std::string peer_name;           // the other end: created directly in peer_ns
  const NetNs* peer_ns = nullptr;  // nullptr: same namespace as `name`
  int mtu = 0;                     // 0: kernel default
  int num_queues = 1;              // tx and rx queues of both ends
  std::string mac;                 // "" = kernel's choice
  std::string peer_mac;            // "" = kernel's choice
  int master_index = 0;            // > 0: `name` is enslaved to this link in the same request
};
// One RTM_NEWLINK request; never creates-then-moves. Throws cni::Error(kNetlink) on failure; its
// sys_errno() is EEXIST when either name is taken (nothing is left behind then).
void CreateVeth(Socket& s, const VethSpec& spec);
// Creates a bridge; returns false when a bridge of that name already exists (a race with another
// ADD is fine); throws cni::Error(kInvalidConfig) when the name is taken by a link that is not a bridge.
bool EnsureBridge(Socket& s, const std::string& name, int mtu);

void SetLinkUp(Socket& s, const std::string& name);
void SetLinkDown(Socket& s, const std::string& name);
void SetMtu(Socket& s, const std::string& name, int mtu);
void SetMac(Socket& s, const std::string& name, const std::string& mac);
void SetMaster(Socket& s, const std::string& name, const std::string& master);
void SetHairpin(Socket& s, const std::string& name, bool on);
void SetPromisc(Socket& s, const std::string& name, bool on);
void SetAllmulti(Socket& s, const std::string& name, bool on);
void SetTxQLen(Socket& s, const std::string& name, uint32_t txqlen);

// Polls until the link is oper-up and returns it then; nullopt when `timeout_ms` passes first.
std::optional<LinkInfo> WaitOperUp(Socket& s, const std::string& name, int timeout_ms);

}  // namespace netiface::nl
