#include "netiface/netlink/socket.h"

#include <linux/netlink.h>
#include <sys/socket.h>

#include <cerrno>
#include <cstring>
#include <exception>
#include <optional>

#include <netlink/errno.h>
#include <netlink/handlers.h>
#include <netlink/netlink.h>
#include <netlink/socket.h>

#include "netiface/cni/error.h"
#include "netiface/netlink/netns.h"
#include "nl_util.h"

namespace netiface::nl {
namespace {

// The kernel's own report of the last failed request on this thread: its errno and, when the
// kernel sent one, the extended-ACK message. libnl keeps only a coarse NLE_* code; Check uses this
// to name the real cause. Plugins are single-threaded; the record is per thread regardless.
struct KernelError {
  int error = 0;  // positive errno, 0 = none recorded
  std::string text;
};
thread_local KernelError g_last_error;

std::string ExtAckMessage(const nlmsgerr* e) {
  const auto* hdr = reinterpret_cast<const nlmsghdr*>(reinterpret_cast<const char*>(e) - NLMSG_HDRLEN);
  if (!(hdr->nlmsg_flags & NLM_F_ACK_TLVS)) return {};
  size_t payload = sizeof(nlmsgerr);
  if (!(hdr->nlmsg_flags & NLM_F_CAPPED)) payload += e->msg.nlmsg_len - NLMSG_HDRLEN;
  size_t start = NLMSG_ALIGN(NLMSG_HDRLEN + payload);
  if (hdr->nlmsg_len <= start) return {};
  nlattr* tb[NLMSGERR_ATTR_MAX + 1] = {};
  auto* attrs = reinterpret_cast<nlattr*>(const_cast<char*>(reinterpret_cast<const char*>(hdr)) + start);
  if (nla_parse(tb, NLMSGERR_ATTR_MAX, attrs, static_cast<int>(hdr->nlmsg_len - start), nullptr) < 0) return {};
  if (tb[NLMSGERR_ATTR_MSG] == nullptr) return {};
  const char* s = static_cast<const char*>(nla_data(tb[NLMSGERR_ATTR_MSG]));
  return std::string(s, strnlen(s, nla_len(tb[NLMSGERR_ATTR_MSG])));
}

int RecordKernelError(sockaddr_nl*, nlmsgerr* e, void*) {
  g_last_error.error = -e->error;
  g_last_error.text = ExtAckMessage(e);
  return NL_STOP;  // libnl then returns -nl_syserr2nlerr(e->error), as without this handler
}

struct CbDeleter {
  void operator()(nl_cb* cb) const noexcept { nl_cb_put(cb); }
};

}  // namespace

Socket Socket::Open() {
  nl_sock* sk = nl_socket_alloc();
  if (sk == nullptr) throw cni::Error(cni::kNetlink, "failed to allocate a netlink socket");
  Socket s(sk);
  Check(nl_connect(sk, NETLINK_ROUTE), "failed to open a netlink socket");
  int one = 1;
  // Best effort: older kernels lack extended ACKs, and errors are reported without them.
  setsockopt(nl_socket_get_fd(sk), SOL_NETLINK, NETLINK_EXT_ACK, &one, sizeof one);
  setsockopt(nl_socket_get_fd(sk), SOL_NETLINK, NETLINK_CAP_ACK, &one, sizeof one);
  nl_socket_modify_err_cb(sk, NL_CB_CUSTOM, RecordKernelError, nullptr);
  return s;
}

Socket Socket::OpenIn(const NetNs& ns) {
  ScopedSetNs in_ns(ns);
  return Open();
}

Socket::Socket(Socket&& o) noexcept : sock_(o.sock_) { o.sock_ = nullptr; }

Socket& Socket::operator=(Socket&& o) noexcept {
  if (this != &o) {
    if (sock_ != nullptr) nl_socket_free(sock_);
    sock_ = o.sock_;
    o.sock_ = nullptr;
  }
  return *this;
}

Socket::~Socket() {
  if (sock_ != nullptr) nl_socket_free(sock_);
}

// The errno a libnl code stands for, when the kernel's own report is not at hand (libnl's checks
// before sending, replies it parsed itself); 0 for codes with no errno meaning.
int ErrnoOf(int nle) {
  switch (nle) {
    case NLE_EXIST:
      return EEXIST;
    case NLE_OBJ_NOTFOUND:
      return ENOENT;
    case NLE_NODEV:
      return ENODEV;
    case NLE_NOADDR:
      return EADDRNOTAVAIL;
    case NLE_PERM:
      return EPERM;
    case NLE_NOACCESS:
      return EACCES;
    case NLE_BUSY:
      return EBUSY;
    case NLE_NOMEM:
      return ENOMEM;
    case NLE_INVAL:
      return EINVAL;
    case NLE_RANGE:
      return ERANGE;
    case NLE_AGAIN:
      return EAGAIN;
    case NLE_OPNOTSUPP:
      return EOPNOTSUPP;
    case NLE_AF_NOSUPPORT:
      return EAFNOSUPPORT;
    default:
      return 0;
  }
}

int Check(int rc, const std::string& what) {
  if (rc >= 0) return rc;
  KernelError last = std::move(g_last_error);
  g_last_error = {};
  if (last.error != 0 && nl_syserr2nlerr(last.error) == -rc) {
    // The kernel's extended-ACK text, when it sent one, is the error's details.
    throw cni::Error::FromErrno(cni::kNetlink, last.error, what, last.text);
  }
  if (int err = ErrnoOf(-rc); err != 0) throw cni::Error::FromErrno(cni::kNetlink, err, what);
  throw cni::Error(cni::kNetlink, what + ": " + nl_geterror(rc));
}

bool IsExists(int rc) { return rc == -NLE_EXIST; }

bool IsNotFound(int rc) { return rc == -NLE_OBJ_NOTFOUND || rc == -NLE_NODEV || rc == -NLE_NOADDR; }

namespace detail {

int Transact(Socket& s, MsgPtr msg, const std::function<void(nl_msg*)>& on_reply) {
  struct State {
    const std::function<void(nl_msg*)>* fn;
    bool done = false;
    std::exception_ptr error;
  } st{&on_reply};

  nl_cb* base = nl_socket_get_cb(s.get());
  std::unique_ptr<nl_cb, CbDeleter> cb(nl_cb_clone(base));
  nl_cb_put(base);
  if (!cb) ThrowOutOfMemory("netlink callback");

  nl_cb_set(
      cb.get(), NL_CB_VALID, NL_CB_CUSTOM,
      [](nl_msg* m, void* arg) -> int {
        auto* st = static_cast<State*>(arg);
        if (st->error) return NL_SKIP;  // keep draining this request's replies
        try {
          (*st->fn)(m);
        } catch (...) {
          st->error = std::current_exception();
        }
        return NL_OK;
      },
      &st);
  auto finish = [](nl_msg*, void* arg) -> int {
    static_cast<State*>(arg)->done = true;
    return NL_STOP;
  };
  nl_cb_set(cb.get(), NL_CB_ACK, NL_CB_CUSTOM, finish, &st);
  nl_cb_set(cb.get(), NL_CB_FINISH, NL_CB_CUSTOM, finish, &st);

  nlmsghdr* hdr = nlmsg_hdr(msg.get());
  if (!(hdr->nlmsg_flags & NLM_F_DUMP)) hdr->nlmsg_flags |= NLM_F_ACK;
  int rc = nl_send_auto(s.get(), msg.get());
  while (rc >= 0 && !st.done) rc = nl_recvmsgs(s.get(), cb.get());
  if (st.error) std::rethrow_exception(st.error);
  return rc < 0 ? rc : 0;
}

void ParseReply(nl_msg* msg, const std::function<void(nl_object*)>& fn) {
  struct State {
    const std::function<void(nl_object*)>* fn;
    std::exception_ptr error;
  } st{&fn};
  // No exception may cross libnl's C frames: catch here, rethrow below.
  nl_msg_parse(
      msg,
      [](nl_object* obj, void* arg) {
        auto* st = static_cast<State*>(arg);
        try {
          (*st->fn)(obj);
        } catch (...) {
          st->error = std::current_exception();
        }
      },
      &st);
  if (st.error) std::rethrow_exception(st.error);
}

}  // namespace detail
}  // namespace netiface::nl
