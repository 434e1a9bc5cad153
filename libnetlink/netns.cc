#include "netiface/netlink/netns.h"

#include <fcntl.h>
#include <linux/magic.h>
#include <linux/nsfs.h>
#include <sched.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "netiface/cni/error.h"

namespace netiface::nl {
namespace {

constexpr const char* kThreadNs = "/proc/thread-self/ns/net";

std::string Errno(int err) { return strerror(err); }

}  // namespace

std::optional<NetNs> NetNs::Open(const std::string& path) {
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    int err = errno;
    if (err == ENOENT) return std::nullopt;
    throw cni::Error(cni::kInvalidEnv, "failed to open netns \"" + path + "\": " + Errno(err));
  }
  NetNs ns(fd, path);  // owns fd from here on
  struct statfs sfs {};
  if (fstatfs(fd, &sfs) != 0) {
    throw cni::Error(cni::kInvalidEnv, "failed to stat netns \"" + path + "\": " + Errno(errno));
  }
  // nsfs on current kernels; procfs for /proc/<pid>/ns/net on kernels before 3.19.
  bool ns_fs = sfs.f_type == static_cast<decltype(sfs.f_type)>(NSFS_MAGIC) ||
               sfs.f_type == static_cast<decltype(sfs.f_type)>(PROC_SUPER_MAGIC);
  if (!ns_fs) throw cni::Error(cni::kInvalidEnv, path + " is not a network namespace");
  int type = ioctl(fd, NS_GET_NSTYPE);
  // ENOTTY/EINVAL: a kernel without NS_GET_NSTYPE (< 4.11); the file system check stands.
  if (type >= 0 ? type != CLONE_NEWNET : (errno != ENOTTY && errno != EINVAL)) {
    throw cni::Error(cni::kInvalidEnv, path + " is not a network namespace");
  }
  return ns;
}

NetNs NetNs::Current() {
  int fd = open(kThreadNs, O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    throw cni::Error(cni::kNetlink, std::string("failed to open ") + kThreadNs + ": " + Errno(errno));
  }
  return NetNs(fd, kThreadNs);
}

NetNs::NetNs(NetNs&& o) noexcept : fd_(o.fd_), path_(std::move(o.path_)) { o.fd_ = -1; }

NetNs& NetNs::operator=(NetNs&& o) noexcept {
  if (this != &o) {
    if (fd_ >= 0) close(fd_);
    fd_ = o.fd_;
    path_ = std::move(o.path_);
    o.fd_ = -1;
  }
  return *this;
}

NetNs::~NetNs() {
  if (fd_ >= 0) close(fd_);
}

bool NetNs::SameAs(const NetNs& o) const {
  struct stat a {
  }, b{};
  if (fstat(fd_, &a) != 0 || fstat(o.fd_, &b) != 0) return false;
  return a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

ScopedSetNs::ScopedSetNs(const NetNs& target) : original_(NetNs::Current()) {
  if (setns(target.fd(), CLONE_NEWNET) != 0) {
    throw cni::Error(cni::kNetlink, "failed to enter netns \"" + target.path() + "\": " + Errno(errno));
  }
}

ScopedSetNs::~ScopedSetNs() {
  if (setns(original_.fd(), CLONE_NEWNET) != 0) std::abort();
}

}  // namespace netiface::nl
