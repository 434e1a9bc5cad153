// The owner index of one network folder: container ID -> reservations, so that ADD, DEL and CHECK do
// not read every file of the folder as the reference does. It lives OUTSIDE the folder
// (<dataDir>/.netiface/<network>/; network names start with an alphanumeric, so it cannot be a
// network's folder) and is only a cache: the folder's files are the truth.
//
// Layout: "stamp" and the shard files "shard-<i>" (lower-case hex, at least two digits) for i below the
// shard count: shard i holds the entries whose OwnerKey hashes (FNV-1a) to i modulo the count. The count is
// a power of two chosen from the number of entries whenever the index is rebuilt (about kEntriesPerShard
// per shard, at most kMaxShards), so the index costs files and bytes in proportion to what it holds; when
// the entries drift far from the count, NeedsRebuild() asks the owner for a rebuild. The stamp holds the
// DirStamp of the folder state the shards describe and the layout; it is spoilt before any shard is
// rewritten and written last, so an interrupted save leaves no valid stamp and the next reader rebuilds.
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

// The shard count a rebuild gives an index of n entries: the smallest power of two that keeps shards at
// kEntriesPerShard entries or fewer, at most kMaxShards.
inline constexpr uint64_t kEntriesPerShard = 64;
inline constexpr uint32_t kMaxShards = 1024;

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

// What the stamp file holds: the folder state the shards describe, and their layout.
struct IndexStamp {
  DirStamp dir;
  uint32_t shards = 1;   // a power of two, at most kMaxShards
  uint64_t entries = 0;  // over all shards
  bool operator==(const IndexStamp&) const = default;
};

// This boot's id (/proc/sys/kernel/random/boot_id), "" when unavailable.
std::string BootId();

// Text forms, exposed for tests. Decode* return nullopt on anything malformed or truncated (and a stamp
// whose shard count is not a power of two up to kMaxShards).
std::string EncodeStamp(const IndexStamp& s);
std::optional<IndexStamp> DecodeStamp(std::string_view text);
std::string EncodeShard(const std::vector<IndexEntry>& entries);
std::optional<std::vector<IndexEntry>> DecodeShard(std::string_view text);
uint32_t ShardsFor(uint64_t entries);
uint32_t ShardOf(std::string_view owner_key, uint32_t shards);

class OwnerIndex {
 public:
  explicit OwnerIndex(std::string dir) : dir_(std::move(dir)) {}

  const std::string& dir() const { return dir_; }
  // True when the stored stamp's folder state equals `current` (and `current` has a boot id): the shards
  // on disk then describe the folder exactly, and their layout is taken from the stamp. Never throws.
  bool Matches(const DirStamp& current);
  // The entries whose OwnerKey equals `key`. nullopt when the shard cannot be read or is malformed, or
  // when neither Matches nor Reset has told the layout (the caller then rebuilds with Reset).
  std::optional<std::vector<IndexEntry>> Lookup(std::string_view key);
  // Replaces the whole content (after a full scan of the folder), with the shard count for its size.
  void Reset(const std::vector<IndexEntry>& all);
  // Records a reservation created / removed by us. REQUIRES: Lookup of the entry's key succeeded, or
  // Reset, since this object was made.
  void Add(const IndexEntry& e);
  void Remove(const cni::IpAddr& ip, std::string_view owner);
  bool dirty() const { return !dirty_.empty() || reset_; }
  // The entries have outgrown the shard count fourfold or shrunk below a quarter of it: the owner
  // should Reset from a scan before it saves.
  bool NeedsRebuild() const;
  // What the index takes on disk once saved, at most: files (the shards and the stamp) and bytes with
  // each file rounded up to `block` bytes.
  uint64_t Files() const { return uint64_t{shard_count_} + 1; }
  uint64_t FootprintBytes(uint64_t block) const;
  // Invalidates the stamp, writes the changed shards (after Reset: all of them, empty ones included, and
  // the shard files of an older layout are removed), then `stamp`. Files are rewritten in place: only a
  // rebuild creates or removes them, and an emptied shard stays, empty. Throws Error(kIoFailure); the
  // stamp is then absent or invalid.
  void Save(const DirStamp& stamp);
  // Spoils the stamp in place (removes it when that fails) so that the shards are not trusted. Never
  // throws.
  void Invalidate() const;
  // Spoils it in place; throws Error(kIoFailure) when an existing stamp cannot be.
  void InvalidateOrThrow() const;
  // Removes the stamp, then every other file of the index and its folder, giving their space back; the
  // object then knows no layout until Reset. Returns whether there was anything to remove. Never throws.
  bool Drop();

 private:
  std::vector<IndexEntry>* Shard(uint32_t shard);  // loaded shard, nullptr when unreadable
  void RemoveOtherLayouts() const;

  std::string dir_;
  uint32_t shard_count_ = 0;  // 0: layout unknown
  uint64_t entries_ = 0;
  std::map<uint32_t, std::vector<IndexEntry>> shards_;  // loaded (or reset) shards
  std::set<uint32_t> dirty_;
  bool reset_ = false;  // every shard is in shards_ and must be written
};

}  // namespace netiface::ipam
