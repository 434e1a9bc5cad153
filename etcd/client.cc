#include "netiface/etcd/client.h"

#include <curl/curl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#include <exception>
#include <fstream>
#include <mutex>

#include <nlohmann/json.hpp>

#include "netiface/etcd/codec.h"

namespace netiface::etcd {
namespace {

using nlohmann::json;

// How long the watch loop waits for the socket before it looks at *stop again.
constexpr int kWatchPollMs = 100;

void GlobalInit() {
  static std::once_flag once;
  std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

[[noreturn]] void Config(const std::string& what) { throw Error(Error::kConfig, "etcd client: " + what); }

// Checks "http(s)://host[:port][/]" and returns it without the trailing slash.
std::string ValidateEndpoint(const std::string& ep) {
  std::string scheme;
  if (ep.rfind("http://", 0) == 0) {
    scheme = "http://";
  } else if (ep.rfind("https://", 0) == 0) {
    scheme = "https://";
  } else {
    Config("endpoint \"" + ep + "\": scheme must be http:// or https://");
  }
  std::string rest = ep.substr(scheme.size());
  while (!rest.empty() && rest.back() == '/') rest.pop_back();
  if (rest.find('/') != std::string::npos) Config("endpoint \"" + ep + "\": a path is not allowed");
  std::string host = rest, port;
  if (!rest.empty() && rest[0] == '[') {
    auto close = rest.find(']');
    if (close == std::string::npos) Config("endpoint \"" + ep + "\": unterminated [IPv6] host");
    host = rest.substr(0, close + 1);
    if (close + 1 < rest.size()) {
      if (rest[close + 1] != ':') Config("endpoint \"" + ep + "\": junk after the host");
      port = rest.substr(close + 2);
      if (port.empty()) Config("endpoint \"" + ep + "\": empty port");
    }
  } else if (auto colon = rest.find(':'); colon != std::string::npos) {
    host = rest.substr(0, colon);
    port = rest.substr(colon + 1);
    if (port.empty()) Config("endpoint \"" + ep + "\": empty port");
  }
  if (host.empty() || host == "[]") Config("endpoint \"" + ep + "\": missing host");
  if (!port.empty()) {
    bool digits = port.size() <= 5 && port.find_first_not_of("0123456789") == std::string::npos;
    if (!digits || std::stoi(port) < 1 || std::stoi(port) > 65535) {
      Config("endpoint \"" + ep + "\": bad port \"" + port + "\"");
    }
  }
  return scheme + rest;
}

void ValidateFile(const char* option, const std::string& path) {
  if (path.empty()) return;
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) Config(std::string(option) + " " + path + ": " + std::strerror(errno));
  if (!S_ISREG(st.st_mode)) Config(std::string(option) + " " + path + ": not a regular file");
  std::ifstream f(path);
  if (!f) Config(std::string(option) + " " + path + ": not readable");
}

size_t AppendBody(char* data, size_t size, size_t n, void* user) {
  static_cast<std::string*>(user)->append(data, size * n);
  return size * n;
}

struct CurlDeleter {
  void operator()(CURL* c) const { curl_easy_cleanup(c); }
};
using EasyHandle = std::unique_ptr<CURL, CurlDeleter>;

struct SlistDeleter {
  void operator()(curl_slist* l) const { curl_slist_free_all(l); }
};

// The options every request shares: TLS files, connect timeout, a JSON POST of `body`.
void SetCommon(CURL* c, const ClientOptions& o, const std::string& url, const std::string& body, curl_slist* headers,
               char* error_buffer) {
  curl_easy_setopt(c, CURLOPT_URL, url.c_str());
  curl_easy_setopt(c, CURLOPT_POST, 1L);
  curl_easy_setopt(c, CURLOPT_POSTFIELDS, body.c_str());
  curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE, static_cast<long>(body.size()));
  curl_easy_setopt(c, CURLOPT_HTTPHEADER, headers);
  curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS, static_cast<long>(o.connect_timeout_ms));
  curl_easy_setopt(c, CURLOPT_ERRORBUFFER, error_buffer);
  if (!o.ca_file.empty()) curl_easy_setopt(c, CURLOPT_CAINFO, o.ca_file.c_str());
  if (!o.cert_file.empty()) curl_easy_setopt(c, CURLOPT_SSLCERT, o.cert_file.c_str());
  if (!o.key_file.empty()) curl_easy_setopt(c, CURLOPT_SSLKEY, o.key_file.c_str());
  error_buffer[0] = '\0';
}

