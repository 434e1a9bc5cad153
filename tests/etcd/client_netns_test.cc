// The client against real etcd members. The test process first moves into a network namespace of its
// own (EnterPrivateNetns), so every member listens on that namespace's 127.0.0.1 with fixed ports and
// nothing reaches this machine's namespace. One member is shared by the tests that leave it running;
// the tests that stop a member or need TLS start their own.
#include "netiface/etcd/client.h"

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <thread>

#include <gtest/gtest.h>

#include "etcd_server.h"
#include "netiface/etcd/codec.h"
#include "watcher.h"

namespace netiface::etcd {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;
using testing::EtcdServer;
using testing::EtcdServerOptions;

constexpr char kDead[] = "http://127.0.0.1:1";  // nothing listens on port 1 in the private namespace

EtcdServer* shared_server = nullptr;

class PrivateEtcd : public ::testing::Environment {
 public:
  void SetUp() override {
    if (!testing::EnterPrivateNetns()) GTEST_SKIP() << "needs root";
    server_ = std::make_unique<EtcdServer>(EtcdServerOptions{});
    server_->Start();
    shared_server = server_.get();
  }
  void TearDown() override {
    shared_server = nullptr;
    server_.reset();
  }

 private:
  std::unique_ptr<EtcdServer> server_;
};

const auto* const kEnv = ::testing::AddGlobalTestEnvironment(new PrivateEtcd);

ClientOptions Options(std::vector<std::string> endpoints) {
  ClientOptions o;
  o.endpoints = std::move(endpoints);
  o.connect_timeout_ms = 1000;
  o.request_timeout_ms = 2000;
  return o;
}

Client SharedClient() { return Client(Options({shared_server->endpoint()})); }

std::string UniquePrefix(const std::string& what) { return "/t/" + testing::UniqueName(what) + "/"; }

TEST(ClientConfig, RejectsBadOptionsByName) {
  auto config = [](ClientOptions o) { return FailureOf([&] { Client c(std::move(o)); }); };
  Failure none = config(Options({}));
  EXPECT_EQ(none.kind, Error::kConfig);
  EXPECT_NE(none.message.find("endpoints"), std::string::npos) << none.message;
  for (const char* bad : {"127.0.0.1:2379", "ftp://h:1", "http://", "http://:2379", "https:///",
                          "http://h:", "http://h:0", "http://h:99999", "http://h:12a", "http://h/v3", "http://[::1"}) {
    Failure f = config(Options({bad}));
    EXPECT_EQ(f.kind, Error::kConfig) << bad;
    EXPECT_NE(f.message.find(bad), std::string::npos) << f.message;
  }
  ClientOptions missing_ca = Options({"https://127.0.0.1:2379"});
  missing_ca.ca_file = "/nonexistent/ca.crt";
  Failure ca = config(missing_ca);
  EXPECT_EQ(ca.kind, Error::kConfig);
  EXPECT_NE(ca.message.find("ca_file /nonexistent/ca.crt: No such file"), std::string::npos) << ca.message;
  ClientOptions dir_ca = Options({"https://127.0.0.1:2379"});
  dir_ca.ca_file = "/tmp";
  EXPECT_EQ(config(dir_ca).kind, Error::kConfig);
  testing::TempDir dir;
  testing::WriteFile(dir / "c.pem", "x");
  ClientOptions cert_only = Options({"https://127.0.0.1:2379"});
  cert_only.cert_file = dir / "c.pem";
  Failure c = config(cert_only);
  EXPECT_EQ(c.kind, Error::kConfig);
  EXPECT_NE(c.message.find("cert_file given without key_file"), std::string::npos) << c.message;
  ClientOptions key_only = Options({"https://127.0.0.1:2379"});
  key_only.key_file = dir / "c.pem";
  EXPECT_NE(config(key_only).message.find("key_file given without cert_file"), std::string::npos);
  EXPECT_EQ(config(Options({"http://[::1]:2379", "https://etcd.example:443/", "http://h"})).kind, -1);
}

TEST(SplitEndpoints, FlannelsCommaList) {
  EXPECT_EQ(SplitEndpoints("http://a:2379,http://b:2379"),
            (std::vector<std::string>{"http://a:2379", "http://b:2379"}));
  EXPECT_EQ(SplitEndpoints(" http://a:2379 ,,"), (std::vector<std::string>{"http://a:2379"}));
  EXPECT_TRUE(SplitEndpoints("").empty());
}

TEST(Client, PutGetPrefixDelete) {
  Client c = SharedClient();
  std::string p = UniquePrefix("kv");
  int64_t r1 = c.Put(p + "a", "1");
  int64_t r2 = c.Put(p + "b", std::string("\0\xff binary", 9));
  EXPECT_GT(r2, r1);
  c.Put(p.substr(0, p.size() - 1) + "x", "outside the prefix");

  RangeResult a = c.Get(p + "a");
  ASSERT_EQ(a.kvs.size(), 1u);
  EXPECT_EQ(a.kvs[0], (KeyValue{p + "a", "1", r1, r1, 1, 0}));
  EXPECT_GE(a.revision, r2);
  EXPECT_TRUE(c.Get(p + "missing").kvs.empty());

  RangeResult all = c.GetPrefix(p);
  ASSERT_EQ(all.kvs.size(), 2u);
  EXPECT_EQ(all.kvs[0].key, p + "a");
  EXPECT_EQ(all.kvs[1].value, std::string("\0\xff binary", 9));
  // At an older revision the prefix held only "a".
  EXPECT_EQ(c.GetPrefix(p, r1).kvs.size(), 1u);

  EXPECT_EQ(c.Delete(p + "a"), 1);
  EXPECT_EQ(c.Delete(p + "a"), 0);
  EXPECT_EQ(c.GetPrefix(p).kvs.size(), 1u);

  Failure future = FailureOf([&] { c.GetPrefix(p, all.revision + 1000); });
  EXPECT_EQ(future.kind, Error::kRejected);
  EXPECT_NE(future.message.find("future revision"), std::string::npos) << future.message;
}

TEST(Client, GuardedPutAndDelete) {
  Client c = SharedClient();
  std::string k = UniquePrefix("txn") + "k";
  int64_t rev = 0;
  EXPECT_TRUE(c.PutIfModRevision(k, "first", 0, 0, &rev));
  EXPECT_GT(rev, 0);
  EXPECT_FALSE(c.PutIfModRevision(k, "second", 0, 0));  // create-if-absent only once
  EXPECT_EQ(c.Get(k).kvs.at(0).value, "first");

  EXPECT_FALSE(c.PutIfModRevision(k, "stale", 0, rev - 1));
  int64_t rev2 = 0;
  EXPECT_TRUE(c.PutIfModRevision(k, "updated", 0, rev, &rev2));
  EXPECT_GT(rev2, rev);
  KeyValue kv = c.Get(k).kvs.at(0);
  EXPECT_EQ(kv.value, "updated");
  EXPECT_EQ(kv.mod_revision, rev2);
  EXPECT_EQ(kv.version, 2);

  EXPECT_FALSE(c.DeleteIfModRevision(k, rev));
  EXPECT_EQ(c.Get(k).kvs.size(), 1u);
  EXPECT_TRUE(c.DeleteIfModRevision(k, rev2));
  EXPECT_TRUE(c.Get(k).kvs.empty());
  EXPECT_FALSE(c.DeleteIfModRevision(k, rev2));
}

TEST(Client, LeaseGrantPutTimeToLiveRevoke) {
  Client c = SharedClient();
  std::string k = UniquePrefix("lease") + "k";
  LeaseGrant g = c.Grant(60);
  EXPECT_NE(g.id, 0);
  EXPECT_EQ(g.ttl, 60);
  c.Put(k, "v", g.id);
  EXPECT_EQ(c.Get(k).kvs.at(0).lease, g.id);
  LeaseTtl t = c.TimeToLive(g.id);
  EXPECT_EQ(t.id, g.id);
  EXPECT_EQ(t.granted_ttl, 60);
  EXPECT_GT(t.ttl, 50);
  EXPECT_LE(t.ttl, 60);

  c.Revoke(g.id);
  EXPECT_TRUE(c.Get(k).kvs.empty());
  EXPECT_EQ(c.TimeToLive(g.id).ttl, -1);
  c.Revoke(g.id);  // gone already: fine

  Failure no_lease = FailureOf([&] { c.Put(k, "v", g.id); });
  EXPECT_EQ(no_lease.kind, Error::kRejected);
  EXPECT_EQ(no_lease.grpc_code, 5);
  EXPECT_NE(no_lease.message.find("lease not found"), std::string::npos) << no_lease.message;
}

TEST(Client, LeaseExpiryDeletesTheKeyAndTheWatchSeesIt) {
  Client c = SharedClient();
  std::string p = UniquePrefix("expiry");
  LeaseGrant g = c.Grant(2);
  int64_t rev = c.Put(p + "k", "v", g.id);
  Watcher w(c, p, rev);
  ASSERT_TRUE(w.WaitEvents(2, 10s)) << "no DELETE within 10 s of a 2 s lease";
  std::vector<Event> events = w.events();
  EXPECT_EQ(Keys(events), (std::vector<std::string>{"PUT " + p + "k", "DELETE " + p + "k"}));
  EXPECT_GT(events[1].kv.mod_revision, rev);
  EXPECT_TRUE(c.Get(p + "k").kvs.empty());
  EXPECT_EQ(c.TimeToLive(g.id).ttl, -1);
}

TEST(Watch, DeliversPutsAndDeletesInOrderIncludingSeveralInOneResponse) {
  Client c = SharedClient();
  std::string p = UniquePrefix("watch");
  Watcher w(c, p, 0);
  ASSERT_TRUE(w.WaitCreated());
  c.Put(p + "a", "1");
  c.Put(p + "b", "2");
  c.Put(p + "a", "3");
  c.Put(UniquePrefix("other") + "x", "not watched");
  c.Delete(p + "b");
  // One DeleteRange of two keys: one revision, one response with both events.
  ASSERT_EQ(shared_server->Etcdctl({"del", "--prefix", p}).out, "1\n");
  ASSERT_TRUE(w.WaitEvents(5));
  w.Stop();
  std::vector<Event> events = w.events();
  EXPECT_EQ(Keys(events), (std::vector<std::string>{"PUT " + p + "a", "PUT " + p + "b", "PUT " + p + "a",
                                                    "DELETE " + p + "b", "DELETE " + p + "a"}));
  EXPECT_EQ(events[2].kv.value, "3");
  EXPECT_EQ(events[2].kv.version, 2);
  for (size_t i = 1; i < events.size(); ++i) EXPECT_GT(events[i].kv.mod_revision, events[i - 1].kv.mod_revision);

  // Several events in one message: a prefix delete of two keys.
  Watcher again(c, p, events[0].kv.mod_revision);
  ASSERT_TRUE(again.WaitEvents(5));
  std::vector<WatchResponse> rs = again.responses();
  size_t biggest = 0;
  for (const auto& r : rs) biggest = std::max(biggest, r.events.size());
  EXPECT_GE(biggest, 2u);
  EXPECT_TRUE(rs[0].created);
}

TEST(Watch, ResumingFromTheLastRevisionPlusOneMissesNothing) {
  Client c = SharedClient();
  std::string p = UniquePrefix("resume");
  int64_t last = 0;
  {
    Watcher w(c, p, 0);
    w.StopAfterEvents(2);
    ASSERT_TRUE(w.WaitCreated());
    c.Put(p + "1", "a");
    c.Put(p + "2", "b");
    ASSERT_TRUE(w.WaitEnded());  // on_response returned false
    EXPECT_EQ(w.error().kind, -1) << w.error().message;
    ASSERT_EQ(w.events().size(), 2u);
    last = w.events().back().kv.mod_revision;
  }
  // While nobody watches.
  c.Put(p + "3", "c");
  c.Delete(p + "1");
  Watcher w(c, p, last + 1);
  ASSERT_TRUE(w.WaitEvents(2));
  c.Put(p + "4", "d");
  ASSERT_TRUE(w.WaitEvents(3));
  EXPECT_EQ(Keys(w.events()), (std::vector<std::string>{"PUT " + p + "3", "DELETE " + p + "1", "PUT " + p + "4"}));
}

TEST(Watch, ACompactedStartRevisionIsCanceledWithTheCompactRevision) {
  Client c = SharedClient();
  std::string p = UniquePrefix("compact");
  int64_t old_rev = c.Put(p + "a", "1");
  int64_t now = c.Put(p + "a", "2");
  ASSERT_EQ(shared_server->Etcdctl({"compaction", std::to_string(now)}).exit_code, 0);
  std::vector<WatchResponse> got;
  std::atomic<bool> stop{false};
  auto t0 = Clock::now();
  c.WatchPrefix(
      p, old_rev,
      [&](const WatchResponse& r) {
        got.push_back(r);
        return true;
      },
      &stop);
  EXPECT_LT(Clock::now() - t0, 3s);
  ASSERT_FALSE(got.empty());
  EXPECT_TRUE(got.back().canceled);
  EXPECT_EQ(got.back().compact_revision, now);
  EXPECT_TRUE(got.back().events.empty());
}

TEST(Watch, TheStopFlagEndsAnIdleWatchPromptly) {
  Client c = SharedClient();
  Watcher w(c, UniquePrefix("idle"), 0);
  ASSERT_TRUE(w.WaitCreated());
  std::this_thread::sleep_for(1200ms);  // idle past curl's once-a-second progress call
  auto t0 = Clock::now();
  w.RequestStop();
  ASSERT_TRUE(w.WaitEnded(2s));
  auto took = std::chrono::duration_cast<std::chrono::milliseconds>(w.ended_at() - t0);
  // The header promises a look at *stop every 200 ms (the loop polls every 100 ms); 100 ms more is
  // for this shared machine's scheduling and the teardown.
  EXPECT_LE(took.count(), 300);
  EXPECT_EQ(w.error().kind, -1) << w.error().message;
}

TEST(Failover, ADeadEndpointFirstStillWorks) {
  Client c(Options({kDead, shared_server->endpoint()}));
  std::string p = UniquePrefix("failover");
  int64_t rev = c.Put(p + "k", "v");
  EXPECT_EQ(c.Get(p + "k").kvs.at(0).value, "v");
  Watcher w(c, p, rev);
  EXPECT_TRUE(w.WaitEvents(1));

  Client watch_first(Options({kDead, shared_server->endpoint()}));  // the watch before any unary call
  Watcher w2(watch_first, p, rev);
  EXPECT_TRUE(w2.WaitEvents(1));
}

TEST(Failover, AnEndpointThatNeverAnswersTimesOutAndTheNextServes) {
  // A listening socket nobody accepts on: connect succeeds, the request never gets an answer.
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  ASSERT_GE(fd, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof addr;
  ASSERT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  ASSERT_EQ(::listen(fd, 16), 0);
  ASSERT_EQ(::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len), 0);
  std::string silent = "http://127.0.0.1:" + std::to_string(ntohs(addr.sin_port));
  ClientOptions o = Options({silent, shared_server->endpoint()});
  o.request_timeout_ms = 300;
  Client c(o);
  auto t0 = Clock::now();
  EXPECT_TRUE(c.Get("/nothing").kvs.empty());
  auto took = Clock::now() - t0;
  EXPECT_GE(took, 250ms);
  EXPECT_LT(took, 2s);

  o.endpoints = {silent};
  Client only_silent(o);
  t0 = Clock::now();
  Failure f = FailureOf([&] { only_silent.Get("/nothing"); });
  EXPECT_LT(Clock::now() - t0, 2s);
  EXPECT_EQ(f.kind, Error::kUnavailable);
  EXPECT_NE(f.message.find("timed out after"), std::string::npos) << f.message;
  ::close(fd);
}

TEST(Failover, AllEndpointsDeadIsUnavailableWithinTheTimeouts) {
  Client c(Options({kDead, "http://127.0.0.1:2"}));
  auto t0 = Clock::now();
  Failure f = FailureOf([&] { c.Get("/x"); });
  EXPECT_LT(Clock::now() - t0, 2s);
  EXPECT_EQ(f.kind, Error::kUnavailable);
  EXPECT_NE(f.message.find("etcd unavailable: http://127.0.0.1:1: "), std::string::npos) << f.message;
  EXPECT_NE(f.message.find("; http://127.0.0.1:2: "), std::string::npos) << f.message;
  EXPECT_NE(f.message.find("Failed to connect to 127.0.0.1 port 2"), std::string::npos) << f.message;

  std::atomic<bool> stop{false};
  Failure w = FailureOf([&] {
    c.WatchPrefix(
        "/x", 0, [](const WatchResponse&) { return true; }, &stop);
  });
  EXPECT_EQ(w.kind, Error::kUnavailable);
  EXPECT_NE(w.message.find("http://127.0.0.1:2"), std::string::npos) << w.message;
}

TEST(Restart, AWatchThrowsUnavailableWhenEtcdStopsAndTheClientRecoversAfterRestart) {
  EtcdServer s(EtcdServerOptions{.client_port = 12379, .peer_port = 12380});
  s.Start();
  Client c(Options({s.endpoint()}));
  int64_t rev = c.Put("/r/k", "before");
  Watcher w(c, "/r/", 0);
  ASSERT_TRUE(w.WaitCreated());
  s.Stop();
  ASSERT_TRUE(w.WaitEnded(10s));
  Failure f = w.error();
  EXPECT_EQ(f.kind, Error::kUnavailable) << f.message;
  EXPECT_NE(f.message.find("watch on " + s.endpoint() + " broke"), std::string::npos) << f.message;

  EXPECT_EQ(FailureOf([&] { c.Get("/r/k"); }).kind, Error::kUnavailable);
  s.Start();
  RangeResult r = c.Get("/r/k");
  ASSERT_EQ(r.kvs.size(), 1u);
  EXPECT_EQ(r.kvs[0].mod_revision, rev);  // same data dir
  Watcher again(c, "/r/", rev);
  EXPECT_TRUE(again.WaitEvents(1));
}

class Tls : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    server_ = new EtcdServer(EtcdServerOptions{.client_port = 22379, .peer_port = 22380, .tls = true});
    server_->Start();
  }
  static void TearDownTestSuite() {
    delete server_;
    server_ = nullptr;
  }
  static ClientOptions Mutual() {
    ClientOptions o = Options({server_->endpoint()});
    o.ca_file = server_->ca_file();
    o.cert_file = server_->cert_file();
    o.key_file = server_->key_file();
    return o;
  }
  static EtcdServer* server_;
};
EtcdServer* Tls::server_ = nullptr;

