// EtcdRegistry against a real etcd. The test process first moves into a network namespace of its own
// (EnterPrivateNetns), so etcd listens on that namespace's 127.0.0.1 and nothing reaches this machine's
// namespace. Each test works under its own prefix of one shared member.
#include <unistd.h>

#include <limits>
#include <sstream>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "etcd_server.h"
#include "netiface/agent/lease_manager.h"
#include "netiface/agent/registry.h"
#include "netiface/etcd/client.h"
#include "testutil.h"

namespace netiface::agent {
namespace {

using testing::EtcdServer;
using testing::EtcdServerOptions;
using ::testing::HasSubstr;

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

cni::IpAddr Ip(const char* s) { return *cni::IpAddr::Parse(s); }
cni::IpNet Net(const char* s) { return *cni::IpNet::Parse(s); }
SubnetKey Key(const char* v4) { return {Net(v4), std::nullopt}; }
LeaseAttrs Attrs(const char* ip) { return {Ip(ip), std::nullopt, "host-gw", nullptr, nullptr}; }

class EtcdRegistryTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!shared_server) GTEST_SKIP() << "needs root";
    etcd::ClientOptions o;
    o.endpoints = {shared_server->endpoint()};
    client_ = std::make_unique<etcd::Client>(o);
    prefix_ = "/" + testing::UniqueName("reg") + "/network";
    registry_ = MakeEtcdRegistry(*client_, prefix_);
  }

  testing::RunResult Etcdctl(const std::vector<std::string>& args) { return shared_server->Etcdctl(args); }
  // The etcd lease IDs `etcdctl lease list` shows, in hex as it prints them.
  std::vector<std::string> EtcdLeases() {
    testing::RunResult r = Etcdctl({"lease", "list"});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    std::vector<std::string> ids;
    std::istringstream in(r.out);
    std::string line;
    while (std::getline(in, line)) {
      if (!line.empty() && line.find("found") == std::string::npos) ids.push_back(line);
    }
    return ids;
  }
  static std::string Hex(int64_t id) {
    std::ostringstream s;
    s << std::hex << id;
    return s.str();
  }

  std::unique_ptr<etcd::Client> client_;
  std::string prefix_;
  std::unique_ptr<Registry> registry_;
};

TEST_F(EtcdRegistryTest, ConfigMissingThenRead) {
  try {
    registry_->GetConfig();
    ADD_FAILURE() << "no error";
  } catch (const ConfigError& e) {
    EXPECT_EQ(std::string(e.what()), "network config not found at " + prefix_ + "/config");
  }
  ASSERT_EQ(
      Etcdctl({"put", prefix_ + "/config", R"({"Network":"10.5.0.0/16","Backend":{"Type":"host-gw"}})"}).exit_code, 0);
  NetworkConfig cfg = registry_->GetConfig();
  EXPECT_EQ(cfg.network, Net("10.5.0.0/16"));
  EXPECT_EQ(cfg.backend_type, "host-gw");
  ASSERT_EQ(Etcdctl({"put", prefix_ + "/config", R"({"Network":"10.5.0.0/29"})"}).exit_code, 0);
  EXPECT_THROW(
      {
        try {
          registry_->GetConfig();
        } catch (const ConfigError& e) {
          EXPECT_THAT(e.what(), HasSubstr(prefix_ + "/config"));
          EXPECT_THAT(e.what(), HasSubstr("Network 10.5.0.0/29 is too small"));
          throw;
        }
      },
      ConfigError);
}

TEST_F(EtcdRegistryTest, CreateListRenewDeleteAndTimeLeft) {
  std::optional<Lease> created =
      registry_->CreateLease(Key("10.5.7.0/24"), Attrs("192.0.2.1"), 60, registry_->ListLeases().revision);
  ASSERT_TRUE(created);
  EXPECT_NE(created->etcd_lease, 0);
  EXPECT_GT(created->mod_revision, 0);
  // Exactly flanneld's value, bound to the lease.
  testing::RunResult got = Etcdctl({"get", prefix_ + "/subnets/10.5.7.0-24", "--print-value-only"});
  EXPECT_EQ(got.out, R"({"PublicIP":"192.0.2.1","PublicIPv6":null,"BackendType":"host-gw"})"
                     "\n");
  const int64_t left = registry_->TimeLeft(*created);
  EXPECT_GT(left, 50);
  EXPECT_LE(left, 60);

  LeaseSnapshot snap = registry_->ListLeases();
  ASSERT_EQ(snap.leases.size(), 1u);
  EXPECT_EQ(snap.leases[0], *created);
  EXPECT_GE(snap.revision, created->mod_revision);

  std::optional<Lease> renewed = registry_->RenewLease(*created, Attrs("192.0.2.1"), 120);
  ASSERT_TRUE(renewed);
  EXPECT_NE(renewed->etcd_lease, created->etcd_lease);
  EXPECT_GT(renewed->mod_revision, created->mod_revision);
  EXPECT_GT(registry_->TimeLeft(*renewed), 100);
  EXPECT_EQ(registry_->TimeLeft(*created), -1);  // the old etcd lease was revoked
  EXPECT_EQ(registry_->ListLeases().leases, std::vector<Lease>{*renewed});

  // A renewal from the stale revision loses, and leaves no extra etcd lease.
  std::vector<std::string> before = EtcdLeases();
  EXPECT_FALSE(registry_->RenewLease(*created, Attrs("192.0.2.1"), 120));
  EXPECT_EQ(EtcdLeases(), before);
  EXPECT_FALSE(registry_->DeleteLease(*created));  // stale mod_revision
  EXPECT_TRUE(registry_->DeleteLease(*renewed));
  EXPECT_TRUE(registry_->ListLeases().leases.empty());
  EXPECT_FALSE(registry_->DeleteLease(*renewed));  // gone
  Etcdctl({"lease", "revoke", Hex(renewed->etcd_lease)});
}

