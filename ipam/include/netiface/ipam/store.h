// The disk store of one network, shared with the reference host-local: <dataDir>/<network>/ holds one
// file per reserved address (reservation.h), last_reserved_ip.<set> cursors and `lock`, the flock every
// writer takes (ours for a whole verb, the reference's per step). A Store object holds that lock for its
// whole life.
//
// Reservations are created crash-safe: the content goes into an unnamed O_TMPFILE (or, where the file
// system lacks it, ".netiface-tmp", removed by the next run) which is then link(2)ed to the address's
// name; the link fails with EEXIST when the address is taken, so it is the exclusive create, and a kill
// at any moment leaves either a complete reservation or none.
//
// Lookups by container ID go through the OwnerIndex (index.h), which is trusted only when its stamp
// equals the folder's current state; otherwise the folder is scanned once (O(N)) and the index rebuilt.
// Every entry the index returns is read back from its file before it is acted upon.
//
// The index never costs a reservation its space: it is saved only while the file system has room to
// spare (RoomForIndex; otherwise it is dropped and every call scans), and a write of the store that
// fails for want of space (ENOSPC, EDQUOT) drops the index, giving its blocks back, and is tried once more.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "netiface/cni/file.h"
#include "netiface/cni/ip.h"
#include "netiface/cni/unique_fd.h"
#include "netiface/ipam/config.h"
#include "netiface/ipam/index.h"
#include "netiface/ipam/range.h"

namespace netiface::ipam {

// <dataDir>/<network>, and where its index lives.
std::string NetworkDir(const StoreConfig& c);
std::string IndexDir(const StoreConfig& c);

// Every reservation under a network folder (<dataDir>/<network>), each file's content trimmed, in
// directory order; nullopt when the folder does not exist. Read-only and takes no lock, so a listing
// taken during an ADD or DEL may be one reservation behind. Throws Error(kIoFailure) when the folder
// or a file in it cannot be read.
std::optional<std::vector<IndexEntry>> ReadReservations(const std::string& network_dir);

class Store {
 public:
  // Opens the network's folder and takes its lock, waiting at most c.lock_timeout_ms.
  // `create`: make the folder (0755, with parents) when missing; otherwise return nullopt then.
  // Throws Error(kTryAgainLater) on lock timeout, Error(kIoFailure) when the folder is unusable.
  static std::optional<Store> Open(const StoreConfig& c, bool create);

  Store(Store&&) noexcept = default;
  Store& operator=(Store&&) = delete;
  // Saves the index (Commit), then releases the lock. Never throws.
  ~Store();

  const std::string& dir() const { return dir_; }

  // Creates the reservation of `ip` for (container_id, ifname). False when a file of that name exists.
  bool Reserve(const cni::IpAddr& ip, std::string_view container_id, std::string_view ifname);
  // The first candidate the iterator yields that could be reserved, nullopt when none could.
  std::optional<Candidate> ReserveFirst(CandidateIter& it, std::string_view container_id, std::string_view ifname);
  // Removes `ip`'s file when its trimmed content still equals `owner`. False when it does not exist or
  // belongs to someone else. Throws Error(kIoFailure) when it cannot be removed.
  bool ReleaseIfOwner(const cni::IpAddr& ip, std::string_view owner);

  // The trimmed content of `ip`'s file, nullopt when there is none.
  std::optional<std::string> Owner(const cni::IpAddr& ip) const;
  bool Exists(const cni::IpAddr& ip) const;

  // The reservations of an attachment: files holding exactly EncodeOwner(id, ifname), and legacy files
  // holding only the container ID.
  struct Held {
    std::vector<cni::IpAddr> exact;
    std::vector<cni::IpAddr> legacy;
  };
  Held Find(std::string_view container_id, std::string_view ifname);
  // DEL: removes the exact matches or, when there are none, the legacy ones (the reference's
  // ReleaseByID). Tries every file; then throws Error(kIoFailure) naming all that could not be removed.
  std::vector<cni::IpAddr> ReleaseAttachment(std::string_view container_id, std::string_view ifname);

  // Every reservation in the folder, read from disk (O(N)); also rebuilds the index and removes stale
  // temporaries of ours.
  std::vector<IndexEntry> Scan();

  // Round-robin cursor of a range set (last_reserved_ip.<i>), nullopt when absent or unparsable.
  std::optional<cni::IpAddr> LastReserved(size_t range_set) const;
  // Rewritten in place as the reference does (no rename: the folder is not touched once it exists).
  void SetLastReserved(size_t range_set, const cni::IpAddr& ip);

  // Records the folder's state in the index after our changes; rebuilds it first when its shard count no
  // longer fits, and drops it instead when the file system has little room left. Throws Error(kIoFailure)
  // when the index cannot be written (it is then dropped). Called by the destructor when needed.
  void Commit();
  // For tests: whether the index was trusted by this object without a scan.
  bool index_was_trusted() const { return index_trusted_; }
  bool scanned() const { return scanned_; }

 private:
  Store(cni::FileLock lock, cni::UniqueFd dir_fd, std::string dir, std::string index_dir);
  // REQUIRES: called before every change to the folder. The first call of a Commit cycle removes the
  // index's stamp, so that whatever happens until Commit, the old stamp can never vouch for the folder.
  void BeginChange();
  void EnsureIndex();
  void IndexAdd(const cni::IpAddr& ip, std::string_view owner);
  // Runs `write`, a write of the store; when it fails for want of space, drops the index (YieldIndexSpace)
  // and runs it once more.
  template <typename Write>
  auto WithSpace(Write&& write) -> decltype(write());
  // Drops the index to free its space (the next lookup rescans); false when it held nothing.
  bool YieldIndexSpace();
  // Whether the file system has room to spare for the index (see kIndexMinFreeBytes in store.cc).
  bool RoomForIndex() const;
  DirStamp CurrentStamp() const;
  std::vector<IndexEntry> ReadAll();

  // Declared first: destroyed last, so the lock outlives every other change.
  cni::FileLock lock_;
  cni::UniqueFd dir_fd_;
  std::string dir_;
  OwnerIndex index_;
  std::string boot_id_;
  bool index_ready_ = false;
  bool index_trusted_ = false;
  bool scanned_ = false;
  bool changed_ = false;        // the folder or the index changed since the last Commit
  bool stamp_removed_ = false;  // BeginChange removed the stamp in this Commit cycle
  bool index_dropped_ = false;  // YieldIndexSpace removed the index: not saved again by this object
};

}  // namespace netiface::ipam
