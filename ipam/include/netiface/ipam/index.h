// The owner index of one network folder: container ID -> reservations, so that ADD, DEL and CHECK do
// not read every file of the folder as the reference does. It lives OUTSIDE the folder
// (<dataDir>/.netiface/<network>/; network names start with an alphanumeric, so it cannot be a
// network's folder) and is only a cache: the folder's files are the truth.
//
// Layout: 256 shard files "shard-XX" (the entries whose OwnerKey hashes to XX, FNV-1a) and "stamp",
// the DirStamp of the folder state the shards describe. The stamp is emptied before any shard is
// rewritten and written last, so an interrupted save leaves no stamp and the next reader rebuilds.
// REQUIRES: the caller holds the folder's lock for the object's whole life.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "netiface/cni/ip.h"

namespace netiface::ipam {

inline constexpr int kIndexShards = 256;

// One reservation: the address and the file's trimmed content.
struct IndexEntry {
  cni::IpAddr ip;
  std::string owner;
  bool operator==(const IndexEntry&) const = default;
};

// What proves the shards current: the folder's identity, its st_mtim as recorded after our last change
// (see Store::Commit for why no later change can leave it equal) and the boot it was recorded in
// (after a crash of the machine unsynced shards may be lost).
struct DirStamp {
  uint64_t dev = 0;
  uint64_t ino = 0;
  int64_t mtime_sec = 0;
  int64_t mtime_nsec = 0;
  std::string boot_id;
  bool operator==(const DirStamp&) const = default;
};

// This boot's id (/proc/sys/kernel/random/boot_id), "" when unavailable.
std::string BootId();

// Text forms, exposed for tests. Decode* return nullopt on anything malformed or truncated.
std::string EncodeStamp(const DirStamp& s);
std::optional<DirStamp> DecodeStamp(std::string_view text);
std::string EncodeShard(const std::vector<IndexEntry>& entries);
std::optional<std::vector<IndexEntry>> DecodeShard(std::string_view text);
int ShardOf(std::string_view owner_key);

class OwnerIndex {
 public:
  explicit OwnerIndex(std::string dir) : dir_(std::move(dir)) {}

  const std::string& dir() const { return dir_; }
  // True when the stored stamp equals `current` (and `current` has a boot id): the shards on disk then
  // describe the folder exactly. Never throws.
  bool Matches(const DirStamp& current) const;
  // The entries whose OwnerKey equals `key`. nullopt when the shard cannot be read or is malformed (the
  // caller then rebuilds with Reset).
  std::optional<std::vector<IndexEntry>> Lookup(std::string_view key);
  // Replaces the whole content (after a full scan of the folder).
  void Reset(const std::vector<IndexEntry>& all);
  // Records a reservation created / removed by us. REQUIRES: Lookup of the entry's key succeeded, or
  // Reset, since this object was made.
  void Add(const IndexEntry& e);
  void Remove(const cni::IpAddr& ip, std::string_view owner);
  bool dirty() const { return !dirty_.empty() || reset_; }
  // Invalidates the stamp, writes the changed shards (after Reset: all of them, empty ones included),
  // then `stamp`. Every file is rewritten in place: only a rebuild creates files, and an emptied shard
  // stays, empty. Throws Error(kIoFailure); the stamp is then absent or invalid.
  void Save(const DirStamp& stamp);
  // Spoils the stamp in place (removes it when that fails) so that the shards are not trusted. Never
  // throws.
  void Invalidate() const;
  // Spoils it in place; throws Error(kIoFailure) when an existing stamp cannot be.
  void InvalidateOrThrow() const;

 private:
  std::vector<IndexEntry>* Shard(int shard);  // loaded shard, nullptr when unreadable

  std::string dir_;
  std::map<int, std::vector<IndexEntry>> shards_;  // loaded (or reset) shards
  std::set<int> dirty_;
  bool reset_ = false;  // every shard is in shards_ and must be written
};

}  // namespace netiface::ipam
