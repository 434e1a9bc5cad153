// Everything the tuning verbs read or change outside their own memory: the container interface and the
// sysctls of CNI_NETNS, and the backup files. KernelOps (kernel_ops.h) is the real one; the unit tests use
// an in-memory double that can fail any call.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "netiface/tuning/plan.h"

namespace netiface::tuning {

class Ops {
 public:
  virtual ~Ops() = default;
  // --- The container namespace (CNI_NETNS). ---
  // False when CNI_NETNS is empty or gone. Throws Error(kInvalidEnv) when it is not a network namespace.
  virtual bool NetnsExists() = 0;
  // nullopt when the link does not exist.
  virtual std::optional<LinkState> ReadLink(const std::string& ifname) = 0;
  // `path` below /proc/sys; the value without its trailing newline; nullopt when there is no such file.
  virtual std::optional<std::string> ReadSysctl(const std::string& path) = 0;
  // Each change is one write or one netlink request: it takes effect entirely or not at all.
  virtual void WriteSysctl(const std::string& path, const std::string& value) = 0;
  virtual void SetMac(const std::string& ifname, const std::string& mac) = 0;
  virtual void SetMtu(const std::string& ifname, int mtu) = 0;
  virtual void SetPromisc(const std::string& ifname, bool on) = 0;
  virtual void SetAllmulti(const std::string& ifname, bool on) = 0;
  virtual void SetTxQLen(const std::string& ifname, uint32_t txqlen) = 0;
  // --- Files (the host's). ---
  virtual std::optional<std::string> ReadFile(const std::string& path) = 0;
  // Atomically (a crash leaves the old file or the new one); creates the folder (0700) when missing.
  virtual void WriteFile(const std::string& path, const std::string& data) = 0;
  virtual void RemoveFile(const std::string& path) = 0;  // absent is fine
};

}  // namespace netiface::tuning
