// The real Ops: libnetlink and /proc/sys inside CNI_NETNS, the backup files through libcni's file.h.
#pragma once

#include <optional>

#include "netiface/cni/skel.h"
#include "netiface/netlink/netns.h"
#include "netiface/netlink/socket.h"
#include "netiface/tuning/ops.h"

namespace netiface::tuning {

class KernelOps : public Ops {
 public:
  // Opens nothing yet. `args` must outlive this object.
  explicit KernelOps(const cni::CmdArgs& args) : args_(args) {}

  bool NetnsExists() override;
  std::optional<LinkState> ReadLink(const std::string& ifname) override;
  std::optional<std::string> ReadSysctl(const std::string& path) override;
  void WriteSysctl(const std::string& path, const std::string& value) override;
  void SetMac(const std::string& ifname, const std::string& mac) override;
  void SetMtu(const std::string& ifname, int mtu) override;
  void SetPromisc(const std::string& ifname, bool on) override;
  void SetAllmulti(const std::string& ifname, bool on) override;
  void SetTxQLen(const std::string& ifname, uint32_t txqlen) override;
  std::optional<std::string> ReadFile(const std::string& path) override;
  void WriteFile(const std::string& path, const std::string& data) override;
  void RemoveFile(const std::string& path) override;

 private:
  const nl::NetNs& Ns();  // throws Error(kInvalidEnv) when CNI_NETNS cannot be opened
  nl::Socket& Container();

  const cni::CmdArgs& args_;
  std::optional<nl::NetNs> ns_;
  std::optional<nl::Socket> container_;
};

}  // namespace netiface::tuning
