#include "netiface/agent/lease.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace netiface::agent {
namespace {

using ::testing::HasSubstr;

cni::IpAddr Ip(const char* s) { return *cni::IpAddr::Parse(s); }
cni::IpNet Net(const char* s) { return *cni::IpNet::Parse(s); }

TEST(SubnetKeyTest, FormatsAsFlanneld) {
  EXPECT_EQ(FormatSubnetKey({Net("10.5.34.0/24"), std::nullopt}), "10.5.34.0-24");
  EXPECT_EQ(FormatSubnetKey({Net("10.5.34.0/24"), Net("fd00:0:0:22::/64")}), "10.5.34.0-24&fd00:0:0:22::-64");
}

TEST(SubnetKeyTest, ParsesWhatItFormats) {
  for (SubnetKey k : {SubnetKey{Net("10.5.34.0/24"), std::nullopt}, SubnetKey{Net("10.244.0.128/25"), std::nullopt},
                      SubnetKey{Net("10.5.34.0/24"), Net("fd00:0:0:22::/64")},
                      SubnetKey{Net("10.42.3.0/24"), Net("2001:db8:42:3::/64")}}) {
    auto back = ParseSubnetKey(FormatSubnetKey(k));
    ASSERT_TRUE(back) << FormatSubnetKey(k);
    EXPECT_EQ(*back, k);
  }
}

TEST(SubnetKeyTest, RejectsWhatIsNotALeaseKey) {
  for (const char* name : {"",
                           "config",
                           "10.5.34.0",
                           "10.5.34.0-",
                           "10.5.34.0-24x",
                           "10.5.34.1-24",
                           "10.5.34.0-32",
                           "10.5.34.0-024",
                           "010.5.34.0-24",
                           "10.5.34-24",
                           "256.5.34.0-24",
                           "10.5.34.0-24&",
                           "10.5.34.0-24&fd00::",
                           "10.5.34.0-24&fd00::1-64",
                           "10.5.34.0-24&FD00::-64",
                           "10.5.34.0-24&fd00::-128",
                           "10.5.34.0-24&fd00:0:0:0::-64",
                           "10.5.34.0-24&10.0.0.0-8",
                           "fd00::-64",
                           "10.5.34.0-24&fd00::-64&fd01::-64",
                           " 10.5.34.0-24"}) {
    EXPECT_FALSE(ParseSubnetKey(name)) << name;
  }
}

TEST(SubnetKeyTest, EtcdKeys) {
  EXPECT_EQ(ConfigKey(kDefaultPrefix), "/coreos.com/network/config");
  EXPECT_EQ(SubnetsPrefix(kDefaultPrefix), "/coreos.com/network/subnets/");
  SubnetKey k{Net("10.5.34.0/24"), Net("fd00:0:0:22::/64")};
  EXPECT_EQ(LeaseKey("/x", k), "/x/subnets/10.5.34.0-24&fd00:0:0:22::-64");
  EXPECT_EQ(SubnetKeyFromEtcdKey("/x", "/x/subnets/10.5.34.0-24&fd00:0:0:22::-64"), k);
  EXPECT_FALSE(SubnetKeyFromEtcdKey("/x", "/y/subnets/10.5.34.0-24"));
  EXPECT_FALSE(SubnetKeyFromEtcdKey("/x", "/x/subnets/a/10.5.34.0-24"));
  EXPECT_FALSE(SubnetKeyFromEtcdKey("/x", "/x/config"));
  EXPECT_FALSE(SubnetKeyFromEtcdKey("/x", "/x/subnets/"));
}

TEST(LeaseAttrsTest, EncodesExactlyAsGo) {
  LeaseAttrs vx{Ip("192.0.2.1"), std::nullopt, "vxlan", {{"VNI", 1}, {"VtepMAC", "0e:5a:3b:11:22:33"}}, nullptr};
  EXPECT_EQ(
      EncodeLeaseAttrs(vx),
      R"({"PublicIP":"192.0.2.1","PublicIPv6":null,"BackendType":"vxlan","BackendData":{"VNI":1,"VtepMAC":"0e:5a:3b:11:22:33"}})");
  // host-gw publishes no BackendData: omitempty leaves it out.
  LeaseAttrs hg{Ip("192.0.2.7"), std::nullopt, "host-gw", nullptr, nullptr};
  EXPECT_EQ(EncodeLeaseAttrs(hg), R"({"PublicIP":"192.0.2.7","PublicIPv6":null,"BackendType":"host-gw"})");
  LeaseAttrs ds{Ip("192.0.2.1"), Ip("2001:db8::1"), "vxlan", {{"VNI", 1}}, {{"VNI", 1}}};
  EXPECT_EQ(EncodeLeaseAttrs(ds), R"({"PublicIP":"192.0.2.1","PublicIPv6":"2001:db8::1","BackendType":"vxlan",)"
                                  R"("BackendData":{"VNI":1},"BackendV6Data":{"VNI":1}})");
  // Go's zero ip.IP4 and its HTML-safe escaping.
  LeaseAttrs odd{std::nullopt, std::nullopt, "a<b>&c", nullptr, nullptr};
  EXPECT_EQ(EncodeLeaseAttrs(odd), R"({"PublicIP":"0.0.0.0","PublicIPv6":null,"BackendType":"a\u003cb\u003e\u0026c"})");
}

TEST(LeaseAttrsTest, DecodesWhatFlanneldWrites) {
  LeaseAttrs a = DecodeLeaseAttrs(
      R"({"PublicIP":"192.0.2.3","PublicIPv6":null,"BackendType":"vxlan","BackendData":{"VNI":1,"VtepMAC":"7a:1b:2c:3d:4e:5f"}})");
  EXPECT_EQ(a.public_ip, Ip("192.0.2.3"));
  EXPECT_FALSE(a.public_ipv6);
  EXPECT_EQ(a.backend_type, "vxlan");
  EXPECT_EQ(a.backend_data, (nlohmann::json{{"VNI", 1}, {"VtepMAC", "7a:1b:2c:3d:4e:5f"}}));
  EXPECT_TRUE(a.backend_v6_data.is_null());

  LeaseAttrs hg = DecodeLeaseAttrs(R"({"PublicIP":"192.0.2.7","PublicIPv6":null,"BackendType":"host-gw"})");
  EXPECT_EQ(hg.backend_type, "host-gw");
  EXPECT_TRUE(hg.backend_data.is_null());

  LeaseAttrs ds = DecodeLeaseAttrs(
      R"({"publicip":"192.0.2.1","PUBLICIPV6":"2001:db8::1","backendtype":"vxlan","BackendV6Data":{"VNI":2},"Extra":1})");
  EXPECT_EQ(ds.public_ip, Ip("192.0.2.1"));
  EXPECT_EQ(ds.public_ipv6, Ip("2001:db8::1"));
  EXPECT_EQ(ds.backend_v6_data, (nlohmann::json{{"VNI", 2}}));

  EXPECT_FALSE(DecodeLeaseAttrs(R"({"PublicIP":"0.0.0.0","BackendType":"host-gw"})").public_ip);
}

TEST(LeaseAttrsTest, RoundTrips) {
  for (const LeaseAttrs& a : {LeaseAttrs{Ip("192.0.2.1"), std::nullopt, "host-gw", nullptr, nullptr},
                              LeaseAttrs{Ip("192.0.2.1"),
                                         Ip("fd00::7"),
                                         "vxlan",
                                         {{"VNI", 4096}, {"VtepMAC", "aa:bb:cc:dd:ee:ff"}},
                                         {{"VNI", 4096}, {"VtepMAC", "aa:bb:cc:dd:ee:00"}}},
                              LeaseAttrs{std::nullopt, Ip("fd00::7"), "", nullptr, nullptr}}) {
    EXPECT_EQ(DecodeLeaseAttrs(EncodeLeaseAttrs(a)), a) << EncodeLeaseAttrs(a);
  }
}

TEST(LeaseAttrsTest, BadValuesThrowNamingTheProblem) {
  struct Case {
    const char* json;
    const char* message;
  };
  for (const Case& t : std::vector<Case>{{"", "a lease value is not JSON"},
                                         {"{", "a lease value is not JSON"},
                                         {"[1]", "a lease value is not a JSON object"},
                                         {R"({"PublicIP":"fd00::1"})", "PublicIP \"fd00::1\" is not an IPv4 address"},
                                         {R"({"PublicIP":7})", "PublicIP 7 is not an IPv4 address"},
                                         {R"({"PublicIPv6":"192.0.2.1"})", "is not an IPv6 address"},
                                         {R"({"BackendType":["x"]})", "BackendType [\"x\"] is not a string"}}) {
    try {
      DecodeLeaseAttrs(t.json);
      ADD_FAILURE() << "no error for " << t.json;
    } catch (const std::invalid_argument& e) {
      EXPECT_THAT(e.what(), HasSubstr(t.message)) << t.json;
    }
  }
}

}  // namespace
}  // namespace netiface::agent
