#include "netiface/etcd/codec.h"

#include <charconv>
#include <limits>

namespace netiface::etcd {
namespace {

using nlohmann::json;

constexpr char kAlphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

[[noreturn]] void Protocol(const std::string& what) { throw Error(Error::kProtocol, "etcd gateway: " + what); }

int Sextet(char c) {
  if (c >= 'A' && c <= 'Z') return c - 'A';
  if (c >= 'a' && c <= 'z') return c - 'a' + 26;
  if (c >= '0' && c <= '9') return c - '0' + 52;
  if (c == '+') return 62;
  if (c == '/') return 63;
  return -1;
}

// An int64 the gateway writes as a JSON string ("42"); a JSON number is accepted too.
int64_t Int64(const json& j, const char* field) {
  if (j.is_number_unsigned()) {
    if (j.get<uint64_t>() > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
      Protocol(std::string(field) + " out of range");
    }
    return static_cast<int64_t>(j.get<uint64_t>());
  }
  if (j.is_number_integer()) return j.get<int64_t>();
  if (j.is_string()) {
    const auto& s = j.get_ref<const std::string&>();
    int64_t v = 0;
    auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (ec == std::errc() && end == s.data() + s.size() && !s.empty()) return v;
  }
  Protocol(std::string(field) + " is not an int64: " + j.dump());
}

// The value of an optional int64 field (the gateway omits zeros).
int64_t OptInt64(const json& obj, const char* field, int64_t fallback = 0) {
  auto it = obj.find(field);
  return it == obj.end() || it->is_null() ? fallback : Int64(*it, field);
}

bool OptBool(const json& obj, const char* field) {
  auto it = obj.find(field);
  if (it == obj.end() || it->is_null()) return false;
  if (!it->is_boolean()) Protocol(std::string(field) + " is not a boolean: " + it->dump());
  return it->get<bool>();
}

std::string OptString(const json& obj, const char* field) {
  auto it = obj.find(field);
  if (it == obj.end() || it->is_null()) return {};
  if (!it->is_string()) Protocol(std::string(field) + " is not a string: " + it->dump());
  return it->get<std::string>();
}

std::string OptBytes(const json& obj, const char* field) { return Base64Decode(OptString(obj, field)); }

const json& Object(const json& j, const char* what) {
  if (!j.is_object()) Protocol(std::string(what) + " is not an object: " + j.dump());
  return j;
}

// An optional list; missing = empty.
const json& OptArray(const json& obj, const char* field) {
  static const json kEmpty = json::array();
  auto it = obj.find(field);
  if (it == obj.end() || it->is_null()) return kEmpty;
  if (!it->is_array()) Protocol(std::string(field) + " is not a list: " + it->dump());
  return *it;
}

// A response after the error check: an object; its header revision (0 when absent).
const json& Response(const json& j, const char* what) {
  ThrowIfError(j);
  return Object(j, what);
}

int64_t HeaderRevision(const json& resp) {
  auto it = resp.find("header");
  if (it == resp.end() || it->is_null()) return 0;
  return OptInt64(Object(*it, "header"), "revision");
}

KeyValue ParseKv(const json& j) {
  const json& o = Object(j, "kv");
  KeyValue kv;
  kv.key = OptBytes(o, "key");
  kv.value = OptBytes(o, "value");
  kv.create_revision = OptInt64(o, "create_revision");
  kv.mod_revision = OptInt64(o, "mod_revision");
  kv.version = OptInt64(o, "version");
  kv.lease = OptInt64(o, "lease");
  return kv;
}

std::string Str(int64_t v) { return std::to_string(v); }

json ModRevisionCompare(std::string_view key, int64_t mod_revision) {
  return {{"key", Base64Encode(key)}, {"result", "EQUAL"}, {"target", "MOD"}, {"mod_revision", Str(mod_revision)}};
}

json PutOp(std::string_view key, std::string_view value, int64_t lease) {
  json put = {{"key", Base64Encode(key)}, {"value", Base64Encode(value)}};
  if (lease != 0) put["lease"] = Str(lease);
  return put;
}

}  // namespace

std::string Base64Encode(std::string_view bytes) {
  std::string out;
  out.reserve((bytes.size() + 2) / 3 * 4);
  size_t i = 0;
  for (; i + 3 <= bytes.size(); i += 3) {
    uint32_t n = static_cast<uint8_t>(bytes[i]) << 16 | static_cast<uint8_t>(bytes[i + 1]) << 8 |
                 static_cast<uint8_t>(bytes[i + 2]);
    out += kAlphabet[n >> 18 & 63];
    out += kAlphabet[n >> 12 & 63];
    out += kAlphabet[n >> 6 & 63];
    out += kAlphabet[n & 63];
  }
  size_t rest = bytes.size() - i;
  if (rest > 0) {
    uint32_t n = static_cast<uint8_t>(bytes[i]) << 16;
    if (rest == 2) n |= static_cast<uint8_t>(bytes[i + 1]) << 8;
    out += kAlphabet[n >> 18 & 63];
    out += kAlphabet[n >> 12 & 63];
    out += rest == 2 ? kAlphabet[n >> 6 & 63] : '=';
    out += '=';
  }
  return out;
}

std::string Base64Decode(std::string_view text) {
  if (text.size() % 4 != 0) Protocol("base64 of length " + std::to_string(text.size()) + " is not padded");
  std::string out;
  out.reserve(text.size() / 4 * 3);
  for (size_t i = 0; i < text.size(); i += 4) {
    bool last = i + 4 == text.size();
    int pad = last ? (text[i + 3] == '=') + (text[i + 2] == '=' && text[i + 3] == '=') : 0;
    int v[4];
    for (int k = 0; k < 4 - pad; ++k) {
      v[k] = Sextet(text[i + k]);
      if (v[k] < 0) Protocol("invalid base64 character at offset " + std::to_string(i + k));
    }
    for (int k = 4 - pad; k < 4; ++k) v[k] = 0;
    uint32_t n = static_cast<uint32_t>(v[0]) << 18 | v[1] << 12 | v[2] << 6 | v[3];
    out += static_cast<char>(n >> 16 & 0xff);
    if (pad < 2) out += static_cast<char>(n >> 8 & 0xff);
    if (pad < 1) out += static_cast<char>(n & 0xff);
  }
  return out;
}

std::string PrefixRangeEnd(std::string_view prefix) {
  std::string end(prefix);
  for (size_t i = end.size(); i > 0; --i) {
    if (static_cast<uint8_t>(end[i - 1]) < 0xff) {
      end[i - 1] = static_cast<char>(static_cast<uint8_t>(end[i - 1]) + 1);
      end.resize(i);
      return end;
    }
  }
  return std::string(1, '\0');
}

std::string RangeRequest(std::string_view key, std::string_view range_end, int64_t revision) {
  json j = {{"key", Base64Encode(key)}};
  if (!range_end.empty()) j["range_end"] = Base64Encode(range_end);
  if (revision != 0) j["revision"] = Str(revision);
  return j.dump();
}

std::string PutRequest(std::string_view key, std::string_view value, int64_t lease) {
  return PutOp(key, value, lease).dump();
}

std::string DeleteRangeRequest(std::string_view key, std::string_view range_end) {
  json j = {{"key", Base64Encode(key)}};
  if (!range_end.empty()) j["range_end"] = Base64Encode(range_end);
  return j.dump();
}

std::string PutIfModRevisionRequest(std::string_view key, std::string_view value, int64_t lease, int64_t mod_revision) {
  json j = {{"compare", json::array({ModRevisionCompare(key, mod_revision)})},
            {"success", json::array({{{"request_put", PutOp(key, value, lease)}}})}};
  return j.dump();
}

std::string CreateIfNoneCreatedAfterRequest(std::string_view key, std::string_view value, int64_t lease,
                                            std::string_view prefix, int64_t revision) {
  // A compare over a range holds when it holds for every key in it (and for an empty range).
  json none_newer = {{"key", Base64Encode(prefix)},
                     {"range_end", Base64Encode(PrefixRangeEnd(prefix))},
                     {"result", "LESS"},
                     {"target", "CREATE"},
                     {"create_revision", Str(revision + 1)}};
  json j = {{"compare", json::array({ModRevisionCompare(key, 0), none_newer})},
            {"success", json::array({{{"request_put", PutOp(key, value, lease)}}})}};
  return j.dump();
}

std::string DeleteIfModRevisionRequest(std::string_view key, int64_t mod_revision) {
  json j = {{"compare", json::array({ModRevisionCompare(key, mod_revision)})},
            {"success", json::array({{{"request_delete_range", {{"key", Base64Encode(key)}}}}})}};
  return j.dump();
}

std::string LeaseGrantRequest(int64_t ttl_seconds) { return json{{"TTL", Str(ttl_seconds)}}.dump(); }
std::string LeaseRevokeRequest(int64_t id) { return json{{"ID", Str(id)}}.dump(); }
std::string LeaseTimeToLiveRequest(int64_t id) { return json{{"ID", Str(id)}}.dump(); }

std::string WatchCreateRequest(std::string_view key, std::string_view range_end, int64_t start_revision) {
  json create = {{"key", Base64Encode(key)}, {"progress_notify", true}};
  if (!range_end.empty()) create["range_end"] = Base64Encode(range_end);
  if (start_revision != 0) create["start_revision"] = Str(start_revision);
  return json{{"create_request", create}}.dump();
}

RangeResult ParseRangeResponse(const json& j) {
  const json& resp = Response(j, "range response");
  RangeResult r;
  r.revision = HeaderRevision(resp);
  for (const json& kv : OptArray(resp, "kvs")) r.kvs.push_back(ParseKv(kv));
  return r;
}

int64_t ParsePutResponse(const json& j) { return HeaderRevision(Response(j, "put response")); }

int64_t ParseDeleteRangeResponse(const json& j) { return OptInt64(Response(j, "delete response"), "deleted"); }

TxnOutcome ParseTxnResponse(const json& j) {
  const json& resp = Response(j, "txn response");
  return {OptBool(resp, "succeeded"), HeaderRevision(resp)};
}

LeaseGrant ParseLeaseGrantResponse(const json& j) {
  const json& resp = Response(j, "lease grant response");
  if (std::string error = OptString(resp, "error"); !error.empty()) {
    throw Error(Error::kRejected, "etcd: lease grant: " + error);
  }
  LeaseGrant g{OptInt64(resp, "ID"), OptInt64(resp, "TTL")};
  if (g.id == 0) Protocol("lease grant response without an ID: " + resp.dump());
  return g;
}

LeaseTtl ParseLeaseTimeToLiveResponse(const json& j) {
  const json& resp = Response(j, "lease timetolive response");
  return {OptInt64(resp, "ID"), OptInt64(resp, "TTL"), OptInt64(resp, "grantedTTL")};
}

WatchResponse ParseWatchLine(std::string_view line) {
  json j = json::parse(line, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) Protocol("watch line is not JSON: " + std::string(line.substr(0, 200)));
  ThrowIfError(j);
  Object(j, "watch line");
  auto result = j.find("result");
  if (result == j.end()) Protocol("watch line without result: " + std::string(line.substr(0, 200)));
  const json& r = Object(*result, "watch result");
  WatchResponse w;
  w.revision = HeaderRevision(r);
  w.created = OptBool(r, "created");
  w.canceled = OptBool(r, "canceled");
  w.compact_revision = OptInt64(r, "compact_revision");
  w.cancel_reason = OptString(r, "cancel_reason");
  for (const json& e : OptArray(r, "events")) {
    const json& ev = Object(e, "event");
    Event event;
    std::string type = OptString(ev, "type");
    if (type == "DELETE") {
      event.type = EventType::kDelete;
    } else if (!type.empty() && type != "PUT") {
      Protocol("unknown event type " + type);
    }
    auto kv = ev.find("kv");
    if (kv == ev.end()) Protocol("event without kv: " + ev.dump());
    event.kv = ParseKv(*kv);
    w.events.push_back(std::move(event));
  }
  return w;
}

void ThrowIfError(const json& j) {
  if (!j.is_object() || j.contains("header")) return;
  auto error = j.find("error");
  if (error == j.end()) return;
  // Unary calls: {"error":"...","message":"...","code":N}. A broken watch stream:
  // {"error":{"grpc_code":N,"http_code":N,"message":"...","http_status":"..."}}.
  const json& src = error->is_object() ? *error : j;
  std::string message = src.contains("message") && src["message"].is_string() ? src["message"].get<std::string>()
                        : error->is_string()                                  ? error->get<std::string>()
                                                                              : error->dump();
  int code = 0;
  for (const char* field : {"code", "grpc_code"}) {
    auto it = src.find(field);
    if (it != src.end() && it->is_number_integer()) code = it->get<int>();
  }
  throw Error(Error::kRejected, "etcd: " + message, code);
}

}  // namespace netiface::etcd