// Two nodes that chose from the same listing: the second loses even though its key differs, since both
// chose the same IPv6 subnet (a dual-stack key names both; etcd alone would accept both keys).
TEST_F(EtcdRegistryTest, ACreateAfterTheListingLosesTheRaceAlsoUnderAnotherKey) {
  const int64_t listed = registry_->ListLeases().revision;
  SubnetKey a{Net("10.5.10.0/24"), Net("fd00:5:0:7::/64")};
  SubnetKey b{Net("10.5.11.0/24"), Net("fd00:5:0:7::/64")};
  std::optional<Lease> first = registry_->CreateLease(a, Attrs("192.0.2.1"), 60, listed);
  ASSERT_TRUE(first);
  std::vector<std::string> before = EtcdLeases();
  EXPECT_FALSE(registry_->CreateLease(b, Attrs("192.0.2.2"), 60, listed));
  EXPECT_EQ(EtcdLeases(), before);  // the loser's fresh etcd lease was revoked
  LeaseSnapshot snap = registry_->ListLeases();
  ASSERT_EQ(snap.leases.size(), 1u);
  EXPECT_EQ(snap.leases[0].subnet, a);
  // Chosen again from a listing that shows the winner, the create goes through.
  std::optional<Lease> second = registry_->CreateLease(b, Attrs("192.0.2.2"), 60, snap.revision);
  ASSERT_TRUE(second);
  Etcdctl({"lease", "revoke", Hex(first->etcd_lease)});
  Etcdctl({"lease", "revoke", Hex(second->etcd_lease)});
}

TEST_F(EtcdRegistryTest, LostCreateRaceReturnsNulloptAndLeavesNoEtcdLease) {
  std::optional<Lease> first =
      registry_->CreateLease(Key("10.5.8.0/24"), Attrs("192.0.2.1"), 60, registry_->ListLeases().revision);
  ASSERT_TRUE(first);
  std::vector<std::string> before = EtcdLeases();
  EXPECT_THAT(before, ::testing::Contains(Hex(first->etcd_lease)));
  EXPECT_FALSE(registry_->CreateLease(Key("10.5.8.0/24"), Attrs("192.0.2.2"), 60, registry_->ListLeases().revision));
  EXPECT_EQ(EtcdLeases(), before);
  LeaseSnapshot snap = registry_->ListLeases();
  ASSERT_EQ(snap.leases.size(), 1u);
  EXPECT_EQ(snap.leases[0].attrs.public_ip, Ip("192.0.2.1"));  // the winner's value is untouched
  Etcdctl({"lease", "revoke", Hex(first->etcd_lease)});
}

