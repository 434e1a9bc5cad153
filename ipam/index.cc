#include "netiface/ipam/index.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <cstring>
#include <memory>

#include "netiface/cni/error.h"
#include "netiface/cni/file.h"
#include "netiface/cni/unique_fd.h"
#include "netiface/ipam/reservation.h"

namespace netiface::ipam {
namespace {

constexpr std::string_view kStampMagic = "netiface-index 2 ";
constexpr std::string_view kShardMagic = "netiface-shard 1 ";
constexpr std::string_view kShardPrefix = "shard-";
constexpr char kHex[] = "0123456789abcdef";

uint64_t Fnv1a(std::string_view s) {
  uint64_t h = 1469598103934665603ull;
  for (unsigned char c : s) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return h;
}

std::string Hex64(uint64_t v) {
  std::string s(16, '0');
  for (int i = 15; i >= 0; --i, v >>= 4) s[static_cast<size_t>(i)] = kHex[v & 0xf];
  return s;
}

// Bytes outside the printable ASCII range, space and '%' become %XX: one entry stays one line.
std::string Escape(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (unsigned char c : s) {
    if (c <= 0x20 || c >= 0x7f || c == '%') {
      out += '%';
      out += kHex[c >> 4];
      out += kHex[c & 0xf];
    } else {
      out += static_cast<char>(c);
    }
  }
  return out;
}

int HexDigit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return -1;
}

std::optional<std::string> Unescape(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] != '%') {
      out += s[i];
      continue;
    }
    if (i + 2 >= s.size()) return std::nullopt;
    int hi = HexDigit(s[i + 1]), lo = HexDigit(s[i + 2]);
    if (hi < 0 || lo < 0) return std::nullopt;
    out += static_cast<char>(hi * 16 + lo);
    i += 2;
  }
  return out;
}

// Splits `s` at spaces into exactly `n` fields; nullopt otherwise.
std::optional<std::vector<std::string_view>> Fields(std::string_view s, size_t n) {
  std::vector<std::string_view> out;
  while (out.size() + 1 < n) {
    size_t sp = s.find(' ');
    if (sp == std::string_view::npos) return std::nullopt;
    out.push_back(s.substr(0, sp));
    s.remove_prefix(sp + 1);
  }
  if (s.find(' ') != std::string_view::npos) return std::nullopt;
  out.push_back(s);
  return out;
}

template <typename T>
bool ParseInt(std::string_view s, T& v) {
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  return !s.empty() && ec == std::errc() && p == s.data() + s.size();
}

// The index files are rewritten and invalidated in place, never unlinked and created again: on ext4 a new
// inode costs a scan past the recently deleted ones, which with a pod's churn of reservation files was
// most of a host-local call's CPU.
enum class Create { kYes, kNo };

// Rewrites `path` in place: pwrite from offset 0, then cut to length. No O_TRUNC: on ext4 truncating a
// file to zero makes the next truncation wait for the disk (auto_da_alloc). No rename, no fsync: the
// stamp protocol covers an interrupted write. With Create::kNo a missing file stays missing.
// REQUIRES: `data` non-empty.
void WriteInPlace(const std::string& path, const std::string& data, Create create = Create::kYes) {
  cni::UniqueFd fd(::open(path.c_str(), O_WRONLY | O_CLOEXEC | (create == Create::kYes ? O_CREAT : 0), 0600));
  if (!fd.valid() && create == Create::kNo && errno == ENOENT) return;
  if (!fd.valid()) throw cni::Error(cni::kIoFailure, "cannot write " + path, std::strerror(errno));
  size_t off = 0;
  while (off < data.size()) {
    ssize_t n = ::pwrite(fd.get(), data.data() + off, data.size() - off, static_cast<off_t>(off));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw cni::Error(cni::kIoFailure, "cannot write " + path, std::strerror(errno));
    off += static_cast<size_t>(n);
  }
  if (::ftruncate(fd.get(), static_cast<off_t>(data.size())) != 0) {
    throw cni::Error(cni::kIoFailure, "cannot truncate " + path, std::strerror(errno));
  }
}

