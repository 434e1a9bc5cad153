// Config validation and the pure choices: every key, the conditions subset, the container address per
// family as the reference picks it, the route lookup for route_localnet.
#include "netiface/portmap/config.h"

#include <sys/socket.h>

#include <gtest/gtest.h>

#include "netiface/cni/error.h"

namespace netiface::portmap {
namespace {

using nlohmann::json;

cni::NetConf Conf(json extra = json::object()) {
  json j = {
      {"cniVersion", "1.0.0"},
      {"name", "net1"},
      {"type", "portmap"},
      {"runtimeConfig",
       {{"portMappings",
         json::array({{{"hostPort", 8080}, {"containerPort", 80}, {"protocol", "tcp"}},
                      {{"hostPort", 5353}, {"containerPort", 53}, {"protocol", "UDP"}, {"hostIP", "192.0.2.1"}}})}}}};
  j.update(extra);
  return cni::ParseNetConf(j.dump());
}

int Code(const json& extra) {
  try {
    ParseConfig(Conf(extra));
  } catch (const cni::Error& e) {
    return e.code();
  }
  return 0;
}

TEST(PortmapConfig, ReadsTheReferenceKeys) {
  Config c = ParseConfig(Conf());
  EXPECT_EQ(c.network, "net1");
  EXPECT_TRUE(c.snat);
  ASSERT_EQ(c.mappings.size(), 2u);
  EXPECT_EQ(c.mappings[0], (nat::PortMapping{8080, 80, "tcp", std::nullopt}));
  EXPECT_EQ(c.mappings[1], (nat::PortMapping{5353, 53, "udp", cni::IpAddr::Parse("192.0.2.1")}));
  EXPECT_FALSE(ParseConfig(Conf({{"snat", false}})).snat);
  EXPECT_TRUE(ParseConfig(Conf({{"runtimeConfig", json::object()}})).mappings.empty());
  // No protocol: tcp.
  auto c2 = ParseConfig(
      Conf({{"runtimeConfig", {{"portMappings", json::array({{{"hostPort", 1}, {"containerPort", 2}}})}}}}));
  EXPECT_EQ(c2.mappings.at(0).protocol, "tcp");
  EXPECT_EQ(Code({{"backend", "nftables"}}), 0);
  EXPECT_EQ(Code({{"backend", "iptables"}}), 0);
  EXPECT_EQ(Code({{"markMasqBit", 13}}), 0);
}

TEST(PortmapConfig, RefusesWhatItCannotServe) {
  auto mapping = [](json m) { return json{{"runtimeConfig", {{"portMappings", json::array({m})}}}}; };
  EXPECT_EQ(Code(mapping({{"hostPort", 0}, {"containerPort", 80}})), cni::kInvalidConfig);
  EXPECT_EQ(Code(mapping({{"hostPort", 70000}, {"containerPort", 80}})), cni::kInvalidConfig);
  EXPECT_EQ(Code(mapping({{"hostPort", 80}})), cni::kInvalidConfig);
  EXPECT_EQ(Code(mapping({{"hostPort", "80"}, {"containerPort", 80}})), cni::kInvalidConfig);
  EXPECT_EQ(Code(mapping({{"hostPort", 80}, {"containerPort", 80}, {"protocol", "icmp"}})), cni::kInvalidConfig);
  EXPECT_EQ(Code(mapping({{"hostPort", 80}, {"containerPort", 80}, {"hostIP", "nope"}})), cni::kInvalidConfig);
  EXPECT_EQ(Code({{"runtimeConfig", {{"portMappings", "x"}}}}), cni::kInvalidConfig);
  EXPECT_EQ(Code({{"snat", "yes"}}), cni::kInvalidConfig);
  EXPECT_EQ(Code({{"markMasqBit", 32}}), cni::kInvalidConfig);
  EXPECT_EQ(Code({{"markMasqBit", -1}}), cni::kInvalidConfig);
  EXPECT_EQ(Code({{"externalSetMarkChain", "KUBE-MARK-MASQ"}}), cni::kInvalidConfig);
  EXPECT_EQ(Code({{"externalSetMarkChain", "KUBE-MARK-MASQ"}, {"markMasqBit", 13}}), cni::kInvalidConfig);
  EXPECT_EQ(Code({{"backend", "ebpf"}}), cni::kInvalidConfig);
  EXPECT_EQ(Code({{"conditionsV4", json::array({"-m", "comment"})}}), cni::kInvalidConfig);
  EXPECT_EQ(Code({{"conditionsV4", json::array({"-s"})}}), cni::kInvalidConfig);
  EXPECT_EQ(Code({{"conditionsV4", json::array({"!"})}}), cni::kInvalidConfig);
  EXPECT_EQ(Code({{"conditionsV4", json::array({"-s", "fd00::/8"})}}), cni::kInvalidConfig);
  EXPECT_EQ(Code({{"conditionsV6", json::array({"-d", "10.0.0.0/8"})}}), cni::kInvalidConfig);
  EXPECT_EQ(Code({{"conditionsV4", "-s 10.0.0.0/8"}}), cni::kInvalidConfig);
}

TEST(PortmapConfig, ConditionsSubset) {
  Config c = ParseConfig(Conf({{"conditionsV4", json::array({"!", "-s", "192.0.2.0/24", "--destination 198.51.100.7"})},
                               {"conditionsV6", json::array({"! -d fd00::/8"})}}));
  ASSERT_EQ(c.conditions_v4.size(), 2u);
  EXPECT_EQ(c.conditions_v4[0], (nat::AddrMatch{true, true, *cni::IpNet::Parse("192.0.2.0/24")}));
  EXPECT_EQ(c.conditions_v4[1], (nat::AddrMatch{false, false, *cni::IpNet::Parse("198.51.100.7/32")}));
  ASSERT_EQ(c.conditions_v6.size(), 1u);
  EXPECT_EQ(c.conditions_v6[0], (nat::AddrMatch{false, true, *cni::IpNet::Parse("fd00::/8")}));
}

TEST(PortmapConfig, ContainerAddressPerFamilyAsTheReferencePicksIt) {
  cni::Result r = cni::ParseResult(json::parse(R"({"cniVersion":"1.0.0",
    "interfaces":[{"name":"cni0"},{"name":"veth1"},{"name":"eth0","sandbox":"/var/run/netns/x"}],
    "ips":[{"address":"10.1.0.1/24","interface":0},{"address":"10.1.0.5/24","interface":2},
           {"address":"10.1.0.6/24","interface":2},{"address":"fd00::5/64"}]})"),
                                   "1.0.0");
  auto addrs = ContainerAddrs(r, "eth0");
  ASSERT_EQ(addrs.size(), 2u);
  EXPECT_EQ(addrs[0].ToString(), "10.1.0.5");
  EXPECT_EQ(addrs[1].ToString(), "fd00::5");
  // Another ifname: only the IP without an interface index remains.
  auto other = ContainerAddrs(r, "eth1");
  ASSERT_EQ(other.size(), 1u);
  EXPECT_EQ(other[0].ToString(), "fd00::5");
}

TEST(PortmapConfig, RoutedIfindexIsTheLongestMatch) {
  std::vector<nl::RouteInfo> routes = {{.dst = *cni::IpNet::Parse("0.0.0.0/0"), .ifindex = 2},
                                       {.dst = *cni::IpNet::Parse("10.1.0.0/24"), .ifindex = 5},
                                       {.dst = *cni::IpNet::Parse("10.1.0.0/16"), .ifindex = 4},
                                       {.dst = *cni::IpNet::Parse("fd00::/64"), .ifindex = 6}};
  EXPECT_EQ(RoutedIfindex(routes, *cni::IpAddr::Parse("10.1.0.5")), 5);
  EXPECT_EQ(RoutedIfindex(routes, *cni::IpAddr::Parse("8.8.8.8")), 2);
  EXPECT_EQ(RoutedIfindex({}, *cni::IpAddr::Parse("8.8.8.8")), std::nullopt);
}

}  // namespace
}  // namespace netiface::portmap
