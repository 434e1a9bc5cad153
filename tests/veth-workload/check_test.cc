#include "netiface/veth_workload/check.h"

#include <gtest/gtest.h>

#include "fake_ops.h"
#include "netiface/cni/error.h"
#include "test_helpers.h"

namespace netiface::veth_workload {
namespace {

using nlohmann::json;

cni::IpNet Net(const std::string& s) { return *cni::IpNet::Parse(s); }

class CheckTest : public ::testing::Test {
 protected:
  void SetUp() override {
    config_ = ParseConfig(cni::ParseNetConf(test::BaseConf().dump()));
    id_ = {.node = "node1", .pod_namespace = "namespace", .pod = "podname", .container_id = "ctr1", .ifname = "eth0"};
    cni::Result ipam;
    ipam.ips.push_back({.address = Net("10.0.0.2/24")});
    ipam.ips.push_back({.address = Net("fd00::2/64")});
    ipam.routes.push_back({.dst = Net("10.1.0.0/16")});
    ipam.routes.push_back({.dst = Net("::/0")});
    plan_ = MakePlan(config_, id_, {}, ipam, "/run/netns/pod");
    prev_ = BuildResult(plan_, "0a:58:0a:00:00:02");
    observed_ = test::ObservedFor(plan_, "0A:58:0A:00:00:02");
  }

  std::vector<std::string> Problems() {
    return CompareState(ExpectFromPrevResult(config_, id_, prev_, "/run/netns/pod"), observed_);
  }
  // The problems mention `needle` (and there are some).
  void ExpectProblem(const std::string& needle) {
    auto p = Problems();
    ASSERT_FALSE(p.empty()) << "no problem found, expected one about " << needle;
    bool found = false;
    for (const auto& s : p) found = found || s.find(needle) != std::string::npos;
    EXPECT_TRUE(found) << needle << " not in: " << ::testing::PrintToString(p);
  }

  Config config_;
  Identity id_;
  Plan plan_;
  cni::Result prev_;
  Observed observed_;
};

TEST_F(CheckTest, MatchingStateHasNoProblems) {
  EXPECT_TRUE(Problems().empty()) << ::testing::PrintToString(Problems());
}

TEST_F(CheckTest, Expectation) {
  CheckExpectation e = ExpectFromPrevResult(config_, id_, prev_, "/run/netns/pod");
  EXPECT_EQ(e.host_veth, "cali82111e10a96");
  EXPECT_EQ(e.container_mac, "0a:58:0a:00:00:02");
  EXPECT_EQ(e.addresses, (std::vector<cni::IpNet>{Net("10.0.0.2/32"), Net("fd00::2/128")}));
  EXPECT_TRUE(e.has_v4);
  EXPECT_TRUE(e.has_v6);
  EXPECT_EQ(e.routes.size(), 2u);
  EXPECT_EQ(e.host_sysctls, HostSysctls("cali82111e10a96", true, true));
}

TEST_F(CheckTest, RemovedContainerRoute) {
  observed_.container_routes.erase(observed_.container_routes.begin() + 1);  // 10.1.0.0/16
  ExpectProblem("10.1.0.0/16 via 169.254.1.1");
}

TEST_F(CheckTest, RemovedGatewayRoute) {
  observed_.container_routes.erase(observed_.container_routes.begin());
  ExpectProblem("169.254.1.1/32");
}

TEST_F(CheckTest, RouteThroughAnotherInterfaceDoesNotCount) {
  observed_.container_routes[2].ifindex = 9;  // ::/0
  ExpectProblem("::/0");
}

TEST_F(CheckTest, RemovedAddress) {
  observed_.container_addresses.erase(observed_.container_addresses.begin());
  ExpectProblem("lacks address 10.0.0.2/32");
}

TEST_F(CheckTest, RemovedHostRoute) {
  observed_.host_routes.pop_back();
  ExpectProblem("host route fd00::2/128");
}

TEST_F(CheckTest, GoneVethOrNamespace) {
  Observed saved = observed_;
  observed_.host_link.reset();
  ExpectProblem("host veth cali82111e10a96 does not exist");
  observed_ = saved;
  observed_.container_link.reset();
  ExpectProblem("interface eth0 does not exist");
  observed_ = Observed{};
  ExpectProblem("network namespace /run/netns/pod does not exist");
}

TEST_F(CheckTest, LinkProperties) {
  Observed saved = observed_;
  observed_.container_link->mac = "0a:58:0a:00:00:03";
  ExpectProblem("has MAC 0a:58:0a:00:00:03");
  observed_ = saved;
  observed_.host_link->mac = "0a:58:0a:00:00:03";
  ExpectProblem("expected ee:ee:ee:ee:ee:ee");
  observed_ = saved;
  observed_.host_link->peer_index = 3;
  ExpectProblem("is not the peer of eth0");
  observed_ = saved;
  observed_.host_link->admin_up = false;
  ExpectProblem("cali82111e10a96 is down");
  observed_ = saved;
  observed_.container_link->mtu = 1400;
  ExpectProblem("has MTU 1400");
  observed_ = saved;
  observed_.host_link->kind = "dummy";
  ExpectProblem("is not a veth");
}

TEST_F(CheckTest, Sysctls) {
  observed_.host_sysctls[0].second = "0";  // v4 proxy_arp
  ExpectProblem("proxy_arp is 0, expected 1");
  observed_.host_sysctls[0].second = std::nullopt;
  ExpectProblem("proxy_arp is missing");
}

TEST_F(CheckTest, PrevResultMustDescribeTheAttachment) {
  auto expect_invalid = [&](const cni::Result& prev, const std::string& needle) {
    try {
      ExpectFromPrevResult(config_, id_, prev, "/run/netns/pod");
      ADD_FAILURE() << "accepted; expected an error about " << needle;
    } catch (const cni::Error& e) {
      EXPECT_EQ(e.code(), cni::kInvalidConfig);
      EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
    }
  };
  cni::Result p = prev_;
  p.interfaces[1].sandbox = "/run/netns/other";
  expect_invalid(p, "/run/netns/other");
  p = prev_;
  p.interfaces[0].name = "caliother";
  expect_invalid(p, "cali82111e10a96");
  p = prev_;
  p.interfaces.pop_back();
  expect_invalid(p, "eth0");
  p = prev_;
  p.ips.clear();
  expect_invalid(p, "no IP");
}

}  // namespace
}  // namespace netiface::veth_workload