// Makes the stamp at `path` untrustworthy by overwriting the first byte of its magic; false (errno
// set) when that failed for another reason than a missing stamp.
bool SpoilStamp(const std::string& path) {
  cni::UniqueFd fd(::open(path.c_str(), O_WRONLY | O_CLOEXEC));
  if (!fd.valid()) return errno == ENOENT;
  while (::pwrite(fd.get(), "!", 1, 0) != 1) {
    if (errno != EINTR) return false;
  }
  return true;
}

std::string ShardName(uint32_t shard) {
  std::string hex;
  do {
    hex.insert(hex.begin(), kHex[shard & 0xf]);
    shard >>= 4;
  } while (shard != 0);
  if (hex.size() < 2) hex.insert(hex.begin(), '0');
  return std::string(kShardPrefix) + hex;
}

std::string ShardPath(const std::string& dir, uint32_t shard) { return dir + "/" + ShardName(shard); }

// The shard number of a file name written by ShardName, nullopt for any other name.
std::optional<uint32_t> ShardNumber(std::string_view name) {
  if (!name.starts_with(kShardPrefix)) return std::nullopt;
  name.remove_prefix(kShardPrefix.size());
  uint32_t n = 0;
  if (name.size() < 2 || name.size() > 8) return std::nullopt;
  auto [p, ec] = std::from_chars(name.data(), name.data() + name.size(), n, 16);
  if (ec != std::errc() || p != name.data() + name.size() || ShardName(n).substr(kShardPrefix.size()) != name) {
    return std::nullopt;
  }
  return n;
}

bool IsPowerOfTwo(uint64_t v) { return v != 0 && (v & (v - 1)) == 0; }

// The names in `dir` (without "." and ".."); empty when it cannot be listed.
std::vector<std::string> ListNames(const std::string& dir) {
  std::vector<std::string> out;
  std::unique_ptr<DIR, int (*)(DIR*)> d(::opendir(dir.c_str()), ::closedir);
  if (!d) return out;
  while (dirent* e = ::readdir(d.get())) {
    std::string_view name = e->d_name;
    if (name != "." && name != "..") out.emplace_back(name);
  }
  return out;
}

}  // namespace

std::string BootId() {
  try {
    auto text = cni::ReadFileIfExists("/proc/sys/kernel/random/boot_id");
    if (!text) return {};
    return std::string(TrimSpace(*text));
  } catch (const cni::Error&) {
    return {};
  }
}

std::string EncodeStamp(const IndexStamp& s) {
  std::string body = std::string(kStampMagic) + Escape(s.dir.boot_id) + " " + std::to_string(s.dir.dev) + " " +
                     std::to_string(s.dir.ino) + " " + std::to_string(s.dir.mtime_sec) + " " +
                     std::to_string(s.dir.mtime_nsec) + " " + std::to_string(s.shards) + " " +
                     std::to_string(s.entries);
  return body + " " + Hex64(Fnv1a(body)) + "\n";
}

std::optional<IndexStamp> DecodeStamp(std::string_view text) {
  if (text.size() < kStampMagic.size() + 18 || text.back() != '\n') return std::nullopt;
  text.remove_suffix(1);
  std::string_view body = text.substr(0, text.size() - 17);
  if (text[text.size() - 17] != ' ' || text.substr(text.size() - 16) != Hex64(Fnv1a(body))) return std::nullopt;
  if (body.substr(0, kStampMagic.size()) != kStampMagic) return std::nullopt;
  auto f = Fields(body.substr(kStampMagic.size()), 7);
  if (!f) return std::nullopt;
  IndexStamp s;
  auto boot = Unescape((*f)[0]);
  if (!boot || !ParseInt((*f)[1], s.dir.dev) || !ParseInt((*f)[2], s.dir.ino) || !ParseInt((*f)[3], s.dir.mtime_sec) ||
      !ParseInt((*f)[4], s.dir.mtime_nsec) || !ParseInt((*f)[5], s.shards) || !ParseInt((*f)[6], s.entries)) {
    return std::nullopt;
  }
  if (!IsPowerOfTwo(s.shards) || s.shards > kMaxShards) return std::nullopt;
  s.dir.boot_id = *boot;
  return s;
}

