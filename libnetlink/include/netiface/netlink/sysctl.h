// Per-namespace sysctls under /proc/sys. /proc/sys/net is resolved in the namespace of the opener, so
// with a namespace the file is opened inside it (ScopedSetNs) and written from here.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "netiface/cni/unique_fd.h"

namespace netiface::nl {

class NetNs;
class Socket;

// key uses '/' separators, e.g. "net/ipv4/conf/eth0/proxy_arp". ns nullptr = current namespace.
// Returns false when the key does not exist (IPv6 disabled, a setting this kernel lacks): an absence
// is a result. Any other failure (EACCES, EPERM, EINVAL, a read-only /proc/sys) throws
// cni::Error(kIoFailure) naming the key, with the errno as sys_errno().
bool WriteSysctl(const NetNs* ns, const std::string& key, const std::string& value);
// As WriteSysctl, and an absent key is an error too (ENOENT).
void RequireSysctl(const NetNs* ns, const std::string& key, const std::string& value);
// nullopt when the key does not exist (e.g. IPv6 disabled); other failures throw as WriteSysctl.
std::optional<std::string> ReadSysctl(const NetNs* ns, const std::string& key);

// The same three for many keys of one namespace: each folder two levels down (net/ipv4, net/ipv6) is
// looked up once, and every key below it is opened relative to it. On a node with many network
// namespaces that lookup is most of an open's cost: the kernel keeps a /proc/sys/net/ipv4 entry per
// namespace under the one /proc/sys/net and compares them in turn (~30 us with 200 pods, against ~2 us
// for the rest of the path). The folders are those of `ns` (nullptr: the namespace the calling thread
// is in at the first call), held open for the object's life: one object per namespace and per call.
// With `netconf`, a netlink socket in the same namespace, a write that would change nothing is left
// out where netlink can tell at no lookup's cost (netconf.h: IPv4 forwarding).
class Sysctls {
 public:
  explicit Sysctls(const NetNs* ns, Socket* netconf = nullptr) : ns_(ns), netconf_(netconf) {}
  bool Write(const std::string& key, const std::string& value);
  void Require(const std::string& key, const std::string& value);
  std::optional<std::string> Read(const std::string& key);

 private:
  struct Folder {
    std::string name;
    cni::UniqueFd fd;  // O_PATH
    int error = 0;     // the errno of its lookup when it has no fd
  };
  int Open(const std::string& key, int flags);  // the fd, or -errno
  int FolderFd(const std::string& name);        // the folder's fd, or -errno; looked up once
  bool AlreadySet(const std::string& key, const std::string& value);

  const NetNs* ns_;
  Socket* netconf_;
  std::vector<Folder> folders_;
};

}  // namespace netiface::nl
