#include "netiface/agent/lease_view.h"

#include <gtest/gtest.h>

namespace netiface::agent {
namespace {

Lease L(const std::string& v4, const std::string& ip, int64_t rev, int64_t etcd_lease = 7) {
  Lease l;
  l.subnet.v4 = *cni::IpNet::Parse(v4);
  l.attrs.public_ip = cni::IpAddr::Parse(ip);
  l.attrs.backend_type = "host-gw";
  l.etcd_lease = etcd_lease;
  l.mod_revision = rev;
  return l;
}

LeaseEvent Put(const Lease& l) { return LeaseEvent{LeaseEvent::kPut, l}; }
LeaseEvent Del(const std::string& v4, int64_t rev) {
  LeaseEvent e{LeaseEvent::kDelete, {}};
  e.lease.subnet.v4 = *cni::IpNet::Parse(v4);
  e.lease.mod_revision = rev;
  return e;
}

TEST(LeaseView, ResetReportsNewChangedAndGone) {
  LeaseView v;
  auto c = v.Reset({{L("10.5.1.0/24", "192.0.2.1", 5), L("10.5.2.0/24", "192.0.2.2", 6)}, 6});
  EXPECT_EQ(c.upserted.size(), 2u);
  EXPECT_TRUE(c.removed.empty());
  EXPECT_EQ(v.revision(), 6);
  // Unchanged: nothing; changed gateway: upserted; missing: removed.
  c = v.Reset({{L("10.5.1.0/24", "192.0.2.1", 5), L("10.5.3.0/24", "192.0.2.3", 9)}, 9});
  ASSERT_EQ(c.upserted.size(), 1u);
  EXPECT_EQ(c.upserted[0].subnet.v4.ToString(), "10.5.3.0/24");
  ASSERT_EQ(c.removed.size(), 1u);
  EXPECT_EQ(c.removed[0].subnet.v4.ToString(), "10.5.2.0/24");
  EXPECT_EQ(v.All().size(), 2u);
}

TEST(LeaseView, EventsInOrderAndStaleOnesIgnored) {
  LeaseView v;
  v.Reset({{L("10.5.1.0/24", "192.0.2.1", 5)}, 10});
  // A resumed watch repeating what the snapshot had changes nothing.
  EXPECT_TRUE(v.Apply(Put(L("10.5.1.0/24", "192.0.2.1", 5))).empty());
  auto c = v.Apply(Put(L("10.5.1.0/24", "192.0.2.9", 11)));
  ASSERT_EQ(c.upserted.size(), 1u);
  EXPECT_EQ(c.upserted[0].attrs.public_ip->ToString(), "192.0.2.9");
  // An older write arriving late is ignored.
  EXPECT_TRUE(v.Apply(Put(L("10.5.1.0/24", "192.0.2.1", 8))).empty());
  c = v.Apply(Del("10.5.1.0/24", 12));
  ASSERT_EQ(c.removed.size(), 1u);
  EXPECT_EQ(c.removed[0].attrs.public_ip->ToString(), "192.0.2.9");  // the lease as it was
  EXPECT_TRUE(v.Apply(Del("10.5.1.0/24", 13)).empty());              // gone already
  EXPECT_FALSE(v.Find(SubnetKey{*cni::IpNet::Parse("10.5.1.0/24"), std::nullopt}).has_value());
  EXPECT_EQ(v.revision(), 13);
}

TEST(LeaseView, ReAddedAfterDeleteIsNew) {
  LeaseView v;
  v.Reset({{}, 1});
  EXPECT_EQ(v.Apply(Put(L("10.5.4.0/24", "192.0.2.4", 2))).upserted.size(), 1u);
  EXPECT_EQ(v.Apply(Del("10.5.4.0/24", 3)).removed.size(), 1u);
  EXPECT_EQ(v.Apply(Put(L("10.5.4.0/24", "192.0.2.5", 4))).upserted.size(), 1u);
  EXPECT_EQ(v.All().size(), 1u);
}

}  // namespace
}  // namespace netiface::agent