TEST_F(Tls, MutualTlsWorksForCallsAndWatches) {
  ASSERT_EQ(server_->endpoint().rfind("https://", 0), 0u);
  Client c(Mutual());
  int64_t rev = c.Put("/tls/k", "v");
  EXPECT_EQ(c.Get("/tls/k").kvs.at(0).value, "v");
  Watcher w(c, "/tls/", rev);
  EXPECT_TRUE(w.WaitEvents(1));
}

TEST_F(Tls, WithoutAClientCertificateItFailsSayingWhy) {
  ClientOptions o = Mutual();
  o.cert_file.clear();
  o.key_file.clear();
  Client c(o);
  Failure f = FailureOf([&] { c.Get("/tls/k"); });
  EXPECT_EQ(f.kind, Error::kUnavailable);
  EXPECT_NE(f.message.find(server_->endpoint()), std::string::npos) << f.message;
  EXPECT_NE(f.message.find("no client certificate is configured"), std::string::npos) << f.message;
}

TEST_F(Tls, AnUntrustedServerFailsVerification) {
  ClientOptions o = Mutual();
  o.ca_file = "/etc/ssl/certs/ca-certificates.crt";
  Client c(o);
  Failure f = FailureOf([&] { c.Get("/tls/k"); });
  EXPECT_EQ(f.kind, Error::kUnavailable);
  EXPECT_NE(f.message.find("certificate"), std::string::npos) << f.message;
}

TEST_F(Tls, AMissingCaFileIsAConfigErrorAtConstruction) {
  ClientOptions o = Mutual();
  o.ca_file = server_->ca_file() + ".missing";
  Failure f = FailureOf([&] { Client c(o); });
  EXPECT_EQ(f.kind, Error::kConfig);
  EXPECT_NE(f.message.find("ca_file"), std::string::npos) << f.message;
}

}  // namespace
}  // namespace netiface::etcd
