// Throw-away topology for the agent's kernel-side tests: an underlay namespace with bridge br0
// (192.0.2.254/24, no route to the pods), and per node a namespace with uplink eth0 (192.0.2.<n>/24,
// default route via .254, forwarding on) and one pod namespace behind a veth (node vp0 10.5.<n>.1/24,
// pod eth0 10.5.<n>.2/24, default via 10.5.<n>.1). Every namespace is deleted with the object.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "testutil.h"

namespace netiface::agent::testing {

struct TopologyNode {
  std::unique_ptr<netiface::testing::TempNetns> node;
  std::unique_ptr<netiface::testing::TempNetns> pod;
  int n = 0;
  std::string uplink_ip() const { return "192.0.2." + std::to_string(n); }
  std::string subnet() const { return "10.5." + std::to_string(n) + ".0/24"; }
  std::string pod_ip() const { return "10.5." + std::to_string(n) + ".2"; }
};

class Topology {
 public:
  // Fails the current test (ASSERT-style: check HasFatalFailure) when a step fails.
  explicit Topology(int nodes) {
    underlay_ = std::make_unique<netiface::testing::TempNetns>("agul");
    Must(*underlay_, "ip link add br0 type bridge && ip addr add 192.0.2.254/24 dev br0 && ip link set br0 up");
    for (int n = 1; n <= nodes; ++n) {
      TopologyNode t;
      t.n = n;
      t.node = std::make_unique<netiface::testing::TempNetns>("agn");
      t.pod = std::make_unique<netiface::testing::TempNetns>("agp");
      const std::string ns = std::to_string(n);
      Must(*underlay_, "ip link add ul" + ns + " master br0 type veth peer name eth0 netns " + t.node->name() +
                           " && ip link set ul" + ns + " up");
      Must(*t.node, "ip addr add " + t.uplink_ip() +
                        "/24 dev eth0 && ip link set eth0 up && "
                        "ip route add default via 192.0.2.254 && sysctl -qw net.ipv4.ip_forward=1 && "
                        "ip link add vp0 type veth peer name eth0 netns " +
                        t.pod->name() + " && ip addr add 10.5." + ns + ".1/24 dev vp0 && ip link set vp0 up");
      Must(*t.pod, "ip addr add " + t.pod_ip() +
                       "/24 dev eth0 && ip link set eth0 up && "
                       "ip route add default via 10.5." +
                       ns + ".1");
      nodes_.push_back(std::move(t));
    }
  }

  const netiface::testing::TempNetns& underlay() const { return *underlay_; }
  const TopologyNode& node(int n) const { return nodes_.at(static_cast<size_t>(n - 1)); }

  static void Must(const netiface::testing::TempNetns& ns, const std::string& cmd) {
    auto r = ns.Sh(cmd);
    ASSERT_EQ(r.exit_code, 0) << ns.name() << ": " << cmd << "\n" << r.err;
  }

 private:
  // Declared first: the underlay goes last, after the nodes whose veths end in it.
  std::unique_ptr<netiface::testing::TempNetns> underlay_;
  std::vector<TopologyNode> nodes_;
};

}  // namespace netiface::agent::testing
