// Shared builders for veth-workload's unit tests.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "cni_helpers.h"
#include "netiface/cni/config.h"
#include "netiface/cni/skel.h"

namespace netiface::veth_workload::test {

// A minimal valid config; tests add or override keys.
inline nlohmann::json BaseConf(const std::string& version = "1.1.0") {
  return {{"cniVersion", version},
          {"name", "vwnet"},
          {"type", "veth-workload"},
          {"nodename", "node1"},
          {"ipam", {{"type", "host-local"}, {"subnet", "10.0.0.0/24"}}}};
}

inline cni::CmdArgs MakeArgs(const nlohmann::json& conf, const std::string& cni_args = "",
                             const std::string& command = "ADD", const std::string& netns = "/run/netns/pod",
                             const std::string& container_id = "ctr1", const std::string& ifname = "eth0") {
  return testing::MakeCmdArgs(
      conf, {.command = command, .container_id = container_id, .netns = netns, .ifname = ifname, .cni_args = cni_args});
}

inline const char* kPodArgs = "IgnoreUnknown=1;K8S_POD_NAMESPACE=namespace;K8S_POD_NAME=podname";

}  // namespace netiface::veth_workload::test
