// Per-namespace sysctls under /proc/sys. /proc/sys/net is resolved in the namespace of the opener, so
// with a namespace the file is opened inside it (ScopedSetNs) and written from here.
#pragma once

#include <optional>
#include <string>

namespace netiface::nl {

class NetNs;

// key uses '/' separators, e.g. "net/ipv4/conf/eth0/proxy_arp". ns nullptr = current namespace.
// Returns false when the key does not exist (IPv6 disabled, a setting this kernel lacks): an absence
// is a result. Any other failure (EACCES, EPERM, EINVAL, a read-only /proc/sys) throws
// cni::Error(kIoFailure) naming the key, with the errno as sys_errno().
bool WriteSysctl(const NetNs* ns, const std::string& key, const std::string& value);
// As WriteSysctl, and an absent key is an error too (ENOENT).
void RequireSysctl(const NetNs* ns, const std::string& key, const std::string& value);
// nullopt when the key does not exist (e.g. IPv6 disabled); other failures throw as WriteSysctl.
std::optional<std::string> ReadSysctl(const NetNs* ns, const std::string& key);

}  // namespace netiface::nl
