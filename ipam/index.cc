#include "netiface/ipam/index.h"

#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

#include <charconv>
#include <cstring>

#include "netiface/cni/error.h"
#include "netiface/cni/file.h"
#include "netiface/cni/unique_fd.h"
#include "netiface/ipam/reservation.h"

namespace netiface::ipam {
namespace {

constexpr std::string_view kStampMagic = "netiface-index 1 ";
constexpr std::string_view kShardMagic = "netiface-shard 1 ";
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

std::string ShardPath(const std::string& dir, int shard) {
  std::string name = "/shard-";
  name += kHex[(shard >> 4) & 0xf];
  name += kHex[shard & 0xf];
  return dir + name;
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

std::string EncodeStamp(const DirStamp& s) {
  std::string body = std::string(kStampMagic) + Escape(s.boot_id) + " " + std::to_string(s.dev) + " " +
                     std::to_string(s.ino) + " " + std::to_string(s.mtime_sec) + " " + std::to_string(s.mtime_nsec);
  return body + " " + Hex64(Fnv1a(body)) + "\n";
}

std::optional<DirStamp> DecodeStamp(std::string_view text) {
  if (text.size() < kStampMagic.size() + 18 || text.back() != '\n') return std::nullopt;
  text.remove_suffix(1);
  std::string_view body = text.substr(0, text.size() - 17);
  if (text[text.size() - 17] != ' ' || text.substr(text.size() - 16) != Hex64(Fnv1a(body))) return std::nullopt;
  if (body.substr(0, kStampMagic.size()) != kStampMagic) return std::nullopt;
  auto f = Fields(body.substr(kStampMagic.size()), 5);
  if (!f) return std::nullopt;
  DirStamp s;
  auto boot = Unescape((*f)[0]);
  if (!boot || !ParseInt((*f)[1], s.dev) || !ParseInt((*f)[2], s.ino) || !ParseInt((*f)[3], s.mtime_sec) ||
      !ParseInt((*f)[4], s.mtime_nsec)) {
    return std::nullopt;
  }
  s.boot_id = *boot;
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

int ShardOf(std::string_view owner_key) { return static_cast<int>(Fnv1a(owner_key) % kIndexShards); }

bool OwnerIndex::Matches(const DirStamp& current) const {
  if (current.boot_id.empty()) return false;
  try {
    auto text = cni::ReadFileIfExists(dir_ + "/stamp");
    if (!text) return false;
    auto stored = DecodeStamp(*text);
    return stored && *stored == current;
  } catch (const cni::Error&) {
    return false;
  }
}

std::vector<IndexEntry>* OwnerIndex::Shard(int shard) {
  if (auto it = shards_.find(shard); it != shards_.end()) return &it->second;
  if (reset_) return &shards_[shard];
  std::optional<std::string> text;
  try {
    text = cni::ReadFileIfExists(ShardPath(dir_, shard));
  } catch (const cni::Error&) {
    return nullptr;
  }
  if (!text) return &shards_[shard];  // never written: empty
  auto entries = DecodeShard(*text);
  if (!entries) return nullptr;
  return &(shards_[shard] = std::move(*entries));
}

std::optional<std::vector<IndexEntry>> OwnerIndex::Lookup(std::string_view key) {
  auto* shard = Shard(ShardOf(key));
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
  for (int i = 0; i < kIndexShards; ++i) shards_[i];
  for (const auto& e : all) shards_[ShardOf(OwnerKey(e.owner))].push_back(e);
}

void OwnerIndex::Add(const IndexEntry& e) {
  int shard = ShardOf(OwnerKey(e.owner));
  auto* entries = Shard(shard);
  if (!entries) throw cni::Error(cni::kInternal, "index shard " + std::to_string(shard) + " added to before lookup");
  entries->push_back(e);
  dirty_.insert(shard);
}

void OwnerIndex::Remove(const cni::IpAddr& ip, std::string_view owner) {
  int shard = ShardOf(OwnerKey(owner));
  auto* entries = Shard(shard);
  if (!entries) throw cni::Error(cni::kInternal, "index shard " + std::to_string(shard) + " removed from before lookup");
  std::erase_if(*entries, [&](const IndexEntry& e) { return e.ip == ip && e.owner == owner; });
  dirty_.insert(shard);
}

void OwnerIndex::Save(const DirStamp& stamp) {
  cni::MakeDirs(dir_, 0700);
  InvalidateOrThrow();
  for (auto& [shard, entries] : shards_) {
    if (!reset_ && !dirty_.count(shard)) continue;
    // A rebuilt index writes every shard, the empty ones too, so that later calls never create one; an
    // emptied shard is kept, empty.
    WriteInPlace(ShardPath(dir_, shard), EncodeShard(entries),
                 reset_ || !entries.empty() ? Create::kYes : Create::kNo);
  }
  dirty_.clear();
  reset_ = false;
  if (!stamp.boot_id.empty()) WriteInPlace(dir_ + "/stamp", EncodeStamp(stamp));
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

}  // namespace netiface::ipam
