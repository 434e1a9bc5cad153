// A Backend whose peers become PeerEntries (host-gw, vxlan): the event and reconcile paths they share.
// A backend says what one lease needs (Plan) and, when it has devices of its own, keeps them right
// (PrepareDevices); this class does the rest through one PeerProgrammer.
#pragma once

#include <map>
#include <optional>
#include <string>

#include "netiface/agent/backend.h"
#include "netiface/agent/peer_programmer.h"
#include "netiface/netlink/socket.h"

namespace netiface::agent {

class PeerBackend : public Backend {
 public:
  // Learns the routes already ours, takes any route to our own subnet away, PrepareDevices(true).
  void Setup(const Lease& own) override;
  // Plan, then PeerProgrammer::Set (or Remove, for a lease that needs nothing from us).
  void AddPeer(const Lease& peer) override;
  void RemovePeer(const Lease& peer) override;
  // PrepareDevices(true), then PeerProgrammer::Reconcile of every peer's plan.
  void Reconcile(const std::vector<Lease>& peers) override;

 protected:
  // `name` prefixes log lines. The netlink socket acts in the namespace current at construction.
  PeerBackend(std::string name, int protocol);

  // What `peer` needs; nullopt, with *why, when it needs nothing from this node.
  virtual std::optional<PeerEntries> Plan(const Lease& peer, std::string* why) = 0;
  // Makes the backend's own devices right (and tells the programmer which they are). `always` false: only
  // when the last attempt failed (before an event). Throws cni::Error on a kernel failure.
  virtual void PrepareDevices(bool always) { (void)always; }

  nl::Socket& socket() { return socket_; }
  PeerProgrammer& programmer() { return programmer_; }
  const std::optional<SubnetKey>& own() const { return own_; }

 private:
  // Plan, never for our own subnet; a skipped lease is warned once per reason.
  std::optional<PeerEntries> EntriesFor(const Lease& peer);

  std::string name_;
  nl::Socket socket_;
  PeerProgrammer programmer_;
  std::optional<SubnetKey> own_;
  std::map<SubnetKey, std::string> warned_;  // leases skipped, with the reason last logged
};

}  // namespace netiface::agent