// curl's kind of failure and its detailed message (the address, the timeout or the TLS alert).
std::string CurlFailure(CURLcode rc, const char* error_buffer) {
  std::string why = curl_easy_strerror(rc);
  if (error_buffer[0] != '\0' && why != error_buffer) why += std::string(": ") + error_buffer;
  return why;
}

// A server that requires mutual TLS closes the connection of a client without a certificate; with
// TLS 1.3 its alert often arrives after curl has failed on the send or the read, so say what is missing.
std::string TransportFailure(const ClientOptions& o, const std::string& url, CURLcode rc, const char* error_buffer) {
  std::string why = CurlFailure(rc, error_buffer);
  bool tls_drop = rc == CURLE_SSL_CONNECT_ERROR || rc == CURLE_SEND_ERROR || rc == CURLE_RECV_ERROR;
  if (tls_drop && url.rfind("https://", 0) == 0 && o.cert_file.empty()) {
    why += " (no client certificate is configured: cert_file/key_file; the server may require one)";
  }
  return url + ": " + why;
}

// The body of an answer with an HTTP error status: the gateway's error object, or the status and text.
[[noreturn]] void ThrowHttpError(long status, const std::string& body) {
  json j = json::parse(body, nullptr, false);
  if (!j.is_discarded()) ThrowIfError(j);
  throw Error(Error::kRejected, "etcd: HTTP " + std::to_string(status) + ": " + body.substr(0, 200));
}

// What a watch connection has seen, shared with curl's callbacks.
struct WatchState {
  const std::function<bool(const WatchResponse&)>* on_response = nullptr;
  const std::atomic<bool>* stop = nullptr;
  CURL* easy = nullptr;
  std::string url;
  long status = 0;
  std::string pending;  // bytes after the last newline
  std::string error_body;
  bool answered = false;  // the server sent a response (no failover once it did)
  bool done = false;      // ended on purpose: on_response said so, the server canceled, or *stop
  std::exception_ptr failure;

  bool Line(std::string_view line) {
    if (line.empty() || line == "\r") return true;
    WatchResponse r;
    try {
      r = ParseWatchLine(line);
    } catch (const Error& e) {
      // The gateway ends a stream whose server went away with {"error":{"grpc_code":14,...}}.
      constexpr int kCanceled = 1, kDeadlineExceeded = 4, kUnavailable = 14;
      int code = e.grpc_code();
      if (e.kind() != Error::kRejected || (code != kCanceled && code != kDeadlineExceeded && code != kUnavailable)) {
        throw;
      }
      std::string why = e.what();
      if (why.rfind("etcd: ", 0) == 0) why.erase(0, 6);
      throw Error(Error::kUnavailable, "etcd: watch on " + url + " broke: " + why, code);
    }
    bool more = (*on_response)(r);
    if (!more || r.canceled) {
      done = true;
      return false;
    }
    return true;
  }
};

