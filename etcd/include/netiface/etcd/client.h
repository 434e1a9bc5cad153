// An etcd v3 client over the JSON gateway (POST /v3/...), libcurl and nlohmann-json.
// Thread-safe: unary calls may come from several threads (they serialize on one reused connection per
// endpoint); a Watch runs on its own connection in the calling thread.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "netiface/etcd/types.h"

namespace netiface::etcd {

struct ClientOptions {
  std::vector<std::string> endpoints;  // "http://host:port" or "https://host:port", tried in order
  std::string ca_file;                 // https: CA bundle to verify the server ("" = system default)
  std::string cert_file;               // https: client certificate (mutual TLS), with key_file
  std::string key_file;
  int connect_timeout_ms = 2000;  // per endpoint
  int request_timeout_ms = 5000;  // a unary call, per endpoint
};

// Splits flanneld's --etcd-endpoints value ("http://a:2379,http://b:2379").
std::vector<std::string> SplitEndpoints(const std::string& csv);

class Client {
 public:
  // Validates the options (at least one endpoint, each http:// or https:// with a host; TLS files that
  // exist and are readable; cert and key given together). Throws Error(kConfig) naming the bad option.
  // Makes no connection.
  explicit Client(ClientOptions options);
  ~Client();
  Client(const Client&) = delete;
  Client& operator=(const Client&) = delete;

  // Every unary call tries the endpoint that answered last first, then the others in order; a
  // transport failure (refused, timeout, TLS) moves to the next. Throws Error(kUnavailable) listing each
  // endpoint's failure when none answered, Error(kRejected) when a server refused the request.
  RangeResult Get(const std::string& key);
  RangeResult GetPrefix(const std::string& prefix, int64_t revision = 0);
  int64_t Put(const std::string& key, const std::string& value, int64_t lease = 0);  // returns the revision
  // Put only if the key's mod_revision is `mod_revision` (0: only if absent). True when it was written.
  bool PutIfModRevision(const std::string& key, const std::string& value, int64_t lease, int64_t mod_revision,
                        int64_t* revision = nullptr);
  // Create `key` only if it is absent and no key under `prefix` was created after `revision`
  // (CreateIfNoneCreatedAfterRequest). True when it was written.
  bool CreateIfNoneCreatedAfter(const std::string& key, const std::string& value, int64_t lease,
                                const std::string& prefix, int64_t revision, int64_t* written_revision = nullptr);
  int64_t Delete(const std::string& key);  // number of keys deleted (0 when absent)
  bool DeleteIfModRevision(const std::string& key, int64_t mod_revision);
  LeaseGrant Grant(int64_t ttl_seconds);
  void Revoke(int64_t lease_id);  // a lease that is gone already is fine
  LeaseTtl TimeToLive(int64_t lease_id);

  // Streams /v3/watch over [prefix, PrefixRangeEnd(prefix)) from `start_revision` on one HTTP response
  // and calls `on_response` for every message, in order (the first is the `created` one). Returns when
  // `on_response` returns false, when `*stop` becomes true (checked at least every 200 ms), or when the
  // server cancels the watch (after delivering the canceled message). Throws Error(kUnavailable) when the
  // connection cannot be made or breaks (the caller resumes from the last revision it saw + 1). TCP
  // keepalive is on, so a dead peer is noticed within ~30 s even on an idle watch.
  void WatchPrefix(const std::string& prefix, int64_t start_revision,
                   const std::function<bool(const WatchResponse&)>& on_response, const std::atomic<bool>* stop);

  const ClientOptions& options() const { return options_; }

 private:
  struct Impl;
  ClientOptions options_;
  std::unique_ptr<Impl> impl_;
};

}  // namespace netiface::etcd
