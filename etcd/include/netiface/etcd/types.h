// Values of etcd's v3 API as the agent and the CLI use them, independent of how they travel.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace netiface::etcd {

struct KeyValue {
  std::string key;
  std::string value;
  int64_t create_revision = 0;
  int64_t mod_revision = 0;
  int64_t version = 0;
  int64_t lease = 0;  // 0: not bound to a lease
  bool operator==(const KeyValue&) const = default;
};

// A range read: the keys in [key, range_end) at `revision` (the store's revision when it was served).
struct RangeResult {
  std::vector<KeyValue> kvs;
  int64_t revision = 0;
};

enum class EventType { kPut, kDelete };
struct Event {
  EventType type = EventType::kPut;
  KeyValue kv;  // a kDelete carries the key and its mod_revision (the deletion's revision); value is empty
};

// One message of a watch stream.
struct WatchResponse {
  int64_t revision = 0;          // header revision
  bool created = false;          // the first message of a watch
  bool canceled = false;         // the server ended the watch (compaction, ...)
  int64_t compact_revision = 0;  // > 0 when canceled because the start revision was compacted
  std::string cancel_reason;
  std::vector<Event> events;  // in revision order; every one of them matters
};

struct LeaseGrant {
  int64_t id = 0;
  int64_t ttl = 0;  // seconds granted
};

struct LeaseTtl {
  int64_t id = 0;
  int64_t ttl = -1;  // seconds left; -1 when the lease expired or never existed
  int64_t granted_ttl = 0;
};

// Every failure of the client. kUnavailable: no endpoint answered in time (connection refused, timeout,
// TLS handshake failure: worth retrying later). kRejected: a server answered with an error (HTTP 4xx/5xx
// with etcd's {"error","message","code"}). kProtocol: the answer was not what the API promises.
// kConfig: the client's own options are wrong (bad endpoint URL, unreadable TLS file): retrying is useless.
class Error : public std::runtime_error {
 public:
  enum Kind { kUnavailable, kRejected, kProtocol, kConfig };
  Error(Kind kind, const std::string& msg, int grpc_code = 0)
      : std::runtime_error(msg), kind_(kind), grpc_code_(grpc_code) {}
  Kind kind() const noexcept { return kind_; }
  int grpc_code() const noexcept { return grpc_code_; }  // etcd's "code" for kRejected (5 = not found, ...)

 private:
  Kind kind_;
  int grpc_code_;
};

}  // namespace netiface::etcd
