// The gateway codec as values. Every response below was captured from etcd 3.4.23's JSON gateway
// (Debian 12's etcd-server) with curl; only the JSON has been line-wrapped.
#include "netiface/etcd/codec.h"

#include <gtest/gtest.h>

namespace netiface::etcd {
namespace {

using nlohmann::json;

// The failure's kind, or -1 when `f` did not throw an Error.
template <typename F>
int KindOf(F f) {
  try {
    f();
  } catch (const Error& e) {
    return e.kind();
  }
  return -1;
}

constexpr char kHeader[] =
    R"("header":{"cluster_id":"2037210783374497686","member_id":"13195394291058371180","revision":"3","raft_term":"2"})";

json J(const std::string& s) { return json::parse(s); }

TEST(Base64, RoundTripsTextBinaryAndEmpty) {
  EXPECT_EQ(Base64Encode(""), "");
  EXPECT_EQ(Base64Decode(""), "");
  EXPECT_EQ(Base64Encode("/p/a"), "L3AvYQ==");
  EXPECT_EQ(Base64Encode("/p/"), "L3Av");
  EXPECT_EQ(Base64Encode("/p/ab"), "L3AvYWI=");
  EXPECT_EQ(Base64Decode("L3AvYQ=="), "/p/a");
  EXPECT_EQ(Base64Decode("L3AvYWI="), "/p/ab");
  std::string all;
  for (int i = 0; i < 256; ++i) all += static_cast<char>(i);
  for (size_t n = 0; n <= all.size(); ++n) {
    std::string bytes = all.substr(all.size() - n);
    ASSERT_EQ(Base64Decode(Base64Encode(bytes)), bytes) << n;
  }
  EXPECT_EQ(Base64Decode(Base64Encode(std::string("\0\xff\0", 3))), std::string("\0\xff\0", 3));
}

TEST(Base64, RejectsWhatIsNotPaddedStandardBase64) {
  for (const char* bad :
       {"L3AvYQ", "L3AvYQ=", "L3A", "!!!!", "L3Av-Q==", "L3Av_Q==", "L=Av", "====", "L3AvY=Q=", "L3Av\nYQ=="}) {
    EXPECT_EQ(KindOf([&] { Base64Decode(bad); }), Error::kProtocol) << bad;
  }
}

TEST(PrefixRangeEnd, IncrementsTheLastByteBelowFf) {
  EXPECT_EQ(PrefixRangeEnd("/p/"), "/p0");
  EXPECT_EQ(PrefixRangeEnd("/coreos.com/network/subnets/"), "/coreos.com/network/subnets0");
  EXPECT_EQ(PrefixRangeEnd("a"), "b");
  EXPECT_EQ(PrefixRangeEnd("a\xff"), "b");
  EXPECT_EQ(PrefixRangeEnd("a\xff\xff"), "b");
  EXPECT_EQ(PrefixRangeEnd(std::string("a\xfe\xff")), "a\xff");
  EXPECT_EQ(PrefixRangeEnd(std::string("\0", 1)), std::string("\x01"));
}

TEST(PrefixRangeEnd, AllFfOrEmptyMeansEveryKey) {
  EXPECT_EQ(PrefixRangeEnd(""), std::string(1, '\0'));
  EXPECT_EQ(PrefixRangeEnd("\xff"), std::string(1, '\0'));
  EXPECT_EQ(PrefixRangeEnd("\xff\xff"), std::string(1, '\0'));
}

TEST(Requests, RangePutDelete) {
  EXPECT_EQ(J(RangeRequest("/p/a", {})), J(R"({"key":"L3AvYQ=="})"));
  EXPECT_EQ(J(RangeRequest("/p/", "/p0", 7)), J(R"({"key":"L3Av","range_end":"L3Aw","revision":"7"})"));
  EXPECT_EQ(J(PutRequest("/p/a", "v1", 0)), J(R"({"key":"L3AvYQ==","value":"djE="})"));
  EXPECT_EQ(J(PutRequest("/p/b", "", 7668682606688541446)),
            J(R"({"key":"L3AvYg==","value":"","lease":"7668682606688541446"})"));
  EXPECT_EQ(J(DeleteRangeRequest("/p/a")), J(R"({"key":"L3AvYQ=="})"));
  EXPECT_EQ(J(DeleteRangeRequest("/p/", "/p0")), J(R"({"key":"L3Av","range_end":"L3Aw"})"));
}

TEST(Requests, TxnsCompareModRevision) {
  EXPECT_EQ(J(PutIfModRevisionRequest("/p/c", "x", 0, 0)), J(R"({
    "compare":[{"key":"L3AvYw==","result":"EQUAL","target":"MOD","mod_revision":"0"}],
    "success":[{"request_put":{"key":"L3AvYw==","value":"eA=="}}]})"));
  EXPECT_EQ(J(PutIfModRevisionRequest("/p/c", "x", 42, 9)), J(R"({
    "compare":[{"key":"L3AvYw==","result":"EQUAL","target":"MOD","mod_revision":"9"}],
    "success":[{"request_put":{"key":"L3AvYw==","value":"eA==","lease":"42"}}]})"));
  EXPECT_EQ(J(DeleteIfModRevisionRequest("/p/c", 4)), J(R"({
    "compare":[{"key":"L3AvYw==","result":"EQUAL","target":"MOD","mod_revision":"4"}],
    "success":[{"request_delete_range":{"key":"L3AvYw=="}}]})"));
  // Absent, and nothing under /p/ created after revision 9 (create_revision < 10 for every key in [/p/, /p0)).
  EXPECT_EQ(J(CreateIfNoneCreatedAfterRequest("/p/c", "x", 42, "/p/", 9)), J(R"({
    "compare":[{"key":"L3AvYw==","result":"EQUAL","target":"MOD","mod_revision":"0"},
               {"key":"L3Av","range_end":"L3Aw","result":"LESS","target":"CREATE","create_revision":"10"}],
    "success":[{"request_put":{"key":"L3AvYw==","value":"eA==","lease":"42"}}]})"));
}

TEST(Requests, LeasesAndWatch) {
  EXPECT_EQ(J(LeaseGrantRequest(30)), J(R"({"TTL":"30"})"));
  EXPECT_EQ(J(LeaseRevokeRequest(7668682606684538379)), J(R"({"ID":"7668682606684538379"})"));
  EXPECT_EQ(J(LeaseTimeToLiveRequest(12345)), J(R"({"ID":"12345"})"));
  EXPECT_EQ(J(WatchCreateRequest("/p/", "/p0", 0)),
            J(R"({"create_request":{"key":"L3Av","range_end":"L3Aw","progress_notify":true}})"));
  EXPECT_EQ(J(WatchCreateRequest("/p/", "/p0", 5)),
            J(R"({"create_request":{"key":"L3Av","range_end":"L3Aw","start_revision":"5","progress_notify":true}})"));
}

TEST(Parse, RangeWithKvsAndOmittedDefaults) {
  // "/p/b" has an empty value and no lease: both fields are left out.
  RangeResult r = ParseRangeResponse(J(std::string("{") + kHeader + R"(,"kvs":[
    {"key":"L3AvYQ==","create_revision":"2","mod_revision":"2","version":"1","value":"djE="},
    {"key":"L3AvYg==","create_revision":"3","mod_revision":"3","version":"1"}],"count":"2"})"));
  EXPECT_EQ(r.revision, 3);
  ASSERT_EQ(r.kvs.size(), 2u);
  EXPECT_EQ(r.kvs[0], (KeyValue{"/p/a", "v1", 2, 2, 1, 0}));
  EXPECT_EQ(r.kvs[1], (KeyValue{"/p/b", "", 3, 3, 1, 0}));
}

TEST(Parse, RangeOfAKeyWithALease) {
  RangeResult r = ParseRangeResponse(J(R"({"header":{"cluster_id":"2037210783374497686",
    "member_id":"13195394291058371180","revision":"2","raft_term":"2"},"kvs":[{"key":"L3AvbA==",
    "create_revision":"2","mod_revision":"2","version":"1","value":"djE=","lease":"7668682606688541446"}],"count":"1"})"));
  ASSERT_EQ(r.kvs.size(), 1u);
  EXPECT_EQ(r.kvs[0].lease, 7668682606688541446);
}

