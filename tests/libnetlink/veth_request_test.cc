// The veth pair request, checked as a value: one RTM_NEWLINK carrying both ends, the peer's
// attributes (name, MTU, MAC, queues, namespace fd) nested under IFLA_INFO_DATA/VETH_INFO_PEER.
#include "veth_request.h"

#include <linux/if_link.h>
#include <linux/rtnetlink.h>
#include <linux/veth.h>

#include <cstring>
#include <string>

#include <gtest/gtest.h>
#include <netlink/attr.h>
#include <netlink/msg.h>

#include "netiface/cni/error.h"
#include "netiface/netlink/netns.h"

namespace netiface::nl {
namespace {

std::string Mac(const nlattr* a) {
  if (a == nullptr || nla_len(a) != 6) return "";
  const auto* b = static_cast<const uint8_t*>(nla_data(a));
  char buf[18];
  std::snprintf(buf, sizeof buf, "%02x:%02x:%02x:%02x:%02x:%02x", b[0], b[1], b[2], b[3], b[4], b[5]);
  return buf;
}

std::string Str(const nlattr* a) { return a ? std::string(nla_get_string(const_cast<nlattr*>(a))) : ""; }
int U32(const nlattr* a) { return a ? static_cast<int>(nla_get_u32(const_cast<nlattr*>(a))) : -1; }

struct End {
  std::string name, mac;
  int mtu = -1, tx = -1, rx = -1, ns_fd = -1, master = -1;
};

End ReadEnd(nlattr** tb) {
  return End{Str(tb[IFLA_IFNAME]),        Mac(tb[IFLA_ADDRESS]),   U32(tb[IFLA_MTU]),   U32(tb[IFLA_NUM_TX_QUEUES]),
             U32(tb[IFLA_NUM_RX_QUEUES]), U32(tb[IFLA_NET_NS_FD]), U32(tb[IFLA_MASTER])};
}

struct Parsed {
  uint16_t type = 0, flags = 0;
  std::string kind;
  End self, peer;
};

Parsed Parse(nl_msg* msg) {
  Parsed p;
  nlmsghdr* hdr = nlmsg_hdr(msg);
  p.type = hdr->nlmsg_type;
  p.flags = hdr->nlmsg_flags;
  nlattr* tb[IFLA_MAX + 1] = {};
  EXPECT_EQ(nlmsg_parse(hdr, sizeof(ifinfomsg), tb, IFLA_MAX, nullptr), 0);
  p.self = ReadEnd(tb);
  if (tb[IFLA_LINKINFO] == nullptr) return p;
  nlattr* li[IFLA_INFO_MAX + 1] = {};
  EXPECT_EQ(nla_parse_nested(li, IFLA_INFO_MAX, tb[IFLA_LINKINFO], nullptr), 0);
  p.kind = Str(li[IFLA_INFO_KIND]);
  if (li[IFLA_INFO_DATA] == nullptr) return p;
  nlattr* data[VETH_INFO_MAX + 1] = {};
  EXPECT_EQ(nla_parse_nested(data, VETH_INFO_MAX, li[IFLA_INFO_DATA], nullptr), 0);
  nlattr* peer = data[VETH_INFO_PEER];
  if (peer == nullptr) return p;
  // VETH_INFO_PEER: a struct ifinfomsg, then the peer's IFLA_* attributes.
  EXPECT_GE(nla_len(peer), static_cast<int>(sizeof(ifinfomsg)));
  auto* first = reinterpret_cast<nlattr*>(static_cast<char*>(nla_data(peer)) + NLMSG_ALIGN(sizeof(ifinfomsg)));
  nlattr* ptb[IFLA_MAX + 1] = {};
  EXPECT_EQ(nla_parse(ptb, IFLA_MAX, first, nla_len(peer) - NLMSG_ALIGN(sizeof(ifinfomsg)), nullptr), 0);
  p.peer = ReadEnd(ptb);
  return p;
}

TEST(VethRequest, OneCreateRequestWithThePeerInItsNamespace) {
  NetNs target = NetNs::Current();
  VethSpec spec;
  spec.name = "vethhost0";
  spec.peer_name = "eth0";
  spec.peer_ns = &target;
  spec.mtu = 1450;
  spec.num_queues = 4;
  spec.mac = "02:00:00:00:00:01";
  spec.peer_mac = "0A:58:0A:F4:01:02";
  spec.master_index = 7;
  detail::MsgPtr msg = detail::BuildVethRequest(spec);
  Parsed p = Parse(msg.get());

  EXPECT_EQ(p.type, RTM_NEWLINK);
  EXPECT_TRUE(p.flags & NLM_F_CREATE);
  EXPECT_TRUE(p.flags & NLM_F_EXCL);
  EXPECT_EQ(p.kind, "veth");

  EXPECT_EQ(p.self.name, "vethhost0");
  EXPECT_EQ(p.self.mac, "02:00:00:00:00:01");
  EXPECT_EQ(p.self.mtu, 1450);
  EXPECT_EQ(p.self.tx, 4);
  EXPECT_EQ(p.self.rx, 4);
  EXPECT_EQ(p.self.ns_fd, -1) << "this end stays in the socket's namespace";
  EXPECT_EQ(p.self.master, 7) << "enslaved in the same request";
  EXPECT_EQ(p.peer.master, -1) << "the peer is in another namespace";

  EXPECT_EQ(p.peer.name, "eth0");
  EXPECT_EQ(p.peer.mac, "0a:58:0a:f4:01:02");
  EXPECT_EQ(p.peer.mtu, 1450);
  EXPECT_EQ(p.peer.tx, 4);
  EXPECT_EQ(p.peer.rx, 4);
  EXPECT_EQ(p.peer.ns_fd, target.fd());
}

TEST(VethRequest, DefaultsLeaveKernelChoices) {
  VethSpec spec;
  spec.name = "a";
  spec.peer_name = "b";
  spec.num_queues = 0;
  detail::MsgPtr msg = detail::BuildVethRequest(spec);
  Parsed p = Parse(msg.get());
  EXPECT_EQ(p.self.name, "a");
  EXPECT_EQ(p.peer.name, "b");
  for (const End& e : {p.self, p.peer}) {
    EXPECT_EQ(e.mac, "");
    EXPECT_EQ(e.mtu, -1);
    EXPECT_EQ(e.tx, -1);
    EXPECT_EQ(e.ns_fd, -1);
    EXPECT_EQ(e.master, -1);
  }
}

TEST(VethRequest, RejectsBadNamesAndMacs) {
  auto expect_invalid = [](VethSpec spec) {
    try {
      detail::BuildVethRequest(spec);
      ADD_FAILURE() << "accepted " << spec.name << "/" << spec.peer_name << " " << spec.mac;
    } catch (const cni::Error& e) {
      EXPECT_EQ(e.code(), cni::kInvalidConfig) << e.msg();
    }
  };
  expect_invalid({.name = "", .peer_name = "eth0"});
  expect_invalid({.name = "host", .peer_name = ""});
  expect_invalid({.name = "sixteen-chars-xx", .peer_name = "eth0"});
  expect_invalid({.name = "a/b", .peer_name = "eth0"});
  expect_invalid({.name = "host", .peer_name = "eth0", .mac = "02:00:00:00:00"});
  expect_invalid({.name = "host", .peer_name = "eth0", .peer_mac = "zz:00:00:00:00:01"});
}

}  // namespace
}  // namespace netiface::nl