size_t OnWatchData(char* data, size_t size, size_t n, void* user) {
  auto* w = static_cast<WatchState*>(user);
  size_t len = size * n;
  w->answered = true;
  if (w->status == 0) curl_easy_getinfo(w->easy, CURLINFO_RESPONSE_CODE, &w->status);
  if (w->status >= 300) {
    w->error_body.append(data, len);
    return len;
  }
  try {
    w->pending.append(data, len);
    size_t start = 0;
    for (size_t nl; (nl = w->pending.find('\n', start)) != std::string::npos; start = nl + 1) {
      if (!w->Line(std::string_view(w->pending).substr(start, nl - start))) return 0;
    }
    w->pending.erase(0, start);
  } catch (...) {
    w->failure = std::current_exception();
    return 0;
  }
  return len;
}

// curl 7.88 has no option for the probe count: 4 probes 5 s apart after 10 s idle make a dead peer
// noticed within ~30 s (the kernel's default of 9 would take 55 s).
int SetKeepaliveCount(void*, curl_socket_t fd, curlsocktype purpose) {
  if (purpose == CURLSOCKTYPE_IPCXN) {
    int count = 4;
    ::setsockopt(fd, IPPROTO_TCP, TCP_KEEPCNT, &count, sizeof count);
  }
  return CURL_SOCKOPT_OK;
}

int OnWatchProgress(void* user, curl_off_t, curl_off_t, curl_off_t, curl_off_t) {
  auto* w = static_cast<WatchState*>(user);
  if (w->stop != nullptr && w->stop->load()) {
    w->done = true;
    return 1;
  }
  return 0;
}

}  // namespace

std::vector<std::string> SplitEndpoints(const std::string& csv) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= csv.size()) {
    size_t comma = csv.find(',', start);
    if (comma == std::string::npos) comma = csv.size();
    std::string ep = csv.substr(start, comma - start);
    auto b = ep.find_first_not_of(" \t");
    auto e = ep.find_last_not_of(" \t");
    if (b != std::string::npos) out.push_back(ep.substr(b, e - b + 1));
    start = comma + 1;
  }
  return out;
}

struct Client::Impl {
  struct Endpoint {
    std::string url;
    std::mutex mu;  // guards handle: one unary call at a time per connection
    EasyHandle handle;
  };
  std::vector<std::unique_ptr<Endpoint>> endpoints;
  std::atomic<size_t> preferred{0};
  std::unique_ptr<curl_slist, SlistDeleter> headers;

  // Tries every endpoint, the one that answered last first; returns the parsed 2xx body.
  json Post(const ClientOptions& o, const std::string& path, const std::string& body) {
    std::string failures;
    size_t first = preferred.load();
    for (size_t k = 0; k < endpoints.size(); ++k) {
      size_t i = (first + k) % endpoints.size();
      Endpoint& ep = *endpoints[i];
      std::string out;
      long status = 0;
      char error_buffer[CURL_ERROR_SIZE];
      CURLcode rc;
      {
        std::lock_guard lock(ep.mu);
        if (!ep.handle) ep.handle.reset(curl_easy_init());
        if (!ep.handle) throw Error(Error::kUnavailable, "etcd: curl_easy_init failed");
        CURL* c = ep.handle.get();
        SetCommon(c, o, ep.url + path, body, headers.get(), error_buffer);
        curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, static_cast<long>(o.request_timeout_ms));
        curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, AppendBody);
        curl_easy_setopt(c, CURLOPT_WRITEDATA, &out);
        rc = curl_easy_perform(c);
        curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
        curl_easy_setopt(c, CURLOPT_ERRORBUFFER, nullptr);
      }
      if (rc != CURLE_OK) {
        failures += (failures.empty() ? "" : "; ") + TransportFailure(o, ep.url, rc, error_buffer);
        continue;
      }
      preferred.store(i);
      if (status >= 300) ThrowHttpError(status, out);
      json j = json::parse(out, nullptr, false);
      if (j.is_discarded()) {
        throw Error(Error::kProtocol, "etcd gateway: " + path + " answered with non-JSON: " + out.substr(0, 200));
      }
      return j;
    }
    throw Error(Error::kUnavailable, "etcd unavailable: " + failures);
  }
};

