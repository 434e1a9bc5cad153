#include "netiface/netlink/sysctl.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "netiface/cni/error.h"
#include "netiface/cni/unique_fd.h"
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

// Opens /proc/sys/<key> as seen from `ns`; returns the fd or -errno. The namespace is entered only
// for the open: a /proc/sys/net file stays bound to the namespace it was opened in.
int OpenSysctl(const NetNs* ns, const std::string& key, int flags) {
  if (!ValidKey(key)) throw cni::Error(cni::kInvalidConfig, "invalid sysctl key \"" + key + "\"");
  std::string path = "/proc/sys/" + key;
  if (ns == nullptr) {
    int fd = open(path.c_str(), flags | O_CLOEXEC);
    return fd >= 0 ? fd : -errno;
  }
  ScopedSetNs in_ns(*ns);
  int fd = open(path.c_str(), flags | O_CLOEXEC);
  return fd >= 0 ? fd : -errno;
}

}  // namespace

bool WriteSysctl(const NetNs* ns, const std::string& key, const std::string& value) {
  const std::string what = "failed to set sysctl " + key + " to " + value;
  int rc = OpenSysctl(ns, key, O_WRONLY);
  if (rc == -ENOENT) return false;
  if (rc < 0) throw cni::Error::FromErrno(cni::kIoFailure, -rc, what);
  cni::UniqueFd fd(rc);
  ssize_t n = write(fd.get(), value.data(), value.size());
  if (n < 0) throw cni::Error::FromErrno(cni::kIoFailure, errno, what);
  if (static_cast<size_t>(n) != value.size()) throw cni::Error::FromErrno(cni::kIoFailure, EIO, what);
  return true;
}

void RequireSysctl(const NetNs* ns, const std::string& key, const std::string& value) {
  if (!WriteSysctl(ns, key, value)) {
    throw cni::Error::FromErrno(cni::kIoFailure, ENOENT, "failed to set sysctl " + key + " to " + value);
  }
}

std::optional<std::string> ReadSysctl(const NetNs* ns, const std::string& key) {
  int rc = OpenSysctl(ns, key, O_RDONLY);
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
