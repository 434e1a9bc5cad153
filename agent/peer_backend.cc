#include "netiface/agent/peer_backend.h"

#include "netiface/cni/log.h"

namespace netiface::agent {

PeerBackend::PeerBackend(std::string name, int protocol)
    : name_(std::move(name)), socket_(nl::Socket::Open()), programmer_(socket_, protocol, name_) {}

void PeerBackend::Setup(const Lease& own) {
  own_ = own.subnet;
  programmer_.LoadRoutes();
  programmer_.Remove(own.subnet, PeerEntries{});  // our subnet may have been a peer's before
  PrepareDevices(true);
}

void PeerBackend::AddPeer(const Lease& peer) {
  PrepareDevices(false);
  auto entries = EntriesFor(peer);
  if (!entries) {
    programmer_.Remove(peer.subnet, PeerEntries{});  // it may have switched to another backend
    return;
  }
  programmer_.Set(peer.subnet, *entries);
}

void PeerBackend::RemovePeer(const Lease& peer) {
  warned_.erase(peer.subnet);
  if (own_ && peer.subnet == *own_) return;
  programmer_.Remove(peer.subnet, EntriesFor(peer).value_or(PeerEntries{}));
}

void PeerBackend::Reconcile(const std::vector<Lease>& peers) {
  PrepareDevices(true);
  std::map<SubnetKey, PeerEntries> desired;
  for (const auto& p : peers) {
    if (auto e = EntriesFor(p)) desired.emplace(p.subnet, std::move(*e));
  }
  programmer_.Reconcile(desired);
}

std::optional<PeerEntries> PeerBackend::EntriesFor(const Lease& peer) {
  if (own_ && peer.subnet == *own_) return std::nullopt;
  std::string why;
  auto e = Plan(peer, &why);
  if (e) {
    warned_.erase(peer.subnet);
    return e;
  }
  auto [it, fresh] = warned_.emplace(peer.subnet, why);
  if (fresh || it->second != why) {
    it->second = why;
    log::Warn("{}: skipping {}", name_, why);
  }
  return std::nullopt;
}

}  // namespace netiface::agent
