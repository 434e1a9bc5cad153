// Per-namespace sysctls under /proc/sys. /proc/sys/net is resolved in the namespace of the opener, so
// with a namespace the file is opened inside it (ScopedSetNs) and written from here.
#pragma once

#include <optional>
#include <string>

namespace netiface::nl {

class NetNs;

// key uses '/' separators, e.g. "net/ipv4/conf/eth0/proxy_arp". ns nullptr = current namespace.
// Throws cni::Error(kIoFailure) naming the key on failure.
void WriteSysctl(const NetNs* ns, const std::string& key, const std::string& value);
// nullopt when the key does not exist (e.g. IPv6 disabled).
std::optional<std::string> ReadSysctl(const NetNs* ns, const std::string& key);

}  // namespace netiface::nl
