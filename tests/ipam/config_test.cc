#include "netiface/ipam/config.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "netiface/cni/error.h"

namespace netiface::ipam {
namespace {

using cni::IpAddr;
using nlohmann::json;
using ::testing::HasSubstr;

cni::NetConf Conf(json ipam, json extra = json::object()) {
  json j = {{"cniVersion", "1.0.0"}, {"name", "net1"}, {"type", "x"}, {"ipam", ipam}};
  j.update(extra);
  return cni::ParseNetConf(j.dump());
}

IpAddr A(const char* s) { return *IpAddr::Parse(s); }

cni::Error ErrorOf(const cni::NetConf& c, std::string_view args = "") {
  try {
    ParseIpamConfig(c, args);
  } catch (const cni::Error& e) {
    return e;
  }
  ADD_FAILURE() << "no error for " << c.raw.dump();
  return cni::Error(0, "");
}

TEST(IpamConfig, LegacyRangeIsPrependedAndDefaultsApply) {
  auto c = ParseIpamConfig(Conf({{"type", "host-local"},
                                 {"subnet", "10.0.0.0/24"},
                                 {"ranges", json::array({json::array({{{"subnet", "10.1.0.0/24"}}})})}}),
                           "");
  ASSERT_EQ(c.range_sets.size(), 2u);
  EXPECT_EQ(c.range_sets[0].ranges()[0].subnet.ToString(), "10.0.0.0/24");
  EXPECT_EQ(c.range_sets[1].ranges()[0].subnet.ToString(), "10.1.0.0/24");
  EXPECT_EQ(c.store.data_dir, "/var/lib/cni/networks");
  EXPECT_EQ(c.store.network, "net1");
  EXPECT_EQ(c.store.lock_timeout_ms, 5000);
  EXPECT_EQ(c.requested, (std::vector<std::optional<IpAddr>>{std::nullopt, std::nullopt}));
}

TEST(IpamConfig, RuntimeIpRangesArePrepended) {
  auto c = ParseIpamConfig(
      Conf({{"subnet", "10.0.0.0/24"}},
           {{"runtimeConfig", {{"ipRanges", json::array({json::array({{{"subnet", "10.9.0.0/24"}}})})}}}}),
      "");
  ASSERT_EQ(c.range_sets.size(), 2u);
  EXPECT_EQ(c.range_sets[0].ranges()[0].subnet.ToString(), "10.9.0.0/24");
}

TEST(IpamConfig, KeysRoutesDataDirResolvConfLockTimeout) {
  auto c =
      ParseIpamConfig(Conf({{"subnet", "fd00::/64"},
                            {"dataDir", "/tmp/x"},
                            {"resolvConf", "/etc/r.conf"},
                            {"lockTimeoutMs", 250},
                            {"routes", json::array({{{"dst", "0.0.0.0/0"}}, {{"dst", "::/0"}, {"gw", "fd00::9"}}})}}),
                      "");
  EXPECT_EQ(c.store.data_dir, "/tmp/x");
  EXPECT_EQ(c.resolv_conf, "/etc/r.conf");
  EXPECT_EQ(c.store.lock_timeout_ms, 250);
  ASSERT_EQ(c.routes.size(), 2u);
  EXPECT_EQ(c.routes[1].gw, A("fd00::9"));
}

TEST(IpamConfig, RejectionsNameKeyAndValue) {
  struct Case {
    json ipam;
    json extra;
    std::vector<std::string> needles;
  };
  std::vector<Case> cases = {
      {{{"type", "host-local"}}, json::object(), {"no IP ranges"}},
      {{{"subnet", "10.0.0.0/24"}, {"dataDir", 3}}, json::object(), {"ipam.dataDir", "3"}},
      {{{"subnet", "10.0.0.0/24"}, {"lockTimeoutMs", -1}}, json::object(), {"ipam.lockTimeoutMs", "-1"}},
      {{{"subnet", "10.0.0.0/24"}, {"lockTimeoutMs", "5"}}, json::object(), {"ipam.lockTimeoutMs", "\"5\""}},
      {{{"subnet", "10.0.0.3/24"}}, json::object(), {"ipam.subnet", "10.0.0.3/24"}},
      {{{"ranges",
         json::array({json::array({{{"subnet", "10.0.0.0/24"}}}), json::array({{{"subnet", "10.0.0.0/16"}}})})}},
       json::object(),
       {"range set 0 [subnet 10.0.0.0/24 (10.0.0.1-10.0.0.254)]", "range set 1 [subnet 10.0.0.0/16", "overlaps"}},
      {{{"ranges", json::array({json::array({{{"subnet", "10.0.0.0/32"}}})})}},
       json::object(),
       {"ipam.ranges[0][0].subnet", "10.0.0.0/32"}},
      {{{"ranges", "x"}}, json::object(), {"ipam.ranges", "\"x\""}},
      {{{"subnet", "10.0.0.0/24"}, {"routes", json::array({{{"dst", "nope"}}})}},
       json::object(),
       {"ipam.routes[0]", "nope"}},
      {{{"subnet", "10.0.0.0/24"}},
       {{"runtimeConfig", {{"ips", json::array({"10.1.0.5"})}}}},
       {"runtimeConfig.ips[0]", "10.1.0.5", "not in any range set"}},
      {{{"subnet", "10.0.0.0/24"}},
       {{"args", {{"cni", {{"ips", json::array({"10.0.0.1"})}}}}}},
       {"args.cni.ips[0]", "10.0.0.1", "gateway"}},
      {{{"subnet", "10.0.0.0/24"}},
       {{"args", {{"cni", {{"ips", json::array({"10.0.0.5", "10.0.0.6"})}}}}}},
       {"10.0.0.5", "10.0.0.6", "range set 0"}},
      {{{"subnet", "10.0.0.0/24"}},
       {{"runtimeConfig", {{"ips", json::array({"banana"})}}}},
       {"runtimeConfig.ips[0]", "banana"}},
  };
  for (const auto& c : cases) {
    cni::Error e = ErrorOf(Conf(c.ipam, c.extra));
    EXPECT_EQ(e.code(), cni::kInvalidConfig) << c.ipam.dump();
    for (const auto& n : c.needles) EXPECT_THAT(e.msg(), HasSubstr(n)) << c.ipam.dump();
  }
}

TEST(IpamConfig, NoIpamSection) {
  auto conf = cni::ParseNetConf(R"({"cniVersion":"1.0.0","name":"n","type":"host-local"})");
  EXPECT_EQ(ErrorOf(conf).code(), cni::kInvalidConfig);
}

TEST(IpamConfig, MoreThanOneRangeSetPerFamilyNeeds030) {
  json ipam = {{"ranges",
                json::array({json::array({{{"subnet", "10.0.0.0/24"}}}), json::array({{{"subnet", "10.1.0.0/24"}}})})}};
  for (const char* v : {"0.1.0", "0.2.0"}) {
    json j = {{"cniVersion", v}, {"name", "n"}, {"type", "x"}, {"ipam", ipam}};
    cni::Error e = ErrorOf(cni::ParseNetConf(j.dump()));
    EXPECT_EQ(e.code(), cni::kInvalidConfig);
    EXPECT_THAT(e.msg(), HasSubstr(v));
  }
  json dual = {
      {"ranges", json::array({json::array({{{"subnet", "10.0.0.0/24"}}}), json::array({{{"subnet", "fd00::/64"}}})})}};
  json j = {{"cniVersion", "0.2.0"}, {"name", "n"}, {"type", "x"}, {"ipam", dual}};
  EXPECT_EQ(ParseIpamConfig(cni::ParseNetConf(j.dump()), "").range_sets.size(), 2u);
  j["cniVersion"] = "0.3.0";
  j["ipam"] = ipam;
  EXPECT_EQ(ParseIpamConfig(cni::ParseNetConf(j.dump()), "").range_sets.size(), 2u);
}

TEST(IpamConfig, RequestedAddressesFromAllSourcesMatchedToTheirSet) {
  json ipam = {
      {"ranges", json::array({json::array({{{"subnet", "10.0.0.0/24"}}}), json::array({{{"subnet", "fd00::/64"}}}),
                              json::array({{{"subnet", "10.1.0.0/24"}}})})}};
  auto c = ParseIpamConfig(Conf(ipam, {{"args", {{"cni", {{"ips", json::array({"fd00::5/64"})}}}}},
                                       {"runtimeConfig", {{"ips", json::array({"10.1.0.7"})}}}}),
                           "IgnoreUnknown=1;IP=10.0.0.9;K8S_POD_NAME=x");
  EXPECT_EQ(c.requested[0], A("10.0.0.9"));
  EXPECT_EQ(c.requested[1], A("fd00::5"));
  EXPECT_EQ(c.requested[2], A("10.1.0.7"));
}

TEST(IpamConfig, DuplicateRequestsCollapse) {
  auto c = ParseIpamConfig(
      Conf({{"subnet", "10.0.0.0/24"}}, {{"runtimeConfig", {{"ips", json::array({"10.0.0.9", "10.0.0.9/24"})}}}}),
      "IP=10.0.0.9");
  EXPECT_EQ(c.requested[0], A("10.0.0.9"));
}

TEST(IpamConfig, CniArgs) {
  auto conf = Conf({{"subnet", "10.0.0.0/24"}});
  EXPECT_EQ(ErrorOf(conf, "FOO=bar").code(), cni::kInvalidEnv);
  EXPECT_EQ(ErrorOf(conf, "IP=nonsense").code(), cni::kInvalidEnv);
  EXPECT_NO_THROW(
      ParseIpamConfig(conf, "K8S_POD_NAMESPACE=a;K8S_POD_NAME=b;K8S_POD_INFRA_CONTAINER_ID=c;K8S_POD_UID=d"));
  EXPECT_NO_THROW(ParseIpamConfig(conf, "FOO=bar;IgnoreUnknown=true"));
}

TEST(StoreConfig, IgnoresRanges) {
  auto conf = Conf({{"subnet", "10.0.0.3/24"}, {"dataDir", "/d"}, {"lockTimeoutMs", 7}});
  auto s = ParseStoreConfig(conf);
  EXPECT_EQ(s.data_dir, "/d");
  EXPECT_EQ(s.lock_timeout_ms, 7);
}

TEST(ResolvConf, Parse) {
  auto d = ParseResolvConf(
      "# comment\n; other\nnameserver 10.0.0.53\nnameserver   fd00::53 \n"
      "domain example.com\nsearch a.example b.example\r\noptions ndots:5 edns0\nbogus\nsearch c.example\n");
  EXPECT_EQ(d.nameservers, (std::vector<std::string>{"10.0.0.53", "fd00::53"}));
  EXPECT_EQ(d.domain, "example.com");
  EXPECT_EQ(d.search, (std::vector<std::string>{"a.example", "b.example", "c.example"}));
  EXPECT_EQ(d.options, (std::vector<std::string>{"ndots:5", "edns0"}));
}

}  // namespace
}  // namespace netiface::ipam