TEST_F(EtcdRegistryTest, ListsWhatFlanneldWroteAndSkipsGarbage) {
  const std::string subnets = prefix_ + "/subnets/";
  ASSERT_EQ(
      Etcdctl(
          {"put", subnets + "10.5.3.0-24",
           R"({"PublicIP":"192.0.2.3","PublicIPv6":null,"BackendType":"vxlan","BackendData":{"VNI":1,"VtepMAC":"7a:1b:2c:3d:4e:5f"}})"})
          .exit_code,
      0);
  ASSERT_EQ(Etcdctl({"put", subnets + "10.5.4.0-24&fd00:0:0:4::-64",
                     R"({"PublicIP":"192.0.2.4","PublicIPv6":"2001:db8::4","BackendType":"host-gw"})"})
                .exit_code,
            0);
  ASSERT_EQ(Etcdctl({"put", subnets + "not-a-lease", "{}"}).exit_code, 0);
  ASSERT_EQ(Etcdctl({"put", subnets + "10.5.5.0-24", "not json"}).exit_code, 0);
  LeaseSnapshot snap = registry_->ListLeases();
  ASSERT_EQ(snap.leases.size(), 2u);
  EXPECT_EQ(snap.leases[0].subnet, Key("10.5.3.0/24"));
  EXPECT_EQ(snap.leases[0].attrs.backend_type, "vxlan");
  EXPECT_EQ(snap.leases[0].attrs.backend_data["VtepMAC"], "7a:1b:2c:3d:4e:5f");
  EXPECT_EQ(snap.leases[0].etcd_lease, 0);
  EXPECT_EQ(snap.leases[0].mod_revision > 0, true);
  EXPECT_EQ(snap.leases[1].subnet, (SubnetKey{Net("10.5.4.0/24"), Net("fd00:0:0:4::/64")}));
  EXPECT_EQ(snap.leases[1].attrs.public_ipv6, Ip("2001:db8::4"));
  // An unbound (reserved) lease never expires.
  EXPECT_EQ(registry_->TimeLeft(snap.leases[0]), std::numeric_limits<int64_t>::max());
  // The unreadable value still holds its subnet.
  EXPECT_EQ(snap.unreadable, (std::vector<SubnetKey>{Key("10.5.5.0/24")}));
}

TEST_F(EtcdRegistryTest, AnUnreadableLeaseIsNotAFreeSubnet) {
  // A /26 in /28s restricted to one subnet, whose key holds garbage: nothing is free, also not the
  // previous subnet the node remembers.
  ASSERT_EQ(Etcdctl({"put", prefix_ + "/config",
                     R"({"Network":"10.7.0.0/26","SubnetLen":28,"SubnetMin":"10.7.0.16","SubnetMax":"10.7.0.16"})"})
                .exit_code,
            0);
  ASSERT_EQ(Etcdctl({"put", prefix_ + "/subnets/10.7.0.16-28", "not json"}).exit_code, 0);
  NetworkConfig cfg = registry_->GetConfig();
  std::mt19937_64 rng(1);
  EXPECT_THROW(AcquireLease(*registry_, cfg, Attrs("192.0.2.1"), SubnetKey{Net("10.7.0.16/28"), std::nullopt}, 60, rng),
               OutOfSubnets);
}

TEST_F(EtcdRegistryTest, AcquireLeaseEndToEnd) {
  ASSERT_EQ(Etcdctl({"put", prefix_ + "/config", R"({"Network":"10.5.0.0/28","SubnetMax":"10.5.0.8"})"}).exit_code, 0);
  NetworkConfig cfg = registry_->GetConfig();
  std::mt19937_64 rng(1);
  Lease a = AcquireLease(*registry_, cfg, Attrs("192.0.2.1"), std::nullopt, 60, rng);
  Lease b = AcquireLease(*registry_, cfg, Attrs("192.0.2.2"), std::nullopt, 60, rng);
  EXPECT_NE(a.subnet, b.subnet);
  EXPECT_THROW(AcquireLease(*registry_, cfg, Attrs("192.0.2.3"), std::nullopt, 60, rng), OutOfSubnets);
  Lease again = AcquireLease(*registry_, cfg, Attrs("192.0.2.1"), std::nullopt, 60, rng);
  EXPECT_EQ(again.subnet, a.subnet);
  EXPECT_EQ(registry_->TimeLeft(a), -1);
  for (const Lease& l : {again, b}) Etcdctl({"lease", "revoke", Hex(l.etcd_lease)});
}

TEST_F(EtcdRegistryTest, LeaseExpiryDeletesTheKey) {
  std::optional<Lease> l =
      registry_->CreateLease(Key("10.5.9.0/24"), Attrs("192.0.2.1"), 2, registry_->ListLeases().revision);
  ASSERT_TRUE(l);
  for (int i = 0; i < 100 && !registry_->ListLeases().leases.empty(); ++i) ::usleep(100 * 1000);
  EXPECT_TRUE(registry_->ListLeases().leases.empty());
  EXPECT_EQ(registry_->TimeLeft(*l), -1);
}

TEST_F(EtcdRegistryTest, UnreachableEtcdIsUnavailable) {
  etcd::ClientOptions o;
  o.endpoints = {"http://127.0.0.1:1"};  // nothing listens there in the private namespace
  o.connect_timeout_ms = 500;
  o.request_timeout_ms = 1000;
  etcd::Client dead(o);
  auto reg = MakeEtcdRegistry(dead, prefix_);
  try {
    reg->ListLeases();
    ADD_FAILURE() << "no error";
  } catch (const etcd::Error& e) {
    EXPECT_EQ(e.kind(), etcd::Error::kUnavailable);
  }
}

}  // namespace
}  // namespace netiface::agent
