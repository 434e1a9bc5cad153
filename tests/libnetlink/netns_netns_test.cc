#include "netiface/netlink/netns.h"

#include <gtest/gtest.h>

#include "netns_fixture.h"
#include "testutil.h"

namespace netiface::nl {
namespace {

TEST(NetNsOpen, MissingPathIsNullopt) {
  testing::TempDir dir;
  EXPECT_FALSE(NetNs::Open(dir / "no-such-netns"));
}

TEST(NetNsOpen, RegularFileIsInvalidEnv) {
  testing::TempDir dir;
  testing::WriteFile(dir / "file", "x");
  std::string msg = ExpectError(cni::kInvalidEnv, [&] { NetNs::Open(dir / "file"); });
  EXPECT_NE(msg.find("is not a network namespace"), std::string::npos) << msg;
  EXPECT_NE(msg.find(dir / "file"), std::string::npos) << msg;
}

TEST(NetNsOpen, DirectoryIsInvalidEnv) {
  testing::TempDir dir;
  ExpectError(cni::kInvalidEnv, [&] { NetNs::Open(dir.path()); });
}

TEST(NetNsOpen, OtherNamespaceTypeIsInvalidEnv) {
  // An nsfs file, but of the UTS namespace.
  ExpectError(cni::kInvalidEnv, [] { NetNs::Open("/proc/self/ns/uts"); });
}

TEST(NetNsOpen, ProcSelfIsTheCurrentNamespace) {
  auto self = NetNs::Open("/proc/self/ns/net");
  ASSERT_TRUE(self);
  EXPECT_GE(self->fd(), 0);
  EXPECT_EQ(self->path(), "/proc/self/ns/net");
  EXPECT_TRUE(self->SameAs(NetNs::Current()));
}

TEST(NetNsOpen, MoveTransfersTheDescriptor) {
  auto a = NetNs::Open("/proc/self/ns/net");
  ASSERT_TRUE(a);
  int fd = a->fd();
  NetNs b = std::move(*a);
  EXPECT_EQ(b.fd(), fd);
  EXPECT_EQ(a->fd(), -1);  // NOLINT(bugprone-use-after-move): the moved-from state is the contract
}

using ScopedSetNsTest = NetnsTest;

TEST_F(ScopedSetNsTest, EntersAndReturns) {
  NetNs before = NetNs::Current();
  ASSERT_FALSE(before.SameAs(*host_ns_));
  {
    ScopedSetNs in_host(*host_ns_);
    EXPECT_TRUE(NetNs::Current().SameAs(*host_ns_));
    {
      ScopedSetNs in_pod(*pod_ns_);
      EXPECT_TRUE(NetNs::Current().SameAs(*pod_ns_));
    }
    EXPECT_TRUE(NetNs::Current().SameAs(*host_ns_));
  }
  EXPECT_TRUE(NetNs::Current().SameAs(before));
}

TEST_F(ScopedSetNsTest, NamespacesByPathAreDistinct) {
  auto again = NetNs::Open(host_tmp_->path());
  ASSERT_TRUE(again);
  EXPECT_TRUE(again->SameAs(*host_ns_));
  EXPECT_FALSE(again->SameAs(*pod_ns_));
}

TEST_F(ScopedSetNsTest, SocketActsInItsNamespaceAfterLeaving) {
  // A link made through the host socket exists in the host namespace only.
  VethSpec spec{.name = "nsprobe0", .peer_name = "nsprobe1"};
  CreateVeth(*host_, spec);
  EXPECT_TRUE(FindLink(*host_, "nsprobe0"));
  EXPECT_FALSE(FindLink(*pod_, "nsprobe0"));
  Socket here = Socket::Open();
  EXPECT_FALSE(FindLink(here, "nsprobe0"));
  EXPECT_EQ(host_tmp_->IpJson("link show nsprobe0").size(), 1u);
}

}  // namespace
}  // namespace netiface::nl