Client::Client(ClientOptions options) : options_(std::move(options)), impl_(std::make_unique<Impl>()) {
  if (options_.endpoints.empty()) Config("endpoints: none given");
  for (auto& ep : options_.endpoints) ep = ValidateEndpoint(ep);
  ValidateFile("ca_file", options_.ca_file);
  ValidateFile("cert_file", options_.cert_file);
  ValidateFile("key_file", options_.key_file);
  if (options_.cert_file.empty() != options_.key_file.empty()) {
    Config(options_.cert_file.empty() ? "key_file given without cert_file" : "cert_file given without key_file");
  }
  if (options_.connect_timeout_ms <= 0) Config("connect_timeout_ms must be positive");
  if (options_.request_timeout_ms <= 0) Config("request_timeout_ms must be positive");
  GlobalInit();
  for (const auto& ep : options_.endpoints) {
    impl_->endpoints.push_back(std::make_unique<Impl::Endpoint>());
    impl_->endpoints.back()->url = ep;
  }
  impl_->headers.reset(curl_slist_append(nullptr, "Content-Type: application/json"));
  if (!impl_->headers) throw Error(Error::kConfig, "etcd client: out of memory");
}

Client::~Client() = default;

RangeResult Client::Get(const std::string& key) {
  return ParseRangeResponse(impl_->Post(options_, "/v3/kv/range", RangeRequest(key, {})));
}

RangeResult Client::GetPrefix(const std::string& prefix, int64_t revision) {
  return ParseRangeResponse(
      impl_->Post(options_, "/v3/kv/range", RangeRequest(prefix, PrefixRangeEnd(prefix), revision)));
}

int64_t Client::Put(const std::string& key, const std::string& value, int64_t lease) {
  return ParsePutResponse(impl_->Post(options_, "/v3/kv/put", PutRequest(key, value, lease)));
}

bool Client::PutIfModRevision(const std::string& key, const std::string& value, int64_t lease, int64_t mod_revision,
                              int64_t* revision) {
  TxnOutcome t =
      ParseTxnResponse(impl_->Post(options_, "/v3/kv/txn", PutIfModRevisionRequest(key, value, lease, mod_revision)));
  if (revision != nullptr) *revision = t.revision;
  return t.succeeded;
}

bool Client::CreateIfNoneCreatedAfter(const std::string& key, const std::string& value, int64_t lease,
                                      const std::string& prefix, int64_t revision, int64_t* written_revision) {
  TxnOutcome t = ParseTxnResponse(
      impl_->Post(options_, "/v3/kv/txn", CreateIfNoneCreatedAfterRequest(key, value, lease, prefix, revision)));
  if (written_revision != nullptr) *written_revision = t.revision;
  return t.succeeded;
}

int64_t Client::Delete(const std::string& key) {
  return ParseDeleteRangeResponse(impl_->Post(options_, "/v3/kv/deleterange", DeleteRangeRequest(key)));
}

bool Client::DeleteIfModRevision(const std::string& key, int64_t mod_revision) {
  return ParseTxnResponse(impl_->Post(options_, "/v3/kv/txn", DeleteIfModRevisionRequest(key, mod_revision))).succeeded;
}

LeaseGrant Client::Grant(int64_t ttl_seconds) {
  return ParseLeaseGrantResponse(impl_->Post(options_, "/v3/lease/grant", LeaseGrantRequest(ttl_seconds)));
}

void Client::Revoke(int64_t lease_id) {
  try {
    impl_->Post(options_, "/v3/lease/revoke", LeaseRevokeRequest(lease_id));
  } catch (const Error& e) {
    constexpr int kNotFound = 5;
    if (e.kind() != Error::kRejected || e.grpc_code() != kNotFound) throw;
  }
}

LeaseTtl Client::TimeToLive(int64_t lease_id) {
  return ParseLeaseTimeToLiveResponse(impl_->Post(options_, "/v3/lease/timetolive", LeaseTimeToLiveRequest(lease_id)));
}

