#include "netiface/agent/lease_manager.h"

#include <set>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "fake_registry.h"

namespace netiface::agent {
namespace {

using testing::FakeRegistry;
using ::testing::HasSubstr;

cni::IpAddr Ip(const char* s) { return *cni::IpAddr::Parse(s); }
cni::IpNet Net(const char* s) { return *cni::IpNet::Parse(s); }
SubnetKey Key(const char* v4) { return {Net(v4), std::nullopt}; }

const cni::IpAddr kMe = Ip("192.0.2.1");
LeaseAttrs Attrs(const char* ip) { return {Ip(ip), std::nullopt, "host-gw", nullptr, nullptr}; }
Lease L(const char* subnet, const char* ip, int64_t rev = 5) { return {Key(subnet), Attrs(ip), 77, rev}; }

NetworkConfig Cfg(const char* json = R"({"Network":"10.5.0.0/16"})") { return ParseNetworkConfig(json); }
// Exactly two subnets: 10.5.0.4/30 and 10.5.0.8/30 (the first one is never leased, the last is .12).
const char* kTwo = R"({"Network":"10.5.0.0/28","SubnetMax":"10.5.0.8"})";

TEST(ChooseSubnetTest, ReusesTheLeaseHoldingThisNodesIp) {
  std::mt19937_64 rng(1);
  std::vector<Lease> leases = {L("10.5.3.0/24", "192.0.2.9"), L("10.5.7.0/24", "192.0.2.1")};
  Choice c = ChooseSubnet(Cfg(), leases, kMe, Key("10.5.9.0/24"), rng);
  EXPECT_EQ(c.kind, Choice::kReuse);
  ASSERT_TRUE(c.reuse);
  EXPECT_EQ(*c.reuse, leases[1]);
  EXPECT_TRUE(c.stale_own.empty());
}

TEST(ChooseSubnetTest, OwnLeaseThatDoesNotFitIsStale) {
  std::mt19937_64 rng(1);
  // Outside SubnetMin..SubnetMax, and of another length.
  std::vector<Lease> leases = {L("10.5.0.0/24", "192.0.2.1"), L("10.5.8.0/25", "192.0.2.1"),
                               L("10.5.9.0/24", "192.0.2.2")};
  Choice c = ChooseSubnet(Cfg(), leases, kMe, std::nullopt, rng);
  EXPECT_EQ(c.kind, Choice::kCreate);
  EXPECT_EQ(c.stale_own, (std::vector<Lease>{leases[0], leases[1]}));
  EXPECT_TRUE(SubnetFits(Cfg(), c.subnet.v4));
  for (const Lease& l : leases) EXPECT_FALSE(l.subnet.v4.Overlaps(c.subnet.v4)) << c.subnet.v4.ToString();
}

TEST(ChooseSubnetTest, PreviousSubnetWhenFreeAndFitting) {
  std::mt19937_64 rng(1);
  std::vector<Lease> leases = {L("10.5.3.0/24", "192.0.2.9")};
  Choice c = ChooseSubnet(Cfg(), leases, kMe, Key("10.5.200.0/24"), rng);
  EXPECT_EQ(c.kind, Choice::kCreate);
  EXPECT_EQ(c.subnet, Key("10.5.200.0/24"));
}

TEST(ChooseSubnetTest, PreviousSubnetIgnoredWhenTakenOrOutside) {
  std::vector<Lease> leases = {L("10.5.3.0/24", "192.0.2.9")};
  for (const char* prev : {"10.5.3.0/24", "10.6.3.0/24", "10.5.0.0/24", "10.5.4.0/25"}) {
    for (uint64_t seed = 0; seed < 20; ++seed) {
      std::mt19937_64 rng(seed);
      Choice c = ChooseSubnet(Cfg(), leases, kMe, Key(prev), rng);
      ASSERT_EQ(c.kind, Choice::kCreate);
      EXPECT_NE(c.subnet, Key(prev));
      EXPECT_NE(c.subnet, Key("10.5.3.0/24"));
      EXPECT_TRUE(SubnetFits(Cfg(), c.subnet.v4));
    }
  }
}

TEST(ChooseSubnetTest, RandomAmongTheFirstHundredFreeSubnetsWithinMinMax) {
  NetworkConfig cfg = Cfg(R"({"Network":"10.5.0.0/16","SubnetMin":"10.5.10.0","SubnetMax":"10.5.250.0"})");
  std::vector<Lease> leases;
  for (int i = 10; i < 60; i += 2) leases.push_back(L(("10.5." + std::to_string(i) + ".0/24").c_str(), "192.0.2.9"));
  std::set<std::string> seen;
  for (uint64_t seed = 0; seed < 400; ++seed) {
    std::mt19937_64 rng(seed);
    Choice c = ChooseSubnet(cfg, leases, kMe, std::nullopt, rng);
    ASSERT_EQ(c.kind, Choice::kCreate);
    const int third = c.subnet.v4.addr().bytes()[2];
    // 25 free in 10..59 (the odd ones), then 60..134 complete the hundred.
    EXPECT_GE(third, 10);
    EXPECT_LE(third, 134);
    EXPECT_FALSE(third < 60 && third % 2 == 0) << third;
    EXPECT_EQ(c.subnet.v4.prefix_len(), 24);
    seen.insert(c.subnet.v4.ToString());
  }
  EXPECT_GT(seen.size(), 60u);  // it is a random choice, not the first free one
}

TEST(ChooseSubnetTest, ExactlyTwoSubnets) {
  NetworkConfig cfg = Cfg(kTwo);
  ASSERT_EQ(SubnetCount(cfg), 2u);
  std::set<std::string> seen;
  for (uint64_t seed = 0; seed < 50; ++seed) {
    std::mt19937_64 rng(seed);
    seen.insert(ChooseSubnet(cfg, {}, kMe, std::nullopt, rng).subnet.v4.ToString());
  }
  EXPECT_EQ(seen, (std::set<std::string>{"10.5.0.4/30", "10.5.0.8/30"}));
  std::mt19937_64 rng(3);
  EXPECT_EQ(ChooseSubnet(cfg, {L("10.5.0.4/30", "192.0.2.9")}, kMe, std::nullopt, rng).subnet, Key("10.5.0.8/30"));
  Choice full =
      ChooseSubnet(cfg, {L("10.5.0.4/30", "192.0.2.9"), L("10.5.0.8/30", "192.0.2.8")}, kMe, std::nullopt, rng);
  EXPECT_EQ(full.kind, Choice::kOutOfSubnets);
}

TEST(ChooseSubnetTest, LeasesOfOtherShapesBlockWhatTheyOverlap) {
  NetworkConfig cfg = Cfg(R"({"Network":"10.5.0.0/16","SubnetMax":"10.5.3.0"})");
  std::mt19937_64 rng(1);
  // A /23 written under an older config covers 10.5.2.0/24 and 10.5.3.0/24; 10.5.1.0 is held too.
  Choice c =
      ChooseSubnet(cfg, {L("10.5.2.0/23", "192.0.2.9"), L("10.5.1.128/25", "192.0.2.8")}, kMe, std::nullopt, rng);
  EXPECT_EQ(c.kind, Choice::kOutOfSubnets);
}

TEST(ChooseSubnetTest, DualStackPicksBothFamilies) {
  NetworkConfig cfg = Cfg(R"({"Network":"10.5.0.0/16","EnableIPv6":true,"IPv6Network":"fd00::/48"})");
  std::mt19937_64 rng(1);
  std::vector<Lease> leases = {{{Net("10.5.1.0/24"), Net("fd00:0:0:1::/64")}, Attrs("192.0.2.9"), 1, 2}};
  Choice c = ChooseSubnet(cfg, leases, kMe, std::nullopt, rng);
  ASSERT_EQ(c.kind, Choice::kCreate);
  ASSERT_TRUE(c.subnet.v6);
  EXPECT_TRUE(SubnetFits(cfg, *c.subnet.v6));
  EXPECT_NE(*c.subnet.v6, Net("fd00:0:0:1::/64"));
  // An IPv4-only previous subnet does not suit a dual-stack config; nor does an own IPv4-only lease.
  Choice d = ChooseSubnet(cfg, {L("10.5.7.0/24", "192.0.2.1")}, kMe, Key("10.5.8.0/24"), rng);
  EXPECT_EQ(d.kind, Choice::kCreate);
  EXPECT_EQ(d.stale_own.size(), 1u);
  EXPECT_NE(d.subnet.v4, Net("10.5.8.0/24"));
}

TEST(AcquireLeaseTest, CreatesAndThenReuses) {
  FakeRegistry reg;
  std::mt19937_64 rng(7);
  Lease first = AcquireLease(reg, reg.GetConfig(), Attrs("192.0.2.1"), std::nullopt, 60, rng);
  EXPECT_TRUE(SubnetFits(reg.GetConfig(), first.subnet.v4));
  EXPECT_EQ(reg.TimeLeft(first), 60);
  reg.Advance(10);
  Lease again = AcquireLease(reg, reg.GetConfig(), Attrs("192.0.2.1"), std::nullopt, 60, rng);
  EXPECT_EQ(again.subnet, first.subnet);
  EXPECT_NE(again.etcd_lease, first.etcd_lease);
  EXPECT_GT(again.mod_revision, first.mod_revision);
  EXPECT_EQ(reg.TimeLeft(again), 60);
  EXPECT_EQ(reg.live_etcd_leases(), 1u);  // the old etcd lease was revoked
  EXPECT_EQ(reg.renew_calls(), 1);
}

TEST(AcquireLeaseTest, DeletesStaleOwnLeaseAndHonoursPrevious) {
  FakeRegistry reg;
  reg.Put(Key("10.5.0.0/24"), Attrs("192.0.2.1"), 60);  // the network's first subnet: never leasable
  std::mt19937_64 rng(7);
  Lease l = AcquireLease(reg, reg.GetConfig(), Attrs("192.0.2.1"), Key("10.5.42.0/24"), 60, rng);
  EXPECT_EQ(l.subnet, Key("10.5.42.0/24"));
  EXPECT_EQ(reg.delete_calls(), 1);
  EXPECT_EQ(reg.Leases(), std::vector<Lease>{l});
}

TEST(AcquireLeaseTest, StaleLeaseChangedMeanwhileIsLeftAlone) {
  FakeRegistry reg;
  const SubnetKey stale = Key("10.5.0.0/24");
  reg.Put(stale, Attrs("192.0.2.1"));
  reg.before_delete = [&](const SubnetKey& k) { reg.Put(k, Attrs("192.0.2.50")); };  // rewritten meanwhile
  std::mt19937_64 rng(7);
  AcquireLease(reg, reg.GetConfig(), Attrs("192.0.2.1"), std::nullopt, 60, rng);
  ASSERT_TRUE(reg.Find(stale));
  EXPECT_EQ(reg.Find(stale)->attrs.public_ip, Ip("192.0.2.50"));
  EXPECT_EQ(reg.delete_calls(), 0);
}

TEST(AcquireLeaseTest, LostRaceIsRetriedAndThenSucceeds) {
  FakeRegistry reg;
  std::optional<SubnetKey> stolen;
  reg.before_create = [&](const SubnetKey& k) {
    if (stolen) return;
    stolen = k;
    reg.Put(k, Attrs("192.0.2.99"), 60);  // another node creates the same subnet first
  };
  std::mt19937_64 rng(7);
  Lease l = AcquireLease(reg, reg.GetConfig(), Attrs("192.0.2.1"), std::nullopt, 60, rng);
  ASSERT_TRUE(stolen);
  EXPECT_NE(l.subnet, *stolen);
  EXPECT_EQ(reg.create_calls(), 2);
  EXPECT_EQ(reg.lost_races(), 1);
  EXPECT_EQ(reg.list_calls(), 2);         // chose again from a fresh list
  EXPECT_EQ(reg.live_etcd_leases(), 2u);  // the other node's and ours: the losing grant was revoked
  EXPECT_EQ(reg.Find(*stolen)->attrs.public_ip, Ip("192.0.2.99"));
}

TEST(AcquireLeaseTest, LostRenewRaceChoosesAgain) {
  FakeRegistry reg;
  Lease mine = reg.Put(Key("10.5.9.0/24"), Attrs("192.0.2.1"), 60);
  reg.before_renew = [&](const SubnetKey& k) {
    reg.before_renew = nullptr;
    reg.Put(k, Attrs("192.0.2.77"), 60);  // the subnet went to another node in between
  };
  std::mt19937_64 rng(7);
  Lease l = AcquireLease(reg, reg.GetConfig(), Attrs("192.0.2.1"), std::nullopt, 60, rng);
  EXPECT_NE(l.subnet, mine.subnet);
  EXPECT_EQ(reg.Find(mine.subnet)->attrs.public_ip, Ip("192.0.2.77"));
}

TEST(AcquireLeaseTest, ReservationStaysUnbound) {
  FakeRegistry reg;
  Lease reserved = reg.Put(Key("10.5.9.0/24"), Attrs("192.0.2.1"), 0);
  std::mt19937_64 rng(7);
  Lease l = AcquireLease(reg, reg.GetConfig(), Attrs("192.0.2.1"), std::nullopt, 60, rng);
  EXPECT_EQ(l.subnet, reserved.subnet);
  EXPECT_EQ(l.etcd_lease, 0);
  EXPECT_EQ(reg.live_etcd_leases(), 0u);
}

TEST(AcquireLeaseTest, MaxAttemptsExhausted) {
  FakeRegistry reg;
  int n = 0;
  reg.before_create = [&](const SubnetKey& k) {
    ++n;
    reg.Put(k, Attrs(("192.0.2." + std::to_string(100 + n)).c_str()), 60);
  };
  std::mt19937_64 rng(7);
  try {
    AcquireLease(reg, reg.GetConfig(), Attrs("192.0.2.1"), std::nullopt, 60, rng, 3);
    ADD_FAILURE() << "no error";
  } catch (const OutOfSubnets&) {
    ADD_FAILURE() << "not out of subnets";
  } catch (const std::runtime_error& e) {
    EXPECT_THAT(e.what(), HasSubstr("lost the race for a subnet 3 times in a row"));
  }
  EXPECT_EQ(reg.create_calls(), 3);
  EXPECT_EQ(reg.lost_races(), 3);
  EXPECT_EQ(reg.live_etcd_leases(), 3u);  // only the winners' leases
}

TEST(AcquireLeaseTest, OutOfSubnetsSaysHowManyAndThatAllAreLeased) {
  FakeRegistry reg(kTwo);
  reg.Put(Key("10.5.0.4/30"), Attrs("192.0.2.8"));
  reg.Put(Key("10.5.0.8/30"), Attrs("192.0.2.9"));
  std::mt19937_64 rng(7);
  try {
    AcquireLease(reg, reg.GetConfig(), Attrs("192.0.2.1"), std::nullopt, 60, rng);
    ADD_FAILURE() << "no error";
  } catch (const OutOfSubnets& e) {
    EXPECT_THAT(e.what(), HasSubstr("out of subnets: all 2 subnets of 10.5.0.0/28 are leased"));
  }
}

TEST(AcquireLeaseTest, ThreeInterleavedAcquirersOnTwoSubnetsNeverShareOne) {
  for (uint64_t seed = 0; seed < 30; ++seed) {
    FakeRegistry reg(kTwo);
    const NetworkConfig cfg = reg.GetConfig();
    std::mt19937_64 rng_a(seed), rng_b(seed * 31 + 1), rng_c(seed * 77 + 2);
    std::vector<std::optional<Lease>> got(3);
    std::vector<bool> out_of_subnets(3, false);
    auto acquire = [&](int i, std::mt19937_64& rng) {
      try {
        got[i] = AcquireLease(reg, cfg, Attrs(("192.0.2." + std::to_string(i + 1)).c_str()), std::nullopt, 60, rng);
      } catch (const OutOfSubnets&) {
        out_of_subnets[i] = true;
      }
    };
    // A's create waits for all of B; B's first create waits for all of C: each chose from a list that the
    // later ones changed before it wrote.
    int hook_calls = 0;
    reg.before_create = [&](const SubnetKey&) {
      ++hook_calls;
      if (hook_calls == 1) acquire(1, rng_b);
      if (hook_calls == 2) acquire(2, rng_c);
    };
    acquire(0, rng_a);
    std::set<SubnetKey> subnets;
    int winners = 0;
    for (int i = 0; i < 3; ++i) {
      if (!got[i]) continue;
      ++winners;
      EXPECT_TRUE(subnets.insert(got[i]->subnet).second)
          << "seed " << seed << ": two got " << FormatSubnetKey(got[i]->subnet);
      EXPECT_EQ(reg.Find(got[i]->subnet), got[i]) << "seed " << seed;
    }
    EXPECT_EQ(winners, 2) << "seed " << seed;
    EXPECT_EQ(std::count(out_of_subnets.begin(), out_of_subnets.end(), true), 1) << "seed " << seed;
    EXPECT_TRUE(out_of_subnets[0]) << "A chose first and wrote last";
    EXPECT_EQ(reg.Leases().size(), 2u);
    EXPECT_EQ(reg.live_etcd_leases(), 2u);
  }
}

TEST(AcquireLeaseTest, RegistryErrorsPropagate) {
  FakeRegistry reg;
  reg.unavailable = [] { return true; };
  std::mt19937_64 rng(7);
  EXPECT_THROW(AcquireLease(reg, Cfg(), Attrs("192.0.2.1"), std::nullopt, 60, rng), etcd::Error);
  LeaseAttrs no_ip;
  EXPECT_THROW(AcquireLease(reg, Cfg(), no_ip, std::nullopt, 60, rng), std::invalid_argument);
}

TEST(AcquireLeaseTest, ExpiredLeasesFreeTheirSubnets) {
  FakeRegistry reg(kTwo);
  Lease a = reg.Put(Key("10.5.0.4/30"), Attrs("192.0.2.8"), 30);
  reg.Put(Key("10.5.0.8/30"), Attrs("192.0.2.9"), 90);
  std::mt19937_64 rng(7);
  EXPECT_THROW(AcquireLease(reg, reg.GetConfig(), Attrs("192.0.2.1"), std::nullopt, 60, rng), OutOfSubnets);
  reg.Advance(30);
  EXPECT_EQ(reg.TimeLeft(a), -1);
  EXPECT_EQ(AcquireLease(reg, reg.GetConfig(), Attrs("192.0.2.1"), std::nullopt, 60, rng).subnet, a.subnet);
  EXPECT_TRUE(reg.Expire(Key("10.5.0.8/30")));
  EXPECT_EQ(reg.Leases().size(), 1u);
}

TEST(RenewAfterSecondsTest, FlanneldsMarginOrHalfWayWhenItDoesNotFit) {
  EXPECT_EQ(RenewAfterSeconds(24 * 3600, 3600), 23 * 3600);  // flanneld's defaults
  EXPECT_EQ(RenewAfterSeconds(24 * 3600, 1439 * 60), 60);    // flanneld: renew a minute after the grant
  EXPECT_EQ(RenewAfterSeconds(10, 3600), 5);                 // a test's short TTL still renews in time
  EXPECT_EQ(RenewAfterSeconds(10, 2), 8);
  EXPECT_EQ(RenewAfterSeconds(10, -5), 5);
  EXPECT_EQ(RenewAfterSeconds(1, 3600), 1);
  EXPECT_EQ(RenewAfterSeconds(0, 60), 0);
}

}  // namespace
}  // namespace netiface::agent
