#include "netiface/cni/log_file.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <exception>

#include "netiface/cni/file.h"

namespace netiface::log {

LogFile::LogFile(LogFileOptions options) : options_(std::move(options)) {
  size_t slash = options_.path.rfind('/');
  if (slash == std::string::npos) {
    dir_ = ".";
    base_ = options_.path;
  } else {
    dir_ = slash == 0 ? "/" : options_.path.substr(0, slash);
    base_ = options_.path.substr(slash + 1);
  }
  if (options_.max_files < 0) options_.max_files = 0;
}

LogFile::~LogFile() {
  Close();
  if (dir_fd_ >= 0) ::close(dir_fd_);
}

void LogFile::Close() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
}

bool LogFile::Open() {
  auto fail = [this](const std::string& what, int err) {
    error_ = what + ": " + std::strerror(err);
    return false;
  };
  if (base_.empty() || base_ == "." || base_ == "..") return fail("not a file name: " + options_.path, EINVAL);
  if (dir_fd_ < 0) {
    try {
      cni::MakeDirs(dir_, 0700);
    } catch (const std::exception& e) {
      error_ = e.what();
      return false;
    }
    dir_fd_ = ::open(dir_.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (dir_fd_ < 0) return fail("cannot open log folder " + dir_, errno);
  }
  fd_ = ::openat(dir_fd_, base_.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0600);
  if (fd_ < 0) return fail("cannot open log file " + options_.path, errno);
  struct stat st {};
  if (::fstat(fd_, &st) != 0 || !S_ISREG(st.st_mode)) {
    Close();
    return fail("not a regular file: " + options_.path, EINVAL);
  }
  return true;
}

bool LogFile::Write(std::string_view line) {
  if (fd_ < 0 && !Open()) return false;
  while (!line.empty()) {
    ssize_t n = ::write(fd_, line.data(), line.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      error_ = "cannot write log file " + options_.path + ": " + std::strerror(n < 0 ? errno : ENOSPC);
      return false;
    }
    line.remove_prefix(static_cast<size_t>(n));
  }
  RotateIfFull();
  return true;
}

void LogFile::RotateIfFull() {
  struct stat mine {};
  if (::fstat(fd_, &mine) != 0 || static_cast<std::uint64_t>(mine.st_size) < options_.max_bytes) return;
  if (::flock(fd_, LOCK_EX) == 0) {
    // Only while the name still points at our file: another process may have rotated it already.
    struct stat named {};
    if (::fstatat(dir_fd_, base_.c_str(), &named, AT_SYMLINK_NOFOLLOW) == 0 && named.st_dev == mine.st_dev &&
        named.st_ino == mine.st_ino) {
      if (options_.max_files == 0) {
        ::unlinkat(dir_fd_, base_.c_str(), 0);
      } else {
        for (int i = options_.max_files - 1; i >= 1; --i) {
          std::string from = base_ + "." + std::to_string(i), to = base_ + "." + std::to_string(i + 1);
          ::renameat(dir_fd_, from.c_str(), dir_fd_, to.c_str());  // ENOENT for the ones not there yet
        }
        ::renameat(dir_fd_, base_.c_str(), dir_fd_, (base_ + ".1").c_str());
      }
    }
    ::flock(fd_, LOCK_UN);
  }
  Close();  // the next line opens the new file
}

}  // namespace netiface::log
