// The one error type of the suite. Inside the code: throw cni::Error; at the edge (skel) the only
// top-level catch turns it into the spec's JSON {cniVersion, code, msg, details} on stdout.
#pragma once

#include <stdexcept>
#include <string>

#include <nlohmann/json.hpp>

namespace netiface::cni {

// Spec error codes (SPEC.md "Error"); 100+ are ours.
enum Code : int {
  kIncompatibleVersion = 1,
  kUnsupportedField = 2,
  kUnknownContainer = 3,
  kInvalidEnv = 4,
  kIoFailure = 5,
  kDecodeFailure = 6,
  kInvalidConfig = 7,
  kTryAgainLater = 11,
  kNotAvailable = 50,         // STATUS: ADD cannot succeed now
  kLimitedConnectivity = 51,  // STATUS: and existing containers may suffer
  kNetlink = 100,             // the kernel refused a netlink request
  kDelegateFailed = 101,      // a delegated plugin failed without a parsable error
  kNatFailure = 102,          // nftables refused a ruleset change
  kInternal = 999,            // anything unexpected (a std::exception that is not an Error)
};

class Error : public std::runtime_error {
 public:
  Error(int code, std::string msg, std::string details = {});
  // A failed system call or kernel request: msg + ": " + strerror(err), and err kept as the cause, so that
  // callers branch on sys_errno() (EEXIST, ENOENT, EACCES, ...) and never on the text.
  static Error FromErrno(int code, int err, const std::string& msg, std::string details = {});

  int code() const noexcept { return code_; }
  // The errno that caused this error; 0 when it has none (a config error, a delegate's error).
  int sys_errno() const noexcept { return sys_errno_; }
  const std::string& msg() const noexcept { return msg_; }
  const std::string& details() const noexcept { return details_; }

  // The spec's error object. cni_version is the version of the request; empty leaves the key out (a
  // request not read yet, not parsed, or naming no version we speak: the reference never writes it).
  nlohmann::json ToJson(const std::string& cni_version) const;
  // Parses a plugin's error output; returns an Error with kDelegateFailed if it is not one.
  static Error FromJson(const nlohmann::json& j, const std::string& fallback_msg);

 private:
  int code_;
  int sys_errno_ = 0;
  std::string msg_;
  std::string details_;
};

}  // namespace netiface::cni
