// Network namespace handles. We never live inside a namespace: we enter one only to open a netlink
// socket or a /proc/sys file, and come straight back (ScopedSetNs).
#pragma once

#include <optional>
#include <string>

namespace netiface::nl {

class NetNs {
 public:
  // Opens the namespace at `path` (e.g. /run/netns/x, /proc/<pid>/ns/net).
  // Returns nullopt when the path does not exist (DEL treats that as "already gone"); throws
  // cni::Error(kInvalidEnv) when it exists but is not a network namespace.
  static std::optional<NetNs> Open(const std::string& path);
  // The namespace this thread is in now.
  static NetNs Current();

  NetNs(NetNs&& o) noexcept;
  NetNs& operator=(NetNs&& o) noexcept;
  NetNs(const NetNs&) = delete;
  NetNs& operator=(const NetNs&) = delete;
  ~NetNs();

  int fd() const noexcept { return fd_; }
  const std::string& path() const noexcept { return path_; }
  // Identity of the namespace (st_dev, st_ino): equal handles refer to the same namespace.
  bool SameAs(const NetNs& o) const;

 private:
  NetNs(int fd, std::string path) : fd_(fd), path_(std::move(path)) {}
  int fd_ = -1;
  std::string path_;
};

// Enters `target` for the lifetime of the guard and returns to the original namespace on scope exit.
// If returning fails the process aborts: carrying on in the wrong namespace is never safe.
class ScopedSetNs {
 public:
  explicit ScopedSetNs(const NetNs& target);  // throws cni::Error(kNetlink) when setns fails
  ~ScopedSetNs();
  ScopedSetNs(const ScopedSetNs&) = delete;
  ScopedSetNs& operator=(const ScopedSetNs&) = delete;

 private:
  NetNs original_;
};

}  // namespace netiface::nl