std::string EncodeShard(const std::vector<IndexEntry>& entries) {
  std::string body;
  for (const auto& e : entries) body += e.ip.ToString() + " " + Escape(e.owner) + "\n";
  return std::string(kShardMagic) + std::to_string(entries.size()) + " " + Hex64(Fnv1a(body)) + "\n" + body;
}

std::optional<std::vector<IndexEntry>> DecodeShard(std::string_view text) {
  size_t nl = text.find('\n');
  if (nl == std::string_view::npos || text.substr(0, kShardMagic.size()) != kShardMagic) return std::nullopt;
  auto head = Fields(text.substr(kShardMagic.size(), nl - kShardMagic.size()), 2);
  size_t count = 0;
  if (!head || !ParseInt((*head)[0], count)) return std::nullopt;
  std::string_view body = text.substr(nl + 1);
  if ((*head)[1] != Hex64(Fnv1a(body))) return std::nullopt;
  std::vector<IndexEntry> out;
  while (!body.empty()) {
    size_t end = body.find('\n');
    if (end == std::string_view::npos) return std::nullopt;
    std::string_view line = body.substr(0, end);
    body.remove_prefix(end + 1);
    size_t sp = line.find(' ');
    if (sp == std::string_view::npos) return std::nullopt;
    auto ip = cni::IpAddr::Parse(line.substr(0, sp));
    auto owner = Unescape(line.substr(sp + 1));
    if (!ip || !owner) return std::nullopt;
    out.push_back({*ip, std::move(*owner)});
  }
  if (out.size() != count) return std::nullopt;
  return out;
}

uint32_t ShardsFor(uint64_t entries) {
  uint32_t shards = 1;
  while (shards < kMaxShards && uint64_t{shards} * kEntriesPerShard < entries) shards *= 2;
  return shards;
}

uint32_t ShardOf(std::string_view owner_key, uint32_t shards) {
  return static_cast<uint32_t>(Fnv1a(owner_key) % shards);
}

bool OwnerIndex::Matches(const DirStamp& current) {
  if (current.boot_id.empty()) return false;
  try {
    auto text = cni::ReadFileIfExists(dir_ + "/stamp");
    if (!text) return false;
    auto stored = DecodeStamp(*text);
    if (!stored || stored->dir != current) return false;
    shards_.clear();
    dirty_.clear();
    reset_ = false;
    shard_count_ = stored->shards;
    entries_ = stored->entries;
    return true;
  } catch (const cni::Error&) {
    return false;
  }
}

std::vector<IndexEntry>* OwnerIndex::Shard(uint32_t shard) {
  if (auto it = shards_.find(shard); it != shards_.end()) return &it->second;
  if (reset_) return &shards_[shard];
  std::optional<std::string> text;
  try {
    text = cni::ReadFileIfExists(ShardPath(dir_, shard));
  } catch (const cni::Error&) {
    return nullptr;
  }
  if (!text) return nullptr;  // a rebuild writes every shard: a missing one was removed by someone
  auto entries = DecodeShard(*text);
  if (!entries) return nullptr;
  return &(shards_[shard] = std::move(*entries));
}

std::optional<std::vector<IndexEntry>> OwnerIndex::Lookup(std::string_view key) {
  if (shard_count_ == 0) return std::nullopt;
  auto* shard = Shard(ShardOf(key, shard_count_));
  if (!shard) return std::nullopt;
  std::vector<IndexEntry> out;
  for (const auto& e : *shard) {
    if (OwnerKey(e.owner) == key) out.push_back(e);
  }
  return out;
}

void OwnerIndex::Reset(const std::vector<IndexEntry>& all) {
  shards_.clear();
  dirty_.clear();
  reset_ = true;
  shard_count_ = ShardsFor(all.size());
  entries_ = all.size();
  for (uint32_t i = 0; i < shard_count_; ++i) shards_[i];
  for (const auto& e : all) shards_[ShardOf(OwnerKey(e.owner), shard_count_)].push_back(e);
}

