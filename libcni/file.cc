#include "netiface/cni/file.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <memory>
#include <thread>
#include <utility>

#include "netiface/cni/error.h"
#include "netiface/cni/unique_fd.h"

namespace netiface::cni {
namespace {

[[noreturn]] void IoError(const std::string& what, const std::string& path, int err) {
  throw Error(kIoFailure, what + " " + path, std::strerror(err));
}

std::string DirOf(const std::string& path) {
  size_t slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return path.substr(0, slash);
}

constexpr std::string_view kTempInfix = ".tmp-";
constexpr size_t kSuffixLength = 12;

bool IsTemporaryOf(std::string_view name, std::string_view base) {
  if (name.size() != base.size() + kTempInfix.size() + kSuffixLength || !name.starts_with(base)) return false;
  name.remove_prefix(base.size());
  if (!name.starts_with(kTempInfix)) return false;
  name.remove_prefix(kTempInfix.size());
  return name.find_first_not_of("0123456789abcdef") == std::string_view::npos;
}

// Removes the temporary at `path` when no writer holds its lock; false otherwise.
bool RemoveIfAbandoned(const std::string& path) {
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK));
  struct stat st {};
  if (fd.get() < 0 || ::fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode)) return false;
  if (::flock(fd.get(), LOCK_EX | LOCK_NB) != 0) return false;  // its writer is alive
  // Still the same file under that name (the lock is held: no writer can rename it meanwhile).
  struct stat now {};
  if (::lstat(path.c_str(), &now) != 0 || now.st_dev != st.st_dev || now.st_ino != st.st_ino) return false;
  return ::unlink(path.c_str()) == 0;
}

std::string RandomSuffix() {
  uint64_t r = 0;
  if (getrandom(&r, sizeof(r), 0) != static_cast<ssize_t>(sizeof(r))) {
    r = static_cast<uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count()) ^
        static_cast<uint64_t>(getpid());
  }
  static const char kHex[] = "0123456789abcdef";
  std::string s;
  for (size_t i = 0; i < kSuffixLength; ++i, r >>= 4) s += kHex[r & 0xf];
  return s;
}

}  // namespace

void WriteAll(int fd, std::string_view data, const std::string& what) {
  while (!data.empty()) {
    ssize_t n = ::write(fd, data.data(), data.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) IoError("cannot write", what, errno);
    data.remove_prefix(static_cast<size_t>(n));
  }
}

FileLock FileLock::Acquire(const std::string& path, int timeout_ms) {
  UniqueFd fd(::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600));
  if (fd.get() < 0) IoError("cannot open lock file", path, errno);
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  auto sleep = std::chrono::microseconds(1000);
  while (true) {
    if (::flock(fd.get(), LOCK_EX | LOCK_NB) == 0) return FileLock(std::move(fd));
    if (errno == EINTR) continue;
    if (errno != EWOULDBLOCK) IoError("cannot lock", path, errno);
    auto now = std::chrono::steady_clock::now();
    if (now >= deadline) throw Error(kTryAgainLater, "timed out waiting for lock " + path);
    auto left = std::chrono::duration_cast<std::chrono::microseconds>(deadline - now);
    std::this_thread::sleep_for(std::min(sleep, left));
    sleep = std::min(sleep * 2, std::chrono::microseconds(10000));
  }
}

void WriteFileAtomic(const std::string& path, const std::string& data, int mode, Sync sync) {
  AtomicFile(path, mode).Commit(data, sync);
}

AtomicFile::AtomicFile(std::string path, int mode) : path_(std::move(path)), mode_(mode) {
  for (int attempt = 0; attempt < 16 && !fd_.valid(); ++attempt) {
    tmp_ = path_ + std::string(kTempInfix) + RandomSuffix();
    fd_.Reset(::open(tmp_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode));
    if (!fd_.valid()) {
      if (errno != EEXIST) IoError("cannot create", tmp_, errno);
      continue;
    }
    // The writer's mark (see RemoveAbandonedTemporaries). A cleaner holds the lock only while it removes
    // a temporary it found unlocked, which can be this one, between open and flock: then start again.
    while (::flock(fd_.get(), LOCK_EX) != 0) {
      if (errno != EINTR) IoError("cannot lock", tmp_, errno);
    }
    struct stat st {};
    if (::fstat(fd_.get(), &st) != 0) IoError("cannot stat", tmp_, errno);
    if (st.st_nlink == 0) fd_.Reset();
  }
  if (!fd_.valid()) IoError("cannot create a temporary file for", path_, EEXIST);
}

AtomicFile::~AtomicFile() {
  if (!fd_.valid()) return;
  ::unlink(tmp_.c_str());  // while the lock is held: a cleaner never sees it unlocked
  fd_.Reset();
}

