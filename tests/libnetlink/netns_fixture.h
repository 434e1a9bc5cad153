// Fixture of the privileged libnetlink tests: a throw-away "host" and "pod" namespace, each with a
// socket acting in it. Nothing is ever created in the test process's own namespace.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include <gtest/gtest.h>

#include "netiface/cni/error.h"
#include "netiface/netlink/link.h"
#include "netiface/netlink/netns.h"
#include "netiface/netlink/socket.h"
#include "testutil.h"

namespace netiface::nl {

class NetnsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    NETIFACE_REQUIRE_ROOT();
    host_tmp_ = std::make_unique<testing::TempNetns>("nlh");
    pod_tmp_ = std::make_unique<testing::TempNetns>("nlp");
    host_ns_ = NetNs::Open(host_tmp_->path());
    pod_ns_ = NetNs::Open(pod_tmp_->path());
    ASSERT_TRUE(host_ns_ && pod_ns_);
    host_.emplace(Socket::OpenIn(*host_ns_));
    pod_.emplace(Socket::OpenIn(*pod_ns_));
  }

  // A veth pair: `host_name` in the host namespace, eth0 in the pod, both up.
  void MakePair(const std::string& host_name, bool up = true) {
    VethSpec spec;
    spec.name = host_name;
    spec.peer_name = "eth0";
    spec.peer_ns = &*pod_ns_;
    CreateVeth(*host_, spec);
    if (up) {
      SetLinkUp(*host_, host_name);
      SetLinkUp(*pod_, "eth0");
    }
  }

  int Index(Socket& s, const std::string& name) {
    auto l = FindLink(s, name);
    EXPECT_TRUE(l) << name;
    return l ? l->index : 0;
  }

  // Declared first: destroyed after the sockets and handles into them.
  std::unique_ptr<testing::TempNetns> host_tmp_, pod_tmp_;
  std::optional<NetNs> host_ns_, pod_ns_;
  std::optional<Socket> host_, pod_;
};

// Runs `f`, expecting a cni::Error with `code`; returns its message ("" when none was thrown).
template <typename F>
std::string ExpectError(int code, F&& f) {
  try {
    f();
  } catch (const cni::Error& e) {
    EXPECT_EQ(e.code(), code) << e.msg();
    return e.msg();
  }
  ADD_FAILURE() << "no cni::Error thrown";
  return {};
}

// The errno of the cni::Error `f` throws (-1 when it throws none).
template <typename F>
int ErrnoOf(F&& f) {
  try {
    f();
  } catch (const cni::Error& e) {
    return e.sys_errno();
  }
  ADD_FAILURE() << "no cni::Error thrown";
  return -1;
}

}  // namespace netiface::nl
