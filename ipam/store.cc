#include "netiface/ipam/store.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <time.h>
#include <unistd.h>

#include <cstring>
#include <memory>

#include "netiface/cni/error.h"
#include "netiface/cni/join.h"
#include "netiface/cni/log.h"
#include "netiface/ipam/reservation.h"

namespace netiface::ipam {
namespace {

using cni::IpAddr;

// The named temporary used where O_TMPFILE is not supported. Starts with '.', so it is never taken for
// a reservation; the reference reads it like any file and, at worst, removes it in a DEL.
constexpr const char* kTempName = ".netiface-tmp";

// The file system had no room for a write of the store (ENOSPC, or EDQUOT under a quota).
class NoSpace : public cni::Error {
 public:
  using cni::Error::Error;
};

[[noreturn]] void IoError(const std::string& what, int err) {
  if (err == ENOSPC || err == EDQUOT) throw NoSpace(cni::kIoFailure, what, std::strerror(err));
  throw cni::Error(cni::kIoFailure, what, std::strerror(err));
}

void WriteContent(int fd, std::string_view data, const std::string& what) {
  while (!data.empty()) {
    ssize_t n = ::write(fd, data.data(), data.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) IoError("cannot write " + what, errno);
    data.remove_prefix(static_cast<size_t>(n));
  }
}

// The index is kept only while the file system has this much free, and 16 times what the index takes:
// it is a cache, and must never hold the space a reservation (ours or the reference's) needs.
constexpr uint64_t kIndexMinFreeBytes = 1 << 20;
constexpr uint64_t kIndexSpaceFactor = 16;

// The content of dir_fd/name, nullopt when it does not exist.
std::optional<std::string> ReadAt(int dir_fd, const std::string& name, const std::string& dir) {
  cni::UniqueFd fd(::openat(dir_fd, name.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd.valid()) {
    if (errno == ENOENT) return std::nullopt;
    IoError("cannot open " + dir + "/" + name, errno);
  }
  std::string out;
  char buf[512];
  while (true) {
    ssize_t n = ::read(fd.get(), buf, sizeof(buf));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) IoError("cannot read " + dir + "/" + name, errno);
    out.append(buf, static_cast<size_t>(n));
    // A regular file returns less than asked only at its end: saves a read per file in a scan.
    if (static_cast<size_t>(n) < sizeof(buf)) return out;
  }
}

// Every reservation in the folder open as `dir_fd` (named `dir` in errors), each file's content trimmed.
// Sets *saw_temp when our named temporary is there (left for the caller to remove).
std::vector<IndexEntry> ReadFolder(int dir_fd, const std::string& dir, bool* saw_temp) {
  cni::UniqueFd fd(::openat(dir_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!fd.valid()) IoError("cannot open " + dir, errno);
  DIR* d = ::fdopendir(fd.get());
  if (!d) IoError("cannot list " + dir, errno);
  fd.Release();  // owned by `d` now
  std::unique_ptr<DIR, int (*)(DIR*)> closer(d, ::closedir);
  std::vector<IndexEntry> out;
  while (true) {
    errno = 0;
    dirent* e = ::readdir(d);
    if (!e) {
      if (errno != 0) IoError("cannot list " + dir, errno);
      break;
    }
    std::string_view name = e->d_name;
    if (name == kTempName) {
      if (saw_temp) *saw_temp = true;
      continue;
    }
    if (e->d_type == DT_DIR) continue;
    auto ip = ReservationAddress(name);
    if (!ip) continue;
    auto content = ReadAt(dir_fd, std::string(name), dir);
    if (content) out.push_back({*ip, std::string(TrimSpace(*content))});
  }
  return out;
}

bool Before(const timespec& a, const timespec& b) {
  return a.tv_sec < b.tv_sec || (a.tv_sec == b.tv_sec && a.tv_nsec < b.tv_nsec);
}

// A file with the reservation's content that is not yet visible under any address name.
class PendingFile {
 public:
  // `dir` only names the folder in errors. Copied, not moved: the body must be able to use it too.
  PendingFile(int dir_fd, const std::string& dir, std::string_view content) : dir_fd_(dir_fd), dir_(dir) {
    fd_.Reset(::openat(dir_fd, ".", O_TMPFILE | O_WRONLY | O_CLOEXEC, 0600));
    if (!fd_.valid()) {
      if (errno != EOPNOTSUPP && errno != EISDIR && errno != EINVAL) IoError("cannot create a file in " + dir, errno);
      ::unlinkat(dir_fd, kTempName, 0);  // left by a run that was killed
      fd_.Reset(::openat(dir_fd, kTempName, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600));
      if (!fd_.valid()) IoError("cannot create " + dir + "/" + kTempName, errno);
      named_ = true;
    }
    WriteContent(fd_.get(), content, "a reservation in " + dir_);
  }
  ~PendingFile() {
    if (named_) ::unlinkat(dir_fd_, kTempName, 0);
  }
  PendingFile(const PendingFile&) = delete;
  PendingFile& operator=(const PendingFile&) = delete;

  // Makes the content visible as `name`. False when `name` exists.
  bool LinkTo(const std::string& name) {
    int rc;
    if (named_) {
      rc = ::linkat(dir_fd_, kTempName, dir_fd_, name.c_str(), 0);
    } else {
      rc = ::linkat(fd_.get(), "", dir_fd_, name.c_str(), AT_EMPTY_PATH);
      if (rc != 0 && (errno == ENOENT || errno == EPERM)) {  // AT_EMPTY_PATH needs CAP_DAC_READ_SEARCH
        std::string proc = "/proc/self/fd/" + std::to_string(fd_.get());
        rc = ::linkat(AT_FDCWD, proc.c_str(), dir_fd_, name.c_str(), AT_SYMLINK_FOLLOW);
      }
    }
    if (rc == 0) return true;
    if (errno == EEXIST) return false;
    IoError("cannot create " + dir_ + "/" + name, errno);
  }

 private:
  int dir_fd_;
  std::string dir_;
  cni::UniqueFd fd_;
  bool named_ = false;
};

}  // namespace

std::string NetworkDir(const StoreConfig& c) { return c.data_dir + "/" + c.network; }
std::string IndexDir(const StoreConfig& c) { return c.data_dir + "/.netiface/" + c.network; }

std::optional<Store> Store::Open(const StoreConfig& c, bool create) {
  std::string dir = NetworkDir(c);
  if (create) {
    cni::MakeDirs(dir, 0755);
  } else {
    struct stat st {};
    if (::stat(dir.c_str(), &st) != 0) {
      if (errno == ENOENT) return std::nullopt;
      IoError("cannot use " + dir, errno);
    }
  }
  cni::UniqueFd fd(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!fd.valid()) IoError("cannot open " + dir, errno);
  cni::FileLock lock = cni::FileLock::Acquire(dir + "/" + std::string(kLockFileName), c.lock_timeout_ms);
  return Store(std::move(lock), std::move(fd), std::move(dir), IndexDir(c));
}

Store::Store(cni::FileLock lock, cni::UniqueFd dir_fd, std::string dir, std::string index_dir)
    : lock_(std::move(lock)),
      dir_fd_(std::move(dir_fd)),
      dir_(std::move(dir)),
      index_(std::move(index_dir)),
      boot_id_(BootId()) {}

Store::~Store() {
  try {
    Commit();
  } catch (const std::exception& e) {
    log::Warn("host-local: index of {} not saved, the next call rescans: {}", dir_, e.what());
    index_.Invalidate();
  }
}

DirStamp Store::CurrentStamp() const {
  struct stat st {};
  if (::fstat(dir_fd_.get(), &st) != 0) IoError("cannot stat " + dir_, errno);
  return {static_cast<uint64_t>(st.st_dev), static_cast<uint64_t>(st.st_ino), st.st_mtim.tv_sec, st.st_mtim.tv_nsec,
          boot_id_};
}

void Store::BeginChange() {
  if (!stamp_removed_) index_.InvalidateOrThrow();
  stamp_removed_ = true;
  changed_ = true;
}

void Store::EnsureIndex() {
  if (index_ready_) return;
  if (index_.Matches(CurrentStamp())) {
    index_ready_ = index_trusted_ = true;
    return;
  }
  Scan();
}

std::vector<IndexEntry> Store::ReadAll() {
  bool saw_temp = false;
  std::vector<IndexEntry> out = ReadFolder(dir_fd_.get(), dir_, &saw_temp);
  if (saw_temp) {
    BeginChange();
    ::unlinkat(dir_fd_.get(), kTempName, 0);
  }
  return out;
}

std::optional<std::vector<IndexEntry>> ReadReservations(const std::string& network_dir) {
  cni::UniqueFd fd(::open(network_dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!fd.valid()) {
    if (errno == ENOENT) return std::nullopt;
    IoError("cannot open " + network_dir, errno);
  }
  return ReadFolder(fd.get(), network_dir, nullptr);
}

std::vector<IndexEntry> Store::Scan() {
  std::vector<IndexEntry> all = ReadAll();
  index_.Reset(all);
  index_ready_ = true;
  scanned_ = true;
  changed_ = true;
  return all;
}

template <typename Write>
auto Store::WithSpace(Write&& write) -> decltype(write()) {
  try {
    return write();
  } catch (const NoSpace& e) {
    if (!YieldIndexSpace()) throw;
    log::Warn("host-local: {}: {}; dropped the index to make room", e.what(), e.details());
  }
  return write();
}

bool Store::YieldIndexSpace() {
  if (index_dropped_ || !index_.Drop()) return false;
  index_dropped_ = true;
  // The shards not loaded yet are gone with the files: the next lookup of this call scans the folder.
  // Not now: a scan removes the named temporary, which may be the pending file of the write to retry.
  index_ready_ = false;
  return true;
}

bool Store::RoomForIndex() const {
  struct statvfs fs {};
  if (::fstatvfs(dir_fd_.get(), &fs) != 0) return true;  // unknown: a write's ENOSPC still yields
  const uint64_t block = fs.f_frsize ? fs.f_frsize : fs.f_bsize;
  const uint64_t free_bytes = static_cast<uint64_t>(fs.f_bavail) * block;
  if (free_bytes < kIndexMinFreeBytes || free_bytes / kIndexSpaceFactor < index_.FootprintBytes(block)) return false;
  // Inodes too, where the file system counts them (tmpfs, ext4; btrfs reports none).
  return fs.f_files == 0 || static_cast<uint64_t>(fs.f_favail) / kIndexSpaceFactor >= index_.Files();
}

bool Store::Reserve(const IpAddr& ip, std::string_view container_id, std::string_view ifname) {
  EnsureIndex();
  BeginChange();
  std::string owner = EncodeOwner(container_id, ifname);
  std::optional<PendingFile> file;
  WithSpace([&] { file.emplace(dir_fd_.get(), dir_, owner); });
  if (!WithSpace([&] { return file->LinkTo(ip.ToString()); })) return false;
  IndexAdd(ip, TrimSpace(owner));
  return true;
}

std::optional<Candidate> Store::ReserveFirst(CandidateIter& it, std::string_view container_id,
                                             std::string_view ifname) {
  EnsureIndex();
  BeginChange();
  std::string owner = EncodeOwner(container_id, ifname);
  std::optional<PendingFile> file;
  WithSpace([&] { file.emplace(dir_fd_.get(), dir_, owner); });
  while (auto c = it.Next()) {
    if (!WithSpace([&] { return file->LinkTo(c->ip.ToString()); })) continue;
    IndexAdd(c->ip, TrimSpace(owner));
    return c;
  }
  return std::nullopt;
}

void Store::IndexAdd(const IpAddr& ip, std::string_view owner) {
  if (index_.Lookup(OwnerKey(owner))) {
    index_.Add({ip, std::string(owner)});
  } else {
    Scan();  // the shard is unreadable: rebuild from the folder, which has the new file
  }
}

bool Store::ReleaseIfOwner(const IpAddr& ip, std::string_view owner) {
  EnsureIndex();
  auto current = Owner(ip);
  if (!current || *current != owner) return false;
  std::string name = ip.ToString();
  BeginChange();
  if (::unlinkat(dir_fd_.get(), name.c_str(), 0) != 0) {
    if (errno == ENOENT) return false;
    IoError("cannot remove " + dir_ + "/" + name, errno);
  }
  if (index_.Lookup(OwnerKey(owner))) {
    index_.Remove(ip, owner);
  } else {
    Scan();  // the shard is unreadable: rebuild from the folder, which no longer has the file
  }
  return true;
}

std::optional<std::string> Store::Owner(const IpAddr& ip) const {
  auto content = ReadAt(dir_fd_.get(), ip.ToString(), dir_);
  if (!content) return std::nullopt;
  return std::string(TrimSpace(*content));
}

bool Store::Exists(const IpAddr& ip) const {
  struct stat st {};
  if (::fstatat(dir_fd_.get(), ip.ToString().c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0) return true;
  return errno != ENOENT;  // in doubt, taken
}

Store::Held Store::Find(std::string_view container_id, std::string_view ifname) {
  EnsureIndex();
  std::string_view key = TrimSpace(container_id);
  for (int attempt = 0; attempt < 2; ++attempt) {
    auto entries = index_.Lookup(key);
    if (!entries) {
      Scan();
      continue;
    }
    Held held;
    bool stale = false;
    for (const IndexEntry& e : *entries) {
      OwnerMatch m = MatchOwner(e.owner, container_id, ifname);
      if (m == OwnerMatch::kNone) continue;
      if (!scanned_) {
        auto current = Owner(e.ip);
        if (!current || *current != e.owner) {
          stale = true;
          break;
        }
      }
      (m == OwnerMatch::kExact ? held.exact : held.legacy).push_back(e.ip);
    }
    if (!stale) return held;
    log::Warn("host-local: index of {} is stale, rescanning", dir_);
    Scan();
  }
  throw cni::Error(cni::kInternal, "index of " + dir_ + " unusable after a rescan");
}

std::vector<IpAddr> Store::ReleaseAttachment(std::string_view container_id, std::string_view ifname) {
  Held held = Find(container_id, ifname);
  bool exact = !held.exact.empty();
  std::string owner = exact ? EncodeOwner(container_id, ifname) : std::string(TrimSpace(container_id));
  std::vector<IpAddr> released;
  std::string errors;
  for (const IpAddr& ip : exact ? held.exact : held.legacy) {
    try {
      if (ReleaseIfOwner(ip, owner)) released.push_back(ip);
    } catch (const cni::Error& e) {
      cni::AppendMessage(errors, std::string(e.what()) + ": " + e.details());
    }
  }
  if (!errors.empty()) throw cni::Error(cni::kIoFailure, "cannot release every address of the attachment", errors);
  return released;
}

std::optional<IpAddr> Store::LastReserved(size_t range_set) const {
  std::optional<std::string> text;
  try {
    text = ReadAt(dir_fd_.get(), LastReservedFileName(range_set), dir_);
  } catch (const cni::Error& e) {
    log::Warn("host-local: {}: {}", e.what(), e.details());  // as the reference: only round-robin is lost
  }
  if (!text) return std::nullopt;
  return ParseCanonical(TrimSpace(*text));
}

void Store::SetLastReserved(size_t range_set, const IpAddr& ip) {
  std::string name = LastReservedFileName(range_set);
  BeginChange();
  // Overwritten from offset 0 and then cut, not opened with O_TRUNC (see index.cc: on ext4 a truncation
  // to zero makes the next one wait for the disk). Killed in between, the cursor may name another
  // address: only round-robin suffers, as the reference says of a stale cursor.
  WithSpace([&] {
    cni::UniqueFd fd(::openat(dir_fd_.get(), name.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0644));
    if (!fd.valid()) IoError("cannot write " + dir_ + "/" + name, errno);
    std::string text = ip.ToString();
    ssize_t n = ::pwrite(fd.get(), text.data(), text.size(), 0);
    if (n != static_cast<ssize_t>(text.size())) IoError("cannot write " + dir_ + "/" + name, n < 0 ? errno : ENOSPC);
    if (::ftruncate(fd.get(), static_cast<off_t>(text.size())) != 0)
      IoError("cannot write " + dir_ + "/" + name, errno);
  });
}

void Store::Commit() {
  if (!dir_fd_.valid() || !changed_) return;
  if (index_ready_ && !index_dropped_ && index_.NeedsRebuild()) Scan();  // a shard count that fits the entries
  BeginChange();  // before futimens: a kill from here on must not leave the old stamp matching
  changed_ = stamp_removed_ = false;
  if (index_dropped_) return;  // no stamp: the next call scans
  if (!index_ready_) {
    index_.Invalidate();
    return;
  }
  if (!RoomForIndex()) {
    if (index_.Drop())
      log::Info("host-local: little space left for {}: its index is dropped until there is more", dir_);
    return;
  }
  // A later change of the folder by anyone sets its mtime to the (coarse) clock of that moment, which is
  // >= `now`. So a recorded mtime strictly before `now` can never be reproduced by a later change. When
  // our own last change is not yet strictly before `now` (same clock tick, or a fine-grained timestamp),
  // the folder's mtime is set back to now - 1ns, which no later change can produce either.
  timespec now{};
  ::clock_gettime(CLOCK_REALTIME_COARSE, &now);
  DirStamp stamp = CurrentStamp();
  timespec mtime{static_cast<time_t>(stamp.mtime_sec), static_cast<long>(stamp.mtime_nsec)};
  if (!Before(mtime, now)) {
    timespec set = now;
    if (set.tv_nsec > 0) {
      --set.tv_nsec;
    } else {
      --set.tv_sec;
      set.tv_nsec = 999999999;
    }
    timespec times[2] = {{0, UTIME_OMIT}, set};
    bool pinned = ::futimens(dir_fd_.get(), times) == 0;
    if (pinned) {
      stamp = CurrentStamp();
      pinned = stamp.mtime_sec == set.tv_sec && stamp.mtime_nsec == set.tv_nsec;  // fs granularity
    }
    if (!pinned) {
      log::Debug("host-local: cannot pin the mtime of {}; its index will not be trusted", dir_);
      stamp.boot_id.clear();  // Save writes no stamp
    }
  }
  try {
    index_.Save(stamp);
  } catch (...) {
    index_.Drop();  // what a failed save wrote is worthless, and may be what the file system lacked
    throw;
  }
}

}  // namespace netiface::ipam
