// KernelOps: one netlink socket and /proc/sys inside CNI_NETNS; the backups through libcni's file.h.
#include "netiface/tuning/kernel_ops.h"

#include <cerrno>
#include <filesystem>

#include "netiface/cni/error.h"
#include "netiface/cni/file.h"
#include "netiface/netlink/link.h"
#include "netiface/netlink/sysctl.h"

namespace netiface::tuning {

const nl::NetNs& KernelOps::Ns() {
  if (!ns_) {
    ns_ = nl::NetNs::Open(args_.netns);
    if (!ns_) throw cni::Error(cni::kInvalidEnv, "tuning: network namespace not found", args_.netns);
  }
  return *ns_;
}

nl::Socket& KernelOps::Container() {
  if (!container_) container_ = nl::Socket::OpenIn(Ns());
  return *container_;
}

bool KernelOps::NetnsExists() {
  if (ns_) return true;
  if (args_.netns.empty()) return false;
  ns_ = nl::NetNs::Open(args_.netns);
  return ns_.has_value();
}

std::optional<LinkState> KernelOps::ReadLink(const std::string& ifname) {
  std::optional<nl::LinkInfo> l = nl::FindLink(Container(), ifname);
  if (!l) return std::nullopt;
  return LinkState{.mac = l->mac, .mtu = l->mtu, .promisc = l->promisc, .allmulti = l->allmulti, .txqlen = l->txqlen};
}

std::optional<std::string> KernelOps::ReadSysctl(const std::string& path) {
  std::optional<std::string> v = nl::ReadSysctl(&Ns(), path);
  if (v && !v->empty() && v->back() == '\n') v->pop_back();
  return v;
}

void KernelOps::WriteSysctl(const std::string& path, const std::string& value) {
  nl::RequireSysctl(&Ns(), path, value);
}

void KernelOps::SetMac(const std::string& ifname, const std::string& mac) { nl::SetMac(Container(), ifname, mac); }
void KernelOps::SetMtu(const std::string& ifname, int mtu) { nl::SetMtu(Container(), ifname, mtu); }
void KernelOps::SetPromisc(const std::string& ifname, bool on) { nl::SetPromisc(Container(), ifname, on); }
void KernelOps::SetAllmulti(const std::string& ifname, bool on) { nl::SetAllmulti(Container(), ifname, on); }
void KernelOps::SetTxQLen(const std::string& ifname, uint32_t q) { nl::SetTxQLen(Container(), ifname, q); }

std::optional<std::string> KernelOps::ReadFile(const std::string& path) { return cni::ReadFileIfExists(path); }

void KernelOps::WriteFile(const std::string& path, const std::string& data) {
  cni::MakeDirs(std::filesystem::path(path).parent_path().string(), 0700);
  // A backup must survive what the container survives, not a power loss: /run is gone after one.
  cni::WriteFileAtomic(path, data, 0600, cni::Sync::kProcessCrash);
}

void KernelOps::RemoveFile(const std::string& path) {
  std::error_code ec;
  std::filesystem::remove(path, ec);
  if (ec && ec.value() != ENOENT) {
    throw cni::Error::FromErrno(cni::kIoFailure, ec.value(), "tuning: cannot remove " + path);
  }
}

}  // namespace netiface::tuning
