#include "netiface/netlink/socket.h"

#include <sys/socket.h>

#include <cerrno>

#include <gtest/gtest.h>
#include <netlink/errno.h>

#include "netiface/cni/error.h"
#include "netiface/netlink/addr.h"
#include "netiface/netlink/link.h"

namespace netiface::nl {
namespace {

TEST(Check, PassesNonNegativeCodesThrough) {
  EXPECT_EQ(Check(0, "x"), 0);
  EXPECT_EQ(Check(7, "x"), 7);
}

TEST(Check, ThrowsNetlinkErrorNamingTheOperation) {
  try {
    Check(-NLE_EXIST, "failed to frobnicate eth0");
    FAIL() << "no throw";
  } catch (const cni::Error& e) {
    EXPECT_EQ(e.code(), cni::kNetlink);
    EXPECT_EQ(e.msg().rfind("failed to frobnicate eth0: ", 0), 0u) << e.msg();
    EXPECT_NE(e.msg().find("exists"), std::string::npos) << e.msg();
    EXPECT_EQ(e.sys_errno(), EEXIST);  // what callers branch on
  }
  try {
    Check(-NLE_MSG_TOOSHORT, "x");
    FAIL() << "no throw";
  } catch (const cni::Error& e) {
    EXPECT_EQ(e.sys_errno(), 0);  // a libnl code with no errno meaning
  }
}

TEST(Check, ClassifiesExistsAndNotFound) {
  EXPECT_TRUE(IsExists(-NLE_EXIST));
  EXPECT_FALSE(IsExists(-NLE_NODEV));
  EXPECT_FALSE(IsExists(0));
  EXPECT_TRUE(IsNotFound(-NLE_OBJ_NOTFOUND));
  EXPECT_TRUE(IsNotFound(-NLE_NODEV));
  EXPECT_TRUE(IsNotFound(-NLE_NOADDR));
  EXPECT_FALSE(IsNotFound(-NLE_EXIST));
  EXPECT_FALSE(IsNotFound(0));
}

// Read-only lookups in the test process's own namespace (no root needed, nothing changed).
TEST(Socket, FindsLoopbackInTheCurrentNamespace) {
  Socket s = Socket::Open();
  auto lo = FindLink(s, "lo");
  ASSERT_TRUE(lo);
  EXPECT_GT(lo->index, 0);
  EXPECT_EQ(lo->name, "lo");
  auto by_index = FindLinkByIndex(s, lo->index);
  ASSERT_TRUE(by_index);
  EXPECT_EQ(by_index->name, "lo");
  EXPECT_FALSE(FindLink(s, "nx-no-such-if"));
  EXPECT_FALSE(FindLink(s, ""));
  EXPECT_FALSE(FindLink(s, "a-name-that-is-far-too-long"));
  EXPECT_FALSE(FindLinkByIndex(s, 0));
  EXPECT_FALSE(FindLinkByIndex(s, 0x7ffffff0));
}

TEST(Socket, MovedSocketKeepsWorking) {
  Socket a = Socket::Open();
  Socket b = std::move(a);
  EXPECT_EQ(a.get(), nullptr);  // NOLINT(bugprone-use-after-move)
  EXPECT_TRUE(FindLink(b, "lo"));
  Socket c = Socket::Open();
  c = std::move(b);
  EXPECT_TRUE(FindLink(c, "lo"));
}

}  // namespace
}  // namespace netiface::nl
