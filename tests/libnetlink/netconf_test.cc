#include "netiface/netlink/netconf.h"

#include <linux/netconf.h>
#include <sys/socket.h>

#include <gtest/gtest.h>

namespace netiface::nl {
namespace {

TEST(NetconfQueryFor, MapsOnlyTheKeysWhoseSameValueWriteIsANoOp) {
  EXPECT_EQ(NetconfQueryFor("net/ipv4/ip_forward"), (NetconfQuery{AF_INET, NETCONFA_IFINDEX_ALL}));
  EXPECT_EQ(NetconfQueryFor("net/ipv4/conf/all/forwarding"), (NetconfQuery{AF_INET, NETCONFA_IFINDEX_ALL}));
  EXPECT_EQ(NetconfQueryFor("net/ipv4/conf/default/forwarding"), (NetconfQuery{AF_INET, NETCONFA_IFINDEX_DEFAULT}));
  // Writing IPv6's all.forwarding resets every interface's own: never left out.
  EXPECT_FALSE(NetconfQueryFor("net/ipv6/conf/all/forwarding"));
  // Per interface (would need its index) and other settings: not mapped.
  EXPECT_FALSE(NetconfQueryFor("net/ipv4/conf/eth0/forwarding"));
  EXPECT_FALSE(NetconfQueryFor("net/ipv4/conf/all/proxy_arp"));
  EXPECT_FALSE(NetconfQueryFor("net/ipv4/ip_forward/"));
  EXPECT_FALSE(NetconfQueryFor(""));
}

}  // namespace
}  // namespace netiface::nl
