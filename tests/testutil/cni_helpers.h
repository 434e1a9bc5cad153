// Helpers for tests that call verbs in-process (they link libcni): building CmdArgs and catching the
// cni::Error a call must throw.
#pragma once

#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "netiface/cni/config.h"
#include "netiface/cni/error.h"
#include "netiface/cni/skel.h"

namespace netiface::testing {

// Runs `f`, which must throw a cni::Error, and returns it (a test failure, and Error(0, ""), when none).
template <typename F>
cni::Error ThrownError(F&& f) {
  try {
    f();
  } catch (const cni::Error& e) {
    return e;
  }
  ADD_FAILURE() << "no cni::Error thrown";
  return cni::Error(0, "");
}

// The CmdArgs skel would build for `command` with `conf` on stdin.
struct CallSpec {
  std::string command = "ADD";
  std::string container_id = "ctr1";
  std::string netns = "/run/netns/pod";
  std::string ifname = "eth0";
  std::string cni_args;
  std::string path = "/opt/cni/bin";
};
inline cni::CmdArgs MakeCmdArgs(const nlohmann::json& conf, const CallSpec& s = {}) {
  cni::CmdArgs a;
  a.command = s.command;
  a.container_id = s.container_id;
  a.netns = s.netns;
  a.ifname = s.ifname;
  a.args = s.cni_args;
  a.path = s.path;
  a.stdin_data = conf.dump();
  a.conf = cni::ParseNetConf(a.stdin_data);
  return a;
}

}  // namespace netiface::testing