TEST(Parse, RangeOfNothingHasNoKvsAndNoCount) {
  RangeResult r = ParseRangeResponse(J(std::string("{") + kHeader + "}"));
  EXPECT_EQ(r.revision, 3);
  EXPECT_TRUE(r.kvs.empty());
}

TEST(Parse, Int64AsStringOrNumber) {
  RangeResult r = ParseRangeResponse(J(R"({"header":{"revision":9},"kvs":[{"key":"L3AvYQ==","mod_revision":7,
    "lease":"-1"}]})"));
  EXPECT_EQ(r.revision, 9);
  EXPECT_EQ(r.kvs[0].mod_revision, 7);
  EXPECT_EQ(r.kvs[0].lease, -1);
}

TEST(Parse, PutAndDelete) {
  EXPECT_EQ(ParsePutResponse(J(R"({"header":{"cluster_id":"2037210783374497686","member_id":"13195394291058371180",
    "revision":"2","raft_term":"2"}})")),
            2);
  EXPECT_EQ(ParseDeleteRangeResponse(J(std::string("{") + kHeader + R"(,"deleted":"1"})")), 1);
  EXPECT_EQ(ParseDeleteRangeResponse(J(std::string("{") + kHeader + "}")), 0);  // absent key
}

TEST(Parse, TxnSucceededAndFailed) {
  TxnOutcome ok = ParseTxnResponse(J(R"({"header":{"cluster_id":"2037210783374497686",
    "member_id":"13195394291058371180","revision":"4","raft_term":"2"},"succeeded":true,
    "responses":[{"response_put":{"header":{"revision":"4"}}}]})"));
  EXPECT_TRUE(ok.succeeded);
  EXPECT_EQ(ok.revision, 4);
  // The failed compare: no "succeeded" and no "responses" at all.
  TxnOutcome failed = ParseTxnResponse(J(R"({"header":{"cluster_id":"2037210783374497686",
    "member_id":"13195394291058371180","revision":"4","raft_term":"2"}})"));
  EXPECT_FALSE(failed.succeeded);
  EXPECT_EQ(failed.revision, 4);
}

