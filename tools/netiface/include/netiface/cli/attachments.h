// The result cache's attachments as an operator sees them: `netiface ls` lists them, and `netiface gc`
// decides which of them are stale (pure: the cache entries and the namespace check come in as values).
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "netiface/cni/config.h"
#include "netiface/cni/runtime/cache.h"

namespace netiface::cli {

// --- ls ---

// The container's addresses of a cached result ("10.1.0.3/24"), at whatever version it was written;
// [] when the entry has none or it cannot be read.
std::vector<std::string> CachedAddresses(const cni::CacheEntry& e);
// Entries of `network` ("" = every network), sorted by network, container ID, ifname.
std::vector<cni::CacheEntry> AttachmentsOf(std::vector<cni::CacheEntry> cached, const std::string& network);
// "NETWORK  CONTAINER  IFNAME  NETNS  ADDRESSES" ("-" for an unknown netns or no address; addresses
// joined by ",").
std::string FormatAttachmentTable(const std::vector<cni::CacheEntry>& entries);
// [{"network","containerId","ifname","netns","addresses":[...]}]; netns is "" when unknown.
nlohmann::json AttachmentsToJson(const std::vector<cni::CacheEntry>& entries);

// --- gc ---

// What says which attachments are valid. At least one of valid, live and all_stale is required.
struct GcOptions {
  std::vector<cni::Attachment> valid;  // NETNS or --container-id, --valid, --valid-file
  bool live = false;                   // an attachment whose cached netns still exists is valid
  bool all_stale = false;              // every attachment not in `valid` is stale, netns unknown or not
};

struct GcDecision {
  cni::CacheEntry entry;
  bool del = false;
  std::string why;
};

struct GcPlan {
  std::vector<GcDecision> decisions;   // the network's cached attachments, in cache order
  std::vector<cni::Attachment> valid;  // what the plugins' GC gets: options.valid, then what is kept
  std::vector<cni::CacheEntry> Stale() const;
};

// Which cached attachments of `network` to DEL. An attachment is kept when it is in o.valid, when o.live
// and its netns exists (`netns_exists`), and when its netns is unknown (an older libcni wrote no netns:
// nothing tells whether it is live) unless o.all_stale; every other one is stale. Throws
// cni::Error(kInvalidEnv) when o names no source of valid attachments.
GcPlan PlanGc(const std::vector<cni::CacheEntry>& cached, const std::string& network, const GcOptions& o,
              const std::function<bool(const std::string& netns)>& netns_exists);
// `netiface gc --dry-run`: "ACTION  CONTAINER  IFNAME  NETNS  WHY" (ACTION del or keep), then what the
// plugins' GC would get when `gc_plugins`.
std::string FormatGcPlan(const GcPlan& plan, bool gc_plugins);

// A --valid-file: one CONTAINERID[/IFNAME] per line (IFNAME defaults to `default_ifname`); blank lines
// and lines starting with '#' are skipped, spaces around an entry are ignored. Throws
// cni::Error(kInvalidEnv) naming the line for an entry that is not a valid container ID and ifname.
std::vector<cni::Attachment> ParseValidList(std::string_view text, const std::string& default_ifname);
// "CID" or "CID/IFNAME" (IFNAME defaults to `default_ifname`), validated as skel validates them.
cni::Attachment ParseAttachment(std::string_view text, const std::string& default_ifname);

}  // namespace netiface::cli
