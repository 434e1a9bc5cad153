// The v3 JSON gateway's wire format, as pure functions (no I/O): request bodies and response parsing.
// The gateway's quirks are handled here and nowhere else: keys and values are base64, int64 values are
// JSON strings, and a field at its default value (0, false, "", empty list) is left out of a response.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "netiface/etcd/types.h"

namespace netiface::etcd {

std::string Base64Encode(std::string_view bytes);
// Throws Error(kProtocol) on text that is not standard padded base64.
std::string Base64Decode(std::string_view text);
// The range_end that makes a range read cover every key starting with `prefix` (etcd's
// clientv3.GetPrefixRangeEnd: the prefix with its last byte below 0xff incremented, "\0" when all are 0xff).
std::string PrefixRangeEnd(std::string_view prefix);

// Request bodies (JSON text for POST /v3/...).
std::string RangeRequest(std::string_view key, std::string_view range_end, int64_t revision = 0);
std::string PutRequest(std::string_view key, std::string_view value, int64_t lease);
std::string DeleteRangeRequest(std::string_view key, std::string_view range_end = {});
// /v3/kv/txn: if the key's mod_revision equals `mod_revision` (0: the key does not exist), put it.
std::string PutIfModRevisionRequest(std::string_view key, std::string_view value, int64_t lease, int64_t mod_revision);
// /v3/kv/txn: if `key` is absent and no key under `prefix` was created after `revision`, put it: writers
// that chose from the same listing at `revision` cannot both win, even when their keys differ.
std::string CreateIfNoneCreatedAfterRequest(std::string_view key, std::string_view value, int64_t lease,
                                            std::string_view prefix, int64_t revision);
// /v3/kv/txn: if the key's mod_revision equals `mod_revision`, delete it.
std::string DeleteIfModRevisionRequest(std::string_view key, int64_t mod_revision);
std::string LeaseGrantRequest(int64_t ttl_seconds);
std::string LeaseRevokeRequest(int64_t id);
std::string LeaseTimeToLiveRequest(int64_t id);
// /v3/watch create_request over [key, range_end) from `start_revision` (0: from now), with progress
// notifications on (an idle watch then still hears from the server).
std::string WatchCreateRequest(std::string_view key, std::string_view range_end, int64_t start_revision);

// Response parsers. Each throws Error(kProtocol) when the JSON does not have the expected shape, and
// Error(kRejected, message, code) when it is the gateway's error object {"error","message","code"}.
RangeResult ParseRangeResponse(const nlohmann::json& j);
int64_t ParsePutResponse(const nlohmann::json& j);          // the store's revision after the put
int64_t ParseDeleteRangeResponse(const nlohmann::json& j);  // how many keys were deleted
struct TxnOutcome {
  bool succeeded = false;
  int64_t revision = 0;
};
TxnOutcome ParseTxnResponse(const nlohmann::json& j);
LeaseGrant ParseLeaseGrantResponse(const nlohmann::json& j);
LeaseTtl ParseLeaseTimeToLiveResponse(const nlohmann::json& j);
// One line of the watch stream: {"result": {...}} (or an error object).
WatchResponse ParseWatchLine(std::string_view line);
// Throws the Error a gateway error object stands for; returns when `j` is not one.
void ThrowIfError(const nlohmann::json& j);

}  // namespace netiface::etcd