TEST(Parse, Leases) {
  LeaseGrant g = ParseLeaseGrantResponse(J(std::string("{") + kHeader + R"(,"ID":"7668682606684538379","TTL":"30"})"));
  EXPECT_EQ(g.id, 7668682606684538379);
  EXPECT_EQ(g.ttl, 30);
  LeaseTtl live = ParseLeaseTimeToLiveResponse(
      J(std::string("{") + kHeader + R"(,"ID":"7668682606688541446","TTL":"29","grantedTTL":"30"})"));
  EXPECT_EQ(live.id, 7668682606688541446);
  EXPECT_EQ(live.ttl, 29);
  EXPECT_EQ(live.granted_ttl, 30);
  LeaseTtl gone = ParseLeaseTimeToLiveResponse(J(std::string("{") + kHeader + R"(,"ID":"12345","TTL":"-1"})"));
  EXPECT_EQ(gone.ttl, -1);
  EXPECT_EQ(gone.granted_ttl, 0);
  // A lease in its last second: TTL 0 is left out.
  EXPECT_EQ(ParseLeaseTimeToLiveResponse(J(R"({"ID":"5","grantedTTL":"2"})")).ttl, 0);
}

TEST(Parse, GatewayErrorObjects) {
  const char* not_found = R"({"error":"etcdserver: requested lease not found",
    "message":"etcdserver: requested lease not found","code":5})";
  try {
    ParseLeaseTimeToLiveResponse(J(not_found));
    FAIL() << "no throw";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), Error::kRejected);
    EXPECT_EQ(e.grpc_code(), 5);
    EXPECT_NE(std::string(e.what()).find("requested lease not found"), std::string::npos) << e.what();
  }
  const char* future = R"({"error":"etcdserver: mvcc: required revision is a future revision",
    "message":"etcdserver: mvcc: required revision is a future revision","code":11})";
  EXPECT_EQ(KindOf([&] { ParseRangeResponse(J(future)); }), Error::kRejected);
  EXPECT_EQ(KindOf([&] { ParsePutResponse(J(not_found)); }), Error::kRejected);
  EXPECT_EQ(KindOf([&] { ParseTxnResponse(J(future)); }), Error::kRejected);
  EXPECT_EQ(KindOf([&] { ParseDeleteRangeResponse(J(future)); }), Error::kRejected);
  EXPECT_EQ(KindOf([&] { ParseLeaseGrantResponse(J(future)); }), Error::kRejected);
  EXPECT_EQ(KindOf([&] { ThrowIfError(J(std::string("{") + kHeader + "}")); }), -1);
  EXPECT_EQ(KindOf([&] { ThrowIfError(J("[1]")); }), -1);
}

