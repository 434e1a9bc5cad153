// A NETLINK_ROUTE socket bound to one namespace, and the one place libnl error codes are converted.
#pragma once

#include <string>

struct nl_sock;

namespace netiface::nl {

class NetNs;

class Socket {
 public:
  // A socket in the namespace this thread is in.
  static Socket Open();
  // A socket acting in `ns` (the thread enters ns only while opening it).
  static Socket OpenIn(const NetNs& ns);

  Socket(Socket&& o) noexcept;
  Socket& operator=(Socket&& o) noexcept;
  Socket(const Socket&) = delete;
  Socket& operator=(const Socket&) = delete;
  ~Socket();

  nl_sock* get() const noexcept { return sock_; }

 private:
  explicit Socket(nl_sock* s) : sock_(s) {}
  nl_sock* sock_ = nullptr;
};

// Converts a negative libnl return code into cni::Error(kNetlink, "<what>: <cause>") whose sys_errno()
// is the errno the kernel reported (or the one the NLE_* code stands for; 0 when none does) and whose
// details are the kernel's extended-ACK message, if any. Returns `rc` unchanged when it is >= 0.
// The only function that interprets NLE_* codes: callers branch on sys_errno(), never on the text.
int Check(int rc, const std::string& what);
// True when `rc` is the libnl code for "object exists" / "object not found".
bool IsExists(int rc);
bool IsNotFound(int rc);

}  // namespace netiface::nl