void OwnerIndex::Add(const IndexEntry& e) {
  const uint32_t shard = shard_count_ ? ShardOf(OwnerKey(e.owner), shard_count_) : 0;
  auto* entries = shard_count_ ? Shard(shard) : nullptr;
  if (!entries) throw cni::Error(cni::kInternal, "index shard " + std::to_string(shard) + " added to before lookup");
  entries->push_back(e);
  ++entries_;
  dirty_.insert(shard);
}

void OwnerIndex::Remove(const cni::IpAddr& ip, std::string_view owner) {
  const uint32_t shard = shard_count_ ? ShardOf(OwnerKey(owner), shard_count_) : 0;
  auto* entries = shard_count_ ? Shard(shard) : nullptr;
  if (!entries)
    throw cni::Error(cni::kInternal, "index shard " + std::to_string(shard) + " removed from before lookup");
  size_t removed = std::erase_if(*entries, [&](const IndexEntry& e) { return e.ip == ip && e.owner == owner; });
  entries_ -= std::min<uint64_t>(entries_, removed);
  dirty_.insert(shard);
}

bool OwnerIndex::NeedsRebuild() const {
  if (shard_count_ == 0) return false;
  const uint64_t capacity = uint64_t{shard_count_} * kEntriesPerShard;
  const bool outgrown = shard_count_ < kMaxShards && entries_ > 4 * capacity;
  const bool shrunk = shard_count_ > 1 && 4 * entries_ < capacity;
  return outgrown || shrunk;
}

uint64_t OwnerIndex::FootprintBytes(uint64_t block) const {
  // An entry is one line: an address and an escaped owner, about 80 bytes for a real container ID.
  constexpr uint64_t kBytesPerEntry = 96;
  block = std::max<uint64_t>(block, 1);
  const uint64_t data = entries_ * kBytesPerEntry + Files() * 64;  // plus headers
  return Files() * block + (data + block - 1) / block * block;
}

void OwnerIndex::RemoveOtherLayouts() const {
  for (const auto& name : ListNames(dir_)) {
    auto n = ShardNumber(name);
    if (name == "stamp" || (n && *n < shard_count_)) continue;
    if (name.starts_with(kShardPrefix)) ::unlink((dir_ + "/" + name).c_str());
  }
}

void OwnerIndex::Save(const DirStamp& stamp) {
  if (shard_count_ == 0) throw cni::Error(cni::kInternal, "index of " + dir_ + " saved without a layout");
  cni::MakeDirs(dir_, 0700);
  InvalidateOrThrow();
  for (auto& [shard, entries] : shards_) {
    if (!reset_ && !dirty_.count(shard)) continue;
    // A rebuilt index writes every shard, the empty ones too, so that later calls never create one; an
    // emptied shard is kept, empty.
    WriteInPlace(ShardPath(dir_, shard), EncodeShard(entries), reset_ || !entries.empty() ? Create::kYes : Create::kNo);
  }
  if (reset_) RemoveOtherLayouts();
  dirty_.clear();
  reset_ = false;
  if (!stamp.boot_id.empty()) WriteInPlace(dir_ + "/stamp", EncodeStamp({stamp, shard_count_, entries_}));
}

void OwnerIndex::Invalidate() const {
  // Best effort: a stamp that cannot be spoilt in place is removed.
  if (!SpoilStamp(dir_ + "/stamp")) ::unlink((dir_ + "/stamp").c_str());
}

void OwnerIndex::InvalidateOrThrow() const {
  if (!SpoilStamp(dir_ + "/stamp")) {
    throw cni::Error(cni::kIoFailure, "cannot invalidate " + dir_ + "/stamp", std::strerror(errno));
  }
}

bool OwnerIndex::Drop() {
  bool removed = ::unlink((dir_ + "/stamp").c_str()) == 0;  // first: no moment with a stamp and missing shards
  for (const auto& name : ListNames(dir_)) removed |= ::unlink((dir_ + "/" + name).c_str()) == 0;
  ::rmdir(dir_.c_str());
  shards_.clear();
  dirty_.clear();
  reset_ = false;
  shard_count_ = 0;
  entries_ = 0;
  return removed;
}

}  // namespace netiface::ipam