TEST(ParseWatchLine, CreatedThenPutsAndDeletes) {
  WatchResponse created =
      ParseWatchLine(R"({"result":{"header":{"cluster_id":"2037210783374497686",)"
                     R"("member_id":"13195394291058371180","revision":"1","raft_term":"2"},"created":true}})");
  EXPECT_TRUE(created.created);
  EXPECT_EQ(created.revision, 1);
  EXPECT_TRUE(created.events.empty());

  WatchResponse put = ParseWatchLine(
      R"({"result":{"header":{"cluster_id":"2037210783374497686","member_id":"13195394291058371180","revision":"2",)"
      R"("raft_term":"2"},"events":[{"kv":{"key":"L3AvbA==","create_revision":"2","mod_revision":"2","version":"1",)"
      R"("value":"djE=","lease":"7668682606688541446"}}]}})");
  EXPECT_FALSE(put.created);
  ASSERT_EQ(put.events.size(), 1u);
  EXPECT_EQ(put.events[0].type, EventType::kPut);  // "type" is left out for PUT
  EXPECT_EQ(put.events[0].kv, (KeyValue{"/p/l", "v1", 2, 2, 1, 7668682606688541446}));

  WatchResponse del = ParseWatchLine(
      R"({"result":{"header":{"cluster_id":"2037210783374497686","member_id":"13195394291058371180","revision":"3",)"
      R"("raft_term":"2"},"events":[{"type":"DELETE","kv":{"key":"L3AvbA==","mod_revision":"3"}}]}})");
  ASSERT_EQ(del.events.size(), 1u);
  EXPECT_EQ(del.events[0].type, EventType::kDelete);
  EXPECT_EQ(del.events[0].kv, (KeyValue{"/p/l", "", 0, 3, 0, 0}));
}

TEST(ParseWatchLine, SeveralEventsOfOneTxnInOrder) {
  WatchResponse w = ParseWatchLine(
      R"({"result":{"header":{"cluster_id":"2037210783374497686","member_id":"13195394291058371180","revision":"4",)"
      R"("raft_term":"2"},"events":[{"kv":{"key":"L3AveA==","create_revision":"4","mod_revision":"4","version":"1",)"
      R"("value":"MQ=="}},{"kv":{"key":"L3AveQ==","create_revision":"4","mod_revision":"4","version":"1","value":"Mg=="}}]}})");
  ASSERT_EQ(w.events.size(), 2u);
  EXPECT_EQ(w.events[0].kv.key, "/p/x");
  EXPECT_EQ(w.events[0].kv.value, "1");
  EXPECT_EQ(w.events[1].kv.key, "/p/y");
  EXPECT_EQ(w.events[1].kv.value, "2");
}

TEST(ParseWatchLine, ProgressNotifyHasOnlyAHeader) {
  WatchResponse w = ParseWatchLine(R"({"result":{"header":{"cluster_id":"2037210783374497686",)"
                                   R"("member_id":"13195394291058371180","revision":"4","raft_term":"2"}}})");
  EXPECT_EQ(w.revision, 4);
  EXPECT_FALSE(w.created);
  EXPECT_FALSE(w.canceled);
  EXPECT_TRUE(w.events.empty());
}

TEST(ParseWatchLine, CanceledWithCompactRevision) {
  // The header of a canceled watch has no revision.
  WatchResponse w =
      ParseWatchLine(R"({"result":{"header":{"cluster_id":"2037210783374497686",)"
                     R"("member_id":"13195394291058371180","raft_term":"2"},"canceled":true,"compact_revision":"3"}})");
  EXPECT_TRUE(w.canceled);
  EXPECT_EQ(w.compact_revision, 3);
  EXPECT_EQ(w.revision, 0);
  WatchResponse r = ParseWatchLine(R"({"result":{"canceled":true,"cancel_reason":"permission denied"}})");
  EXPECT_EQ(r.cancel_reason, "permission denied");
  EXPECT_EQ(r.compact_revision, 0);
}

