#include "netiface/netlink/sysctl.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <optional>
#include <utility>

#include "netiface/cni/error.h"
#include "netiface/cni/unique_fd.h"
#include "netiface/netlink/netconf.h"
#include "netiface/netlink/netns.h"

namespace netiface::nl {
namespace {

// Rejects keys that could leave /proc/sys.
bool ValidKey(const std::string& key) {
  if (key.empty() || key.front() == '/') return false;
  size_t start = 0;
  while (start <= key.size()) {
    size_t end = key.find('/', start);
    if (end == std::string::npos) end = key.size();
    std::string part = key.substr(start, end - start);
    if (part.empty() || part == "." || part == "..") return false;
    start = end + 1;
  }
  return true;
}

// "net/ipv4/conf/eth0/proxy_arp" -> {"net/ipv4", "conf/eth0/proxy_arp"}; a key of one or two
// components has no folder.
std::pair<std::string, std::string> SplitFolder(const std::string& key) {
  size_t first = key.find('/');
  size_t second = first == std::string::npos ? first : key.find('/', first + 1);
  if (second == std::string::npos) return {"", key};
  return {key.substr(0, second), key.substr(second + 1)};
}

}  // namespace

bool WriteSysctl(const NetNs* ns, const std::string& key, const std::string& value) {
  return Sysctls(ns).Write(key, value);
}

void RequireSysctl(const NetNs* ns, const std::string& key, const std::string& value) {
  Sysctls(ns).Require(key, value);
}

std::optional<std::string> ReadSysctl(const NetNs* ns, const std::string& key) { return Sysctls(ns).Read(key); }

int Sysctls::FolderFd(const std::string& name) {
  for (const Folder& f : folders_) {
    if (f.name == name) return f.fd.valid() ? f.fd.get() : -f.error;
  }
  Folder f{.name = name};
  f.fd = cni::UniqueFd(open(("/proc/sys/" + name).c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
  if (!f.fd.valid()) f.error = errno;
  folders_.push_back(std::move(f));
  const Folder& added = folders_.back();
  return added.fd.valid() ? added.fd.get() : -added.error;
}

// Opens /proc/sys/<key> as seen from the namespace. It is entered for the open only: a /proc/sys/net
// file stays bound to the namespace it was opened in.
int Sysctls::Open(const std::string& key, int flags) {
  if (!ValidKey(key)) throw cni::Error(cni::kInvalidConfig, "invalid sysctl key \"" + key + "\"");
  std::optional<ScopedSetNs> in_ns;
  if (ns_ != nullptr) in_ns.emplace(*ns_);
  auto [folder, rest] = SplitFolder(key);
  int fd = -1;
  if (folder.empty()) {
    fd = open(("/proc/sys/" + key).c_str(), flags | O_CLOEXEC);
  } else {
    int dir = FolderFd(folder);
    if (dir < 0) return dir;
    fd = openat(dir, rest.c_str(), flags | O_CLOEXEC);
  }
  return fd >= 0 ? fd : -errno;
}

bool Sysctls::AlreadySet(const std::string& key, const std::string& value) {
  if (netconf_ == nullptr) return false;
  std::optional<NetconfQuery> q = NetconfQueryFor(key);
  if (!q) return false;
  try {
    std::optional<int> now = NetconfForwarding(*netconf_, *q);
    return now && std::to_string(*now) == value;
  } catch (const cni::Error&) {
    return false;  // the write below says what is wrong, if anything
  }
}

bool Sysctls::Write(const std::string& key, const std::string& value) {
  if (!ValidKey(key)) throw cni::Error(cni::kInvalidConfig, "invalid sysctl key \"" + key + "\"");
  if (AlreadySet(key, value)) return true;
  const std::string what = "failed to set sysctl " + key + " to " + value;
  int rc = Open(key, O_WRONLY);
  if (rc == -ENOENT) return false;
  if (rc < 0) throw cni::Error::FromErrno(cni::kIoFailure, -rc, what);
  cni::UniqueFd fd(rc);
  ssize_t n = write(fd.get(), value.data(), value.size());
  if (n < 0) throw cni::Error::FromErrno(cni::kIoFailure, errno, what);
  if (static_cast<size_t>(n) != value.size()) throw cni::Error::FromErrno(cni::kIoFailure, EIO, what);
  return true;
}

void Sysctls::Require(const std::string& key, const std::string& value) {
  if (!Write(key, value)) {
    throw cni::Error::FromErrno(cni::kIoFailure, ENOENT, "failed to set sysctl " + key + " to " + value);
  }
}

std::optional<std::string> Sysctls::Read(const std::string& key) {
  int rc = Open(key, O_RDONLY);
  if (rc == -ENOENT) return std::nullopt;
  if (rc < 0) throw cni::Error::FromErrno(cni::kIoFailure, -rc, "failed to read sysctl " + key);
  cni::UniqueFd fd(rc);
  std::string out;
  char buf[512];
  for (;;) {
    ssize_t n = read(fd.get(), buf, sizeof buf);
    if (n < 0) {
      if (errno == EINTR) continue;
      throw cni::Error::FromErrno(cni::kIoFailure, errno, "failed to read sysctl " + key);
    }
    if (n == 0) break;
    out.append(buf, n);
  }
  size_t b = out.find_first_not_of(" \t\n");
  size_t e = out.find_last_not_of(" \t\n");
  return b == std::string::npos ? std::string() : out.substr(b, e - b + 1);
}

}  // namespace netiface::nl
