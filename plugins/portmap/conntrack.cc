#include "netiface/portmap/conntrack.h"

#include <arpa/inet.h>
#include <linux/netfilter/nfnetlink.h>
#include <linux/netfilter/nfnetlink_conntrack.h>
#include <linux/netlink.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "netiface/cni/error.h"
#include "netiface/cni/log.h"
#include "netiface/cni/unique_fd.h"

namespace netiface::portmap {
namespace {

constexpr size_t kNfgenLen = NLMSG_ALIGN(sizeof(nfgenmsg));

std::string Header(uint16_t type, uint16_t flags, uint32_t seq, int family, size_t payload) {
  std::string out(NLMSG_HDRLEN + kNfgenLen + payload, '\0');
  nlmsghdr h{};
  h.nlmsg_len = static_cast<uint32_t>(out.size());
  h.nlmsg_type = static_cast<uint16_t>((NFNL_SUBSYS_CTNETLINK << 8) | type);
  h.nlmsg_flags = flags;
  h.nlmsg_seq = seq;
  std::memcpy(out.data(), &h, sizeof h);
  nfgenmsg g{};
  g.nfgen_family = static_cast<uint8_t>(family);
  g.version = NFNETLINK_V0;
  std::memcpy(out.data() + NLMSG_HDRLEN, &g, sizeof g);
  return out;
}

// The attributes in [data, data+len): calls f(type without flags, payload, whole attribute).
template <typename F>
void ForEachAttr(const char* data, size_t len, F&& f) {
  size_t off = 0;
  while (off + NLA_HDRLEN <= len) {
    nlattr a;
    std::memcpy(&a, data + off, sizeof a);
    if (a.nla_len < NLA_HDRLEN || off + a.nla_len > len) return;
    f(a.nla_type & NLA_TYPE_MASK, std::string_view(data + off + NLA_HDRLEN, a.nla_len - NLA_HDRLEN),
      std::string_view(data + off, a.nla_len));
    off += NLA_ALIGN(a.nla_len);
  }
}

bool IsUdpToPort(std::string_view tuple, const std::set<uint16_t>& ports) {
  bool udp = false;
  int port = -1;
  ForEachAttr(tuple.data(), tuple.size(), [&](int type, std::string_view payload, std::string_view) {
    if (type != CTA_TUPLE_PROTO) return;
    ForEachAttr(payload.data(), payload.size(), [&](int t, std::string_view p, std::string_view) {
      if (t == CTA_PROTO_NUM && p.size() >= 1) udp = static_cast<uint8_t>(p[0]) == IPPROTO_UDP;
      if (t == CTA_PROTO_DST_PORT && p.size() >= 2) {
        uint16_t be;
        std::memcpy(&be, p.data(), 2);
        port = ntohs(be);
      }
    });
  });
  return udp && port >= 0 && ports.count(static_cast<uint16_t>(port)) != 0;
}

}  // namespace

std::string CtDumpRequest(int family, uint32_t seq) {
  return Header(IPCTNL_MSG_CT_GET, NLM_F_REQUEST | NLM_F_DUMP, seq, family, 0);
}

std::string CtDeleteRequest(int family, uint32_t seq, std::string_view tuple_orig_attr) {
  std::string out =
      Header(IPCTNL_MSG_CT_DELETE, NLM_F_REQUEST | NLM_F_ACK, seq, family, NLA_ALIGN(tuple_orig_attr.size()));
  std::memcpy(out.data() + NLMSG_HDRLEN + kNfgenLen, tuple_orig_attr.data(), tuple_orig_attr.size());
  return out;
}

std::vector<std::string> CtMatchingTuples(std::string_view buffer, const std::set<uint16_t>& ports, bool* done) {
  std::vector<std::string> out;
  size_t off = 0;
  while (off + NLMSG_HDRLEN <= buffer.size()) {
    nlmsghdr h;
    std::memcpy(&h, buffer.data() + off, sizeof h);
    if (h.nlmsg_len < NLMSG_HDRLEN || off + h.nlmsg_len > buffer.size()) break;
    if (h.nlmsg_type == NLMSG_DONE) {
      *done = true;
      break;
    }
    if (h.nlmsg_type == NLMSG_ERROR) {
      int err = 0;
      if (h.nlmsg_len >= NLMSG_HDRLEN + sizeof(int)) std::memcpy(&err, buffer.data() + off + NLMSG_HDRLEN, sizeof err);
      if (err != 0) throw cni::Error(cni::kNetlink, "conntrack dump failed", std::strerror(-err));
    } else if (h.nlmsg_len >= NLMSG_HDRLEN + kNfgenLen) {
      const char* attrs = buffer.data() + off + NLMSG_HDRLEN + kNfgenLen;
      ForEachAttr(attrs, h.nlmsg_len - NLMSG_HDRLEN - kNfgenLen,
                  [&](int type, std::string_view payload, std::string_view whole) {
                    if (type == CTA_TUPLE_ORIG && IsUdpToPort(payload, ports)) out.emplace_back(whole);
                  });
    }
    off += NLMSG_ALIGN(h.nlmsg_len);
  }
  return out;
}

size_t FlushUdpConntrack(const std::set<uint16_t>& ports) {
  if (ports.empty()) return 0;
  cni::UniqueFd fd(::socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_NETFILTER));
  if (fd.get() < 0) throw cni::Error(cni::kNetlink, "cannot open a ctnetlink socket", std::strerror(errno));
  sockaddr_nl local{};
  local.nl_family = AF_NETLINK;
  if (::bind(fd.get(), reinterpret_cast<sockaddr*>(&local), sizeof local) != 0) {
    throw cni::Error(cni::kNetlink, "cannot bind a ctnetlink socket", std::strerror(errno));
  }
  auto send = [&](const std::string& msg) {
    if (::send(fd.get(), msg.data(), msg.size(), 0) != static_cast<ssize_t>(msg.size())) {
      throw cni::Error(cni::kNetlink, "cannot send to ctnetlink", std::strerror(errno));
    }
  };
  std::string buf(1 << 16, '\0');
  auto recv = [&]() -> std::string_view {
    ssize_t n = ::recv(fd.get(), buf.data(), buf.size(), 0);
    if (n < 0) throw cni::Error(cni::kNetlink, "cannot read from ctnetlink", std::strerror(errno));
    return std::string_view(buf.data(), static_cast<size_t>(n));
  };
  uint32_t seq = 1;
  size_t deleted = 0;
  for (int family : {AF_INET, AF_INET6}) {
    std::vector<std::string> tuples;
    send(CtDumpRequest(family, seq++));
    for (bool done = false; !done;) {
      auto more = CtMatchingTuples(recv(), ports, &done);
      tuples.insert(tuples.end(), more.begin(), more.end());
    }
    for (const auto& t : tuples) {  // after the dump: a delete during it would interleave the replies
      send(CtDeleteRequest(family, seq++, t));
      std::string_view ack = recv();
      nlmsghdr h;
      int err = 0;
      if (ack.size() >= NLMSG_HDRLEN + sizeof(int)) {
        std::memcpy(&h, ack.data(), sizeof h);
        if (h.nlmsg_type == NLMSG_ERROR) std::memcpy(&err, ack.data() + NLMSG_HDRLEN, sizeof err);
      }
      if (err == 0) {
        ++deleted;
      } else if (err != -ENOENT) {
        throw cni::Error(cni::kNetlink, "cannot delete a conntrack entry", std::strerror(-err));
      }
    }
  }
  log::Debug("deleted {} UDP conntrack entr(ies)", deleted);
  return deleted;
}

}  // namespace netiface::portmap