void Client::WatchPrefix(const std::string& prefix, int64_t start_revision,
                         const std::function<bool(const WatchResponse&)>& on_response, const std::atomic<bool>* stop) {
  const std::string body = WatchCreateRequest(prefix, PrefixRangeEnd(prefix), start_revision);
  std::string failures;
  size_t first = impl_->preferred.load();
  for (size_t k = 0; k < impl_->endpoints.size(); ++k) {
    if (stop != nullptr && stop->load()) return;
    size_t i = (first + k) % impl_->endpoints.size();
    const std::string& url = impl_->endpoints[i]->url;
    EasyHandle easy(curl_easy_init());
    std::unique_ptr<CURLM, decltype(&curl_multi_cleanup)> multi(curl_multi_init(), curl_multi_cleanup);
    if (!easy || !multi) throw Error(Error::kUnavailable, "etcd: cannot create a curl handle for the watch");
    char error_buffer[CURL_ERROR_SIZE];
    WatchState w;
    w.on_response = &on_response;
    w.stop = stop;
    w.easy = easy.get();
    w.url = url;
    CURL* c = easy.get();
    SetCommon(c, options_, url + "/v3/watch", body, impl_->headers.get(), error_buffer);
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, OnWatchData);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, &w);
    curl_easy_setopt(c, CURLOPT_NOPROGRESS, 0L);
    curl_easy_setopt(c, CURLOPT_XFERINFOFUNCTION, OnWatchProgress);
    curl_easy_setopt(c, CURLOPT_XFERINFODATA, &w);
    curl_easy_setopt(c, CURLOPT_TCP_KEEPALIVE, 1L);
    curl_easy_setopt(c, CURLOPT_TCP_KEEPIDLE, 10L);
    curl_easy_setopt(c, CURLOPT_TCP_KEEPINTVL, 5L);
    curl_easy_setopt(c, CURLOPT_SOCKOPTFUNCTION, SetKeepaliveCount);
    curl_multi_add_handle(multi.get(), c);

    // The multi loop instead of curl_easy_perform: an idle easy transfer calls the progress function
    // only about once a second, this loop looks at *stop every kWatchPollMs.
    CURLcode rc = CURLE_OK;
    for (int running = 1; running > 0;) {
      if (stop != nullptr && stop->load()) {
        w.done = true;
        break;
      }
      CURLMcode mc = curl_multi_perform(multi.get(), &running);
      if (mc == CURLM_OK && running > 0) mc = curl_multi_poll(multi.get(), nullptr, 0, kWatchPollMs, nullptr);
      if (mc != CURLM_OK) {
        curl_multi_remove_handle(multi.get(), c);
        throw Error(Error::kUnavailable, std::string("etcd: watch: ") + curl_multi_strerror(mc));
      }
    }
    int queued = 0;
    while (CURLMsg* m = curl_multi_info_read(multi.get(), &queued)) {
      if (m->msg == CURLMSG_DONE) rc = m->data.result;
    }
    curl_multi_remove_handle(multi.get(), c);

    if (!w.failure && !w.done && w.status < 300 && !w.pending.empty()) {
      std::string last = std::move(w.pending);
      w.Line(last);  // a final message without a newline (the gateway's error object)
    }
    if (w.failure) std::rethrow_exception(w.failure);
    if (w.done) return;
    if (w.status >= 300) ThrowHttpError(w.status, w.error_body);
    if (w.answered) {
      std::string why = rc == CURLE_OK ? "the server closed the stream" : CurlFailure(rc, error_buffer);
      throw Error(Error::kUnavailable, "etcd: watch on " + url + " broke: " + why);
    }
    failures += (failures.empty() ? "" : "; ") + TransportFailure(options_, url, rc, error_buffer);
  }
  throw Error(Error::kUnavailable, "etcd unavailable: " + failures);
}

}  // namespace netiface::etcd
