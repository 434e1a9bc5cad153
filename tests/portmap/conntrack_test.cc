// The ctnetlink messages as values: the dump and delete requests, and a dump reply read for UDP entries
// to the given ports.
#include "netiface/portmap/conntrack.h"

#include <arpa/inet.h>
#include <linux/netfilter/nfnetlink.h>
#include <linux/netfilter/nfnetlink_conntrack.h>
#include <linux/netlink.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <cstring>

#include <gtest/gtest.h>

#include "netiface/cni/error.h"

namespace netiface::portmap {
namespace {

std::string Attr(uint16_t type, const std::string& payload) {
  nlattr a{static_cast<uint16_t>(NLA_HDRLEN + payload.size()), type};
  std::string out(reinterpret_cast<const char*>(&a), sizeof a);
  out += payload;
  out.resize(NLA_ALIGN(out.size()), '\0');
  return out;
}
std::string U8(uint8_t v) { return std::string(1, static_cast<char>(v)); }
std::string Be16(uint16_t v) {
  uint16_t be = htons(v);
  return std::string(reinterpret_cast<const char*>(&be), 2);
}

std::string TupleOrig(uint8_t proto, uint16_t dport) {
  std::string ip =
      Attr(CTA_IP_V4_SRC, std::string("\x0a\x00\x00\x01", 4)) + Attr(CTA_IP_V4_DST, std::string("\xc6\x33\x64\x01", 4));
  std::string l4 =
      Attr(CTA_PROTO_NUM, U8(proto)) + Attr(CTA_PROTO_SRC_PORT, Be16(40000)) + Attr(CTA_PROTO_DST_PORT, Be16(dport));
  return Attr(CTA_TUPLE_ORIG | NLA_F_NESTED,
              Attr(CTA_TUPLE_IP | NLA_F_NESTED, ip) + Attr(CTA_TUPLE_PROTO | NLA_F_NESTED, l4));
}

std::string Message(uint16_t type, const std::string& attrs) {
  nlmsghdr h{};
  h.nlmsg_type = type;
  nfgenmsg g{AF_INET, NFNETLINK_V0, 0};
  std::string body(reinterpret_cast<const char*>(&g), sizeof g);
  body.resize(NLMSG_ALIGN(body.size()), '\0');
  body += attrs;
  h.nlmsg_len = static_cast<uint32_t>(NLMSG_HDRLEN + body.size());
  std::string out(reinterpret_cast<const char*>(&h), sizeof h);
  return out + body;
}

TEST(PortmapConntrack, RequestsAreCtnetlinkGetDumpAndDeleteAck) {
  std::string dump = CtDumpRequest(AF_INET6, 7);
  nlmsghdr h;
  std::memcpy(&h, dump.data(), sizeof h);
  EXPECT_EQ(h.nlmsg_len, dump.size());
  EXPECT_EQ(h.nlmsg_type, (NFNL_SUBSYS_CTNETLINK << 8) | IPCTNL_MSG_CT_GET);
  EXPECT_EQ(h.nlmsg_flags, NLM_F_REQUEST | NLM_F_DUMP);
  EXPECT_EQ(h.nlmsg_seq, 7u);
  EXPECT_EQ(static_cast<uint8_t>(dump[NLMSG_HDRLEN]), AF_INET6);

  const std::string tuple = TupleOrig(IPPROTO_UDP, 5353);
  std::string del = CtDeleteRequest(AF_INET, 8, tuple);
  std::memcpy(&h, del.data(), sizeof h);
  EXPECT_EQ(h.nlmsg_type, (NFNL_SUBSYS_CTNETLINK << 8) | IPCTNL_MSG_CT_DELETE);
  EXPECT_EQ(h.nlmsg_flags, NLM_F_REQUEST | NLM_F_ACK);
  EXPECT_EQ(del.substr(NLMSG_HDRLEN + NLMSG_ALIGN(sizeof(nfgenmsg))), tuple);
}

TEST(PortmapConntrack, DumpReplyYieldsUdpEntriesToThePortsOnly) {
  const std::string udp = TupleOrig(IPPROTO_UDP, 5353);
  std::string buffer = Message((NFNL_SUBSYS_CTNETLINK << 8), udp) +
                       Message((NFNL_SUBSYS_CTNETLINK << 8), TupleOrig(IPPROTO_TCP, 5353)) +
                       Message((NFNL_SUBSYS_CTNETLINK << 8), TupleOrig(IPPROTO_UDP, 53));
  bool done = false;
  auto tuples = CtMatchingTuples(buffer, {5353}, &done);
  ASSERT_EQ(tuples.size(), 1u);
  EXPECT_EQ(tuples[0], udp);
  EXPECT_FALSE(done);
  CtMatchingTuples(Message(NLMSG_DONE, ""), {5353}, &done);
  EXPECT_TRUE(done);
  int err = -EPERM;
  std::string error = Message(NLMSG_ERROR, "");
  error.replace(NLMSG_HDRLEN, sizeof err, reinterpret_cast<const char*>(&err), sizeof err);
  EXPECT_THROW(CtMatchingTuples(error, {5353}, &done), cni::Error);
  // Truncated input is ignored, never read past.
  EXPECT_TRUE(CtMatchingTuples(buffer.substr(0, 10), {5353}, &done).empty());
}

}  // namespace
}  // namespace netiface::portmap