void AtomicFile::Commit(const std::string& data, Sync sync) {
  if (!fd_.valid()) throw Error(kInternal, "AtomicFile for " + path_ + " committed twice");
  UniqueFd fd = std::move(fd_);
  try {
    if (::fchmod(fd.get(), static_cast<mode_t>(mode_)) != 0) IoError("cannot chmod", tmp_, errno);
    WriteAll(fd.get(), data, tmp_);
    if (sync == Sync::kPowerLoss && ::fsync(fd.get()) != 0) IoError("cannot fsync", tmp_, errno);
    // Renamed while the descriptor, and with it the writer's lock, is still held.
    if (::rename(tmp_.c_str(), path_.c_str()) != 0) IoError("cannot rename " + tmp_ + " to", path_, errno);
  } catch (...) {
    ::unlink(tmp_.c_str());
    throw;
  }
  // The file is in place; a local file system reports nothing at close that write (or fsync) did not.
  fd.Reset();
  if (sync != Sync::kPowerLoss) return;
  const std::string dir = DirOf(path_);
  UniqueFd dfd(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (dfd.get() < 0) IoError("cannot open folder", dir, errno);
  if (::fsync(dfd.get()) != 0) IoError("cannot fsync folder", dir, errno);
}

int RemoveAbandonedTemporaries(const std::string& path) {
  const std::string dir = DirOf(path);
  const std::string base = path.substr(path.rfind('/') == std::string::npos ? 0 : path.rfind('/') + 1);
  int removed = 0;
  std::unique_ptr<DIR, int (*)(DIR*)> d(::opendir(dir.c_str()), ::closedir);
  if (!d) return 0;
  while (dirent* e = ::readdir(d.get())) {
    if (IsTemporaryOf(e->d_name, base)) removed += RemoveIfAbandoned(dir + "/" + e->d_name);
  }
  return removed;
}

int RemoveAbandonedTemporariesIn(const std::string& dir) {
  int removed = 0;
  std::unique_ptr<DIR, int (*)(DIR*)> d(::opendir(dir.c_str()), ::closedir);
  if (!d) return 0;
  while (dirent* e = ::readdir(d.get())) {
    std::string_view name = e->d_name;
    const size_t at = name.rfind(kTempInfix);
    if (at == std::string_view::npos || at == 0 || !IsTemporaryOf(name, name.substr(0, at))) continue;
    removed += RemoveIfAbandoned(dir + "/" + std::string(name));
  }
  return removed;
}

std::optional<std::string> ReadFileIfExists(const std::string& path) {
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (fd.get() < 0) {
    if (errno == ENOENT) return std::nullopt;
    IoError("cannot open", path, errno);
  }
  std::string out;
  char buf[8192];
  while (true) {
    ssize_t n = ::read(fd.get(), buf, sizeof(buf));
    if (n < 0) {
      if (errno == EINTR) continue;
      IoError("cannot read", path, errno);
    }
    if (n == 0) break;
    out.append(buf, static_cast<size_t>(n));
  }
  return out;
}

void WriteFileDurable(const std::string& path, const std::string& data, int mode) {
  UniqueFd fd(::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode));
  if (fd.get() < 0) IoError("cannot create", path, errno);
  if (::fchmod(fd.get(), static_cast<mode_t>(mode)) != 0) IoError("cannot chmod", path, errno);
  WriteAll(fd.get(), data, path);
  if (::fsync(fd.get()) != 0) IoError("cannot fsync", path, errno);
}

void MakeDirs(const std::string& path, int mode) {
  // The folder exists on every call but the first: one stat then, not a mkdir and a stat per component.
  std::string dir = path;
  while (dir.size() > 1 && dir.back() == '/') dir.pop_back();
  if (dir.empty() || dir == "/") return;
  struct stat st {};
  if (::stat(dir.c_str(), &st) == 0) {
    if (!S_ISDIR(st.st_mode)) IoError("not a folder:", dir, ENOTDIR);
    return;
  }
  if (errno != ENOENT) IoError("cannot create folder", dir, errno);
  if (size_t slash = dir.rfind('/'); slash != std::string::npos && slash > 0) MakeDirs(dir.substr(0, slash), mode);
  if (::mkdir(dir.c_str(), static_cast<mode_t>(mode)) == 0) {
    ::chmod(dir.c_str(), static_cast<mode_t>(mode));  // exactly `mode`, whatever the umask
    return;
  }
  const int err = errno;
  // Created meanwhile by a concurrent call: fine when it is a folder.
  if (err == EEXIST && ::stat(dir.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) return;
  IoError(err == EEXIST ? "not a folder:" : "cannot create folder", dir, err == EEXIST ? ENOTDIR : err);
}

}  // namespace netiface::cni
