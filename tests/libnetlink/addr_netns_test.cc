#include "netiface/netlink/addr.h"

#include <linux/if_addr.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <sys/socket.h>

#include <algorithm>

#include <gtest/gtest.h>
#include <netlink/socket.h>

#include "netiface/netlink/link.h"
#include "netiface/netlink/sysctl.h"
#include "netns_fixture.h"

namespace netiface::nl {
namespace {

using AddrTest = NetnsTest;

cni::IpNet Net(const char* s) {
  auto n = cni::IpNet::Parse(s);
  EXPECT_TRUE(n) << s;
  return n.value_or(cni::IpNet());
}

bool Has(const std::vector<AddrInfo>& list, const cni::IpNet& n) {
  return std::any_of(list.begin(), list.end(), [&](const AddrInfo& a) { return a.local == n; });
}

// A dump by index is filtered by the kernel for the length of the call: strict checking is switched
// on for it and off again, so the other requests on the socket are judged as before.
TEST_F(AddrTest, ListByIndexAmongManyLinksLeavesTheSocketLenient) {
  MakePair("vb0");
  int eth0 = Index(*pod_, "eth0");
  AddAddress(*pod_, eth0, Net("10.23.0.5/24"));
  for (int i = 1; i <= 3; ++i) {
    std::string name = "dm" + std::to_string(i);
    ASSERT_EQ(pod_tmp_->Sh("ip link add " + name + " type veth peer name " + name + "p").exit_code, 0);
    AddAddress(*pod_, Index(*pod_, name), Net(("10.23." + std::to_string(i) + ".5/24").c_str()));
  }
  auto one = ListAddresses(*pod_, eth0, AF_INET);
  ASSERT_EQ(one.size(), 1u);
  EXPECT_EQ(one[0].local, Net("10.23.0.5/24"));
  EXPECT_EQ(ListAddresses(*pod_, 0, AF_INET).size(), 5u) << "lo's 127.0.0.1 and the four links'";
  int strict = -1;
  socklen_t len = sizeof strict;
  ASSERT_EQ(getsockopt(nl_socket_get_fd(pod_->get()), SOL_NETLINK, NETLINK_GET_STRICT_CHK, &strict, &len), 0);
  EXPECT_EQ(strict, 0);
  EXPECT_TRUE(FindLink(*pod_, "dm1").has_value());
}

TEST_F(AddrTest, Ipv4AddListDelete) {
  MakePair("va0");
  int eth0 = Index(*pod_, "eth0");
  cni::IpNet a = Net("10.22.0.5/24");
  AddAddress(*pod_, eth0, a);
  AddAddress(*pod_, eth0, a);  // identical: fine

  auto list = ListAddresses(*pod_, eth0, AF_INET);
  ASSERT_EQ(list.size(), 1u);
  EXPECT_EQ(list[0].ifindex, eth0);
  EXPECT_EQ(list[0].local, a);
  EXPECT_EQ(list[0].scope, RT_SCOPE_UNIVERSE);

  auto j = pod_tmp_->IpJson("-4 addr show dev eth0");
  ASSERT_EQ(j.size(), 1u);
  ASSERT_EQ(j[0]["addr_info"].size(), 1u);
  EXPECT_EQ(j[0]["addr_info"][0].value("local", ""), "10.22.0.5");
  EXPECT_EQ(j[0]["addr_info"][0].value("prefixlen", 0), 24);
  EXPECT_EQ(j[0]["addr_info"][0].value("broadcast", ""), "10.22.0.255");

  // ifindex 0: every link, including lo's 127.0.0.1/8.
  auto all = ListAddresses(*pod_, 0, AF_INET);
  EXPECT_TRUE(Has(all, a));
  EXPECT_TRUE(Has(all, Net("127.0.0.1/8")));
  EXPECT_FALSE(Has(ListAddresses(*pod_, eth0, AF_INET6), a));

  EXPECT_TRUE(DeleteAddress(*pod_, eth0, a));
  EXPECT_FALSE(DeleteAddress(*pod_, eth0, a));
  EXPECT_TRUE(ListAddresses(*pod_, eth0, AF_INET).empty());
}

TEST_F(AddrTest, Ipv6NodadAndFamilies) {
  MakePair("va1");
  int eth0 = Index(*pod_, "eth0");
  cni::IpNet v6 = Net("fd00:22::5/64");
  cni::IpNet v4 = Net("10.23.0.5/16");
  AddAddress(*pod_, eth0, v6, /*nodad=*/true);
  AddAddress(*pod_, eth0, v6, true);
  AddAddress(*pod_, eth0, v4);

  auto v6_list = ListAddresses(*pod_, eth0, AF_INET6);
  auto it = std::find_if(v6_list.begin(), v6_list.end(), [&](const AddrInfo& a) { return a.local == v6; });
  ASSERT_NE(it, v6_list.end());
  EXPECT_TRUE(it->flags & IFA_F_NODAD);
  EXPECT_FALSE(it->flags & IFA_F_TENTATIVE);
  EXPECT_FALSE(Has(v6_list, v4));

  auto both = ListAddresses(*pod_, eth0, AF_UNSPEC);
  EXPECT_TRUE(Has(both, v6));
  EXPECT_TRUE(Has(both, v4));

  auto j = pod_tmp_->IpJson("-6 addr show dev eth0");
  ASSERT_EQ(j.size(), 1u);
  bool found = false;
  for (const auto& ai : j[0]["addr_info"]) {
    if (ai.value("local", "") == "fd00:22::5") {
      found = true;
      EXPECT_EQ(ai.value("prefixlen", 0), 64);
      EXPECT_EQ(ai.value("nodad", false), true);
    }
  }
  EXPECT_TRUE(found) << j.dump();

  EXPECT_TRUE(DeleteAddress(*pod_, eth0, v6));
  EXPECT_FALSE(DeleteAddress(*pod_, eth0, v6));
  EXPECT_FALSE(Has(ListAddresses(*pod_, eth0, AF_UNSPEC), v6));
  EXPECT_TRUE(Has(ListAddresses(*pod_, eth0, AF_UNSPEC), v4));
}

TEST_F(AddrTest, AddToMissingLinkFails) {
  ExpectError(cni::kNetlink, [&] { AddAddress(*pod_, 9999, Net("10.0.0.1/24")); });
  EXPECT_FALSE(DeleteAddress(*pod_, 9999, Net("10.0.0.1/24")));
}

TEST_F(AddrTest, WaitForLinkLocal) {
  MakePair("va2", false);
  int eth0 = Index(*pod_, "eth0");
  // Down: no link-local address appears.
  EXPECT_FALSE(WaitForLinkLocal(*pod_, eth0, 30));
  // Skip DAD so that the address becomes usable right away once both ends are up.
  WriteSysctl(&*pod_ns_, "net/ipv6/conf/eth0/accept_dad", "0");
  SetLinkUp(*host_, "va2");
  SetLinkUp(*pod_, "eth0");
  auto ll = WaitForLinkLocal(*pod_, eth0, 5000);
  ASSERT_TRUE(ll);
  EXPECT_TRUE(ll->IsLinkLocal());
  EXPECT_FALSE(ll->is_v4());
  auto j = pod_tmp_->IpJson("-6 addr show dev eth0 scope link");
  ASSERT_EQ(j.size(), 1u);
  ASSERT_FALSE(j[0]["addr_info"].empty());
  EXPECT_EQ(j[0]["addr_info"][0].value("local", ""), ll->ToString());
}

TEST_F(AddrTest, WaitForLinkLocalWaitsOutDad) {
  MakePair("va3");
  int eth0 = Index(*pod_, "eth0");
  auto ll = WaitForLinkLocal(*pod_, eth0, 10000);
  ASSERT_TRUE(ll);
  auto list = ListAddresses(*pod_, eth0, AF_INET6);
  auto it = std::find_if(list.begin(), list.end(), [&](const AddrInfo& a) { return a.local.addr() == *ll; });
  ASSERT_NE(it, list.end());
  EXPECT_FALSE(it->flags & IFA_F_TENTATIVE);
  EXPECT_EQ(it->scope, RT_SCOPE_LINK);
}

}  // namespace
}  // namespace netiface::nl
