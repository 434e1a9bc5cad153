// The client against a real three-member etcd cluster that loses a member and gets it back, without and
// with mutual TLS (client and peer URLs). The test process first moves into a network namespace of its
// own (EnterPrivateNetns): the members listen on its 127.0.0.1 with fixed ports.
#include <chrono>
#include <optional>
#include <thread>

#include <gtest/gtest.h>

#include "etcd_server.h"
#include "netiface/etcd/client.h"
#include "watcher.h"

namespace netiface::etcd {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;
using testing::EtcdCluster;
using testing::EtcdClusterOptions;

class PrivateNetns : public ::testing::Environment {
 public:
  void SetUp() override {
    if (!testing::EnterPrivateNetns()) GTEST_SKIP() << "needs root";
  }
};
const auto* const kEnv = ::testing::AddGlobalTestEnvironment(new PrivateNetns);

ClientOptions Options(const EtcdCluster& cluster, std::vector<std::string> endpoints) {
  ClientOptions o;
  o.endpoints = std::move(endpoints);
  o.ca_file = cluster.ca_file();
  o.cert_file = cluster.cert_file();
  o.key_file = cluster.key_file();
  o.connect_timeout_ms = 1000;
  o.request_timeout_ms = 2000;
  return o;
}

std::string UniquePrefix(const std::string& what) { return "/c/" + testing::UniqueName(what) + "/"; }

// Every step of the proof on one cluster: all members serve; member 0 (the first endpoint, the one the
// client uses, made the raft leader so that its loss also costs an election) is killed; calls go on
// through the others within the timeouts; the watch on it ends with kUnavailable; a watch resumed from
// the last revision seen + 1 hears what was written meanwhile; member 0 restarted rejoins and serves.
void LoseAndRegainTheFirstMember(EtcdCluster& cluster) {
  const std::string p = UniquePrefix("loss");
  Client all(Options(cluster, cluster.endpoint_list()));
  int64_t rev = all.Put(p + "before", "1");
  for (size_t i = 0; i < cluster.size(); ++i) {
    Client one(Options(cluster, {cluster.endpoint(i)}));
    RangeResult r = one.Get(p + "before");
    ASSERT_EQ(r.kvs.size(), 1u) << "member " << i;
    EXPECT_EQ(r.kvs[0].mod_revision, rev) << "member " << i;
  }
  EXPECT_TRUE(cluster.MoveLeader(0)) << "member 0 could not be made the leader; the test goes on without";

  Watcher watch(all, p, rev + 1);
  ASSERT_TRUE(watch.WaitCreated());
  int64_t put_seen = all.Put(p + "seen", "2");
  ASSERT_TRUE(watch.WaitEvents(1));
  int64_t last = watch.events().back().kv.mod_revision;
  EXPECT_EQ(last, put_seen);

  cluster.KillMember(0);
  auto t0 = Clock::now();
  int64_t during = all.Put(p + "during", "3");
  EXPECT_GT(during, last);
  RangeResult got = all.Get(p + "during");
  ASSERT_EQ(got.kvs.size(), 1u);
  EXPECT_EQ(got.kvs[0].value, "3");
  // The dead member costs one refused connect; a new leader is elected in about a second.
  EXPECT_LT(Clock::now() - t0, 6s);
  std::optional<size_t> leader = cluster.Leader();
  EXPECT_TRUE(leader.has_value() && *leader != 0);

  ASSERT_TRUE(watch.WaitEnded(10s)) << "the watch on the killed member did not end";
  Failure broke = watch.error();
  EXPECT_EQ(broke.kind, Error::kUnavailable) << broke.message;
  EXPECT_NE(broke.message.find(cluster.endpoint(0)), std::string::npos) << broke.message;
  EXPECT_EQ(watch.events().size(), 1u);

  // Written through another member, by another client, while nobody watches.
  Client other(Options(cluster, {cluster.endpoint(2)}));
  other.Put(p + "meanwhile", "4");
  Watcher resumed(all, p, last + 1);
  ASSERT_TRUE(resumed.WaitEvents(2)) << resumed.error().message;
  EXPECT_EQ(Keys(resumed.events()), (std::vector<std::string>{"PUT " + p + "during", "PUT " + p + "meanwhile"}));
  other.Put(p + "live", "5");
  ASSERT_TRUE(resumed.WaitEvents(3)) << resumed.error().message;
  EXPECT_EQ(resumed.events().back().kv.key, p + "live");
  resumed.Stop();
  EXPECT_EQ(resumed.error().kind, -1) << resumed.error().message;

  cluster.StartMember(0);
  Client first(Options(cluster, {cluster.endpoint(0)}));
  RangeResult caught_up = first.GetPrefix(p);
  ASSERT_EQ(caught_up.kvs.size(), 5u);  // before, during, live, meanwhile, seen
  EXPECT_EQ(caught_up.kvs[3].key, p + "meanwhile");
  int64_t after = first.Put(p + "after", "6");
  EXPECT_EQ(other.Get(p + "after").kvs.at(0).mod_revision, after);
  ASSERT_EQ(cluster.Etcdctl({"endpoint", "health", "--cluster"}).exit_code, 0);
  Watcher on_first(first, p, after);
  EXPECT_TRUE(on_first.WaitEvents(1));
}

TEST(Cluster, EveryMemberServesAndEtcdctlSeesThemAll) {
  EtcdCluster cluster(EtcdClusterOptions{.client_port = 32379, .peer_port = 32380});
  cluster.Start();
  EXPECT_EQ(cluster.endpoints(), "http://127.0.0.1:32379,http://127.0.0.1:32389,http://127.0.0.1:32399");
  testing::RunResult members = cluster.Etcdctl({"member", "list", "-w", "json"});
  ASSERT_EQ(members.exit_code, 0) << members.err;
  EXPECT_EQ(members.Json()["members"].size(), 3u);
  EXPECT_TRUE(cluster.Leader().has_value());
  LoseAndRegainTheFirstMember(cluster);
}

TEST(Cluster, MutualTlsOnClientAndPeerUrls) {
  EtcdCluster cluster(EtcdClusterOptions{.client_port = 24379, .peer_port = 24380, .tls = true});
  cluster.Start();
  ASSERT_EQ(cluster.endpoint(1), "https://127.0.0.1:24389");
  // The peers talk TLS: every member's log would show a rejected handshake otherwise, and this list
  // shows the https peer URLs each one advertises.
  testing::RunResult members = cluster.Etcdctl({"member", "list"});
  ASSERT_EQ(members.exit_code, 0) << members.err;
  EXPECT_NE(members.out.find("https://127.0.0.1:24380"), std::string::npos) << members.out;
  ClientOptions no_cert = Options(cluster, cluster.endpoint_list());
  no_cert.cert_file.clear();
  no_cert.key_file.clear();
  Client refused(no_cert);
  Failure f = FailureOf([&] { refused.Get("/x"); });
  EXPECT_EQ(f.kind, Error::kUnavailable);
  EXPECT_NE(f.message.find(cluster.endpoint(2)), std::string::npos) << f.message;
  LoseAndRegainTheFirstMember(cluster);
}

}  // namespace
}  // namespace netiface::etcd
