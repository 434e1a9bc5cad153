// Files shared between processes: a bounded flock, atomic replacement, reading. Used by the IP store,
// the endpoint store, the flannel scratch files and the result cache.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "netiface/cni/unique_fd.h"

namespace netiface::cni {

// An exclusive flock(2) on `path` (created 0600 if missing), held until destruction. This is the same
// lock the reference plugins take (go-filemutex uses flock), so they exclude each other.
class FileLock {
 public:
  // Waits at most timeout_ms; then throws Error(kTryAgainLater) naming the path. Other failures:
  // Error(kIoFailure).
  static FileLock Acquire(const std::string& path, int timeout_ms);

 private:
  explicit FileLock(UniqueFd fd) : fd_(std::move(fd)) {}
  UniqueFd fd_;  // closing the last descriptor releases the flock
};

// How far a write must survive. kProcessCrash: a killed writer leaves the old file or the new one,
// never a partial one (rename only; no disk wait). kPowerLoss: the same after a power loss too (fsync of
// the file and of the folder: about 8 ms per write on this kind of machine's virtual disk).
enum class Sync { kProcessCrash, kPowerLoss };

// Writes `data` to a temporary file in the same folder, renames it over `path`, and with kPowerLoss
// fsyncs the file before and the folder after. Throws Error(kIoFailure) naming the path.
void WriteFileAtomic(const std::string& path, const std::string& data, int mode = 0600, Sync sync = Sync::kPowerLoss);

// WriteFileAtomic in two steps, so that a caller can create the file while it still works out the
// content: creating is the slow part on ext4 (the inode allocation). The constructor creates the
// temporary `<path>.tmp-<12 hex>`; Commit() writes it and renames it over `path` (with kPowerLoss,
// fsyncs as WriteFileAtomic does). Destroyed uncommitted, it removes the temporary. Throws
// Error(kIoFailure) naming the path.
//
// A writer that is killed leaves its temporary behind. From creation until it is renamed or removed the
// temporary carries an flock(2) of its writer, which the kernel drops when the writer dies: that is how
// RemoveAbandonedTemporaries tells a leftover from a temporary being written.
class AtomicFile {
 public:
  explicit AtomicFile(std::string path, int mode = 0600);
  ~AtomicFile();
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;
  const std::string& path() const { return path_; }
  // Once.
  void Commit(const std::string& data, Sync sync = Sync::kPowerLoss);

 private:
  std::string path_, tmp_;
  int mode_;
  UniqueFd fd_;  // the temporary, until Commit
};
// Removes the temporaries AtomicFile left for `path` (`<path>.tmp-<12 hex>`) whose writer is gone; one that
// is being written is left alone. Returns how many were removed. Never throws.
int RemoveAbandonedTemporaries(const std::string& path);
// The same for every AtomicFile temporary in the folder `dir` (`<name>.tmp-<12 hex>`). Never throws.
int RemoveAbandonedTemporariesIn(const std::string& dir);
// Truncates and writes `path` in place (mode `mode`, whatever existed) and fsyncs it: durable when it
// returns, for one journal commit instead of the two of WriteFileAtomic(kPowerLoss). A crash while it
// runs can leave the file torn or empty, so it is only for files whose readers treat an unparsable one
// as missing (flannel's saved delegate configs). Throws Error(kIoFailure) naming the path.
void WriteFileDurable(const std::string& path, const std::string& data, int mode = 0600);
// Writes all of `data` to `fd` (retrying short writes and EINTR). Throws Error(kIoFailure) "cannot
// write <what>".
void WriteAll(int fd, std::string_view data, const std::string& what);
// nullopt when the file does not exist; throws Error(kIoFailure) on other errors.
std::optional<std::string> ReadFileIfExists(const std::string& path);
// Creates the folder and its parents (like mkdir -p) with `mode` for the ones it creates.
void MakeDirs(const std::string& path, int mode = 0755);

}  // namespace netiface::cni