TEST(ParseWatchLine, ErrorObjectsOfBothShapes) {
  // The answer to a bad create request (HTTP 500), and the last line of a stream whose etcd stopped.
  try {
    ParseWatchLine(
        R"({"error":"illegal base64 data at input byte 0","message":"illegal base64 data at input byte 0","code":2})");
    FAIL() << "no throw";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), Error::kRejected);
    EXPECT_EQ(e.grpc_code(), 2);
    EXPECT_NE(std::string(e.what()).find("illegal base64"), std::string::npos);
  }
  try {
    ParseWatchLine(
        R"({"error":{"grpc_code":14,"http_code":503,"message":"transport is closing","http_status":"Service Unavailable"}})");
    FAIL() << "no throw";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), Error::kRejected);
    EXPECT_EQ(e.grpc_code(), 14);
    EXPECT_NE(std::string(e.what()).find("transport is closing"), std::string::npos);
  }
}

TEST(ParseWatchLine, MalformedIsAProtocolErrorNeverACrash) {
  for (const char* bad : {"",
                          "{",
                          "not json",
                          "[]",
                          "42",
                          "null",
                          R"({"result":1})",
                          R"({"result":[]})",
                          R"({})",
                          R"({"result":{"header":{"revision":"x"}}})",
                          R"({"result":{"header":{"revision":1.5}}})",
                          R"({"result":{"header":{"revision":"99999999999999999999"}}})",
                          R"({"result":{"header":{"revision":18446744073709551615}}})",
                          R"({"result":{"header":7}})",
                          R"({"result":{"created":"yes"}})",
                          R"({"result":{"events":{}}})",
                          R"({"result":{"events":[1]}})",
                          R"({"result":{"events":[{}]}})",
                          R"({"result":{"events":[{"kv":[]}]}})",
                          R"({"result":{"events":[{"type":"PATCH","kv":{}}]}})",
                          R"({"result":{"events":[{"kv":{"key":"***"}}]}})",
                          R"({"result":{"events":[{"kv":{"key":5}}]}})",
                          R"({"result":{"cancel_reason":false}})"}) {
    EXPECT_EQ(KindOf([&] { ParseWatchLine(bad); }), Error::kProtocol) << bad;
  }
}

TEST(Parse, MalformedResponsesAreProtocolErrors) {
  EXPECT_EQ(KindOf([] { ParseRangeResponse(J("[]")); }), Error::kProtocol);
  EXPECT_EQ(KindOf([] { ParseRangeResponse(J("null")); }), Error::kProtocol);
  EXPECT_EQ(KindOf([] { ParseRangeResponse(J(R"({"kvs":"x"})")); }), Error::kProtocol);
  EXPECT_EQ(KindOf([] { ParseRangeResponse(J(R"({"kvs":[{"key":"L3AvYQ==","version":true}]})")); }), Error::kProtocol);
  EXPECT_EQ(KindOf([] { ParsePutResponse(J(R"({"header":{"revision":[]}})")); }), Error::kProtocol);
  EXPECT_EQ(KindOf([] { ParseDeleteRangeResponse(J(R"({"deleted":"one"})")); }), Error::kProtocol);
  EXPECT_EQ(KindOf([] { ParseTxnResponse(J(R"({"succeeded":"true"})")); }), Error::kProtocol);
  EXPECT_EQ(KindOf([] { ParseLeaseGrantResponse(J(R"({"TTL":"30"})")); }), Error::kProtocol);  // no ID
  EXPECT_EQ(KindOf([] { ParseLeaseGrantResponse(J(R"({"ID":{},"TTL":"30"})")); }), Error::kProtocol);
  EXPECT_EQ(KindOf([] { ParseLeaseTimeToLiveResponse(J(R"({"TTL":"-"})")); }), Error::kProtocol);
  EXPECT_EQ(KindOf([] { ParseLeaseTimeToLiveResponse(J("\"str\"")); }), Error::kProtocol);
}

}  // namespace
}  // namespace netiface::etcd
