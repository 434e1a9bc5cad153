#include "netiface/netlink/vxlan.h"

#include <cerrno>

#include <gtest/gtest.h>

#include "netiface/netlink/addr.h"
#include "netns_fixture.h"

namespace netiface::nl {
namespace {

cni::IpAddr Ip(const char* s) { return cni::IpAddr::Parse(s).value(); }

nlohmann::json Dev(const testing::TempNetns& ns, const std::string& name) {
  auto j = ns.IpJson("-d link show dev " + name);
  return j.is_array() && j.size() == 1 ? j[0] : nlohmann::json();
}

// Pure: no kernel involved.
VxlanInfo Matching(const VxlanSpec& s) {
  return {.index = 7,
          .name = s.name,
          .vni = s.vni,
          .local = s.local,
          .lower_ifindex = s.lower_ifindex,
          .port = s.port == 0 ? kVxlanDefaultPort : s.port,
          .learning = s.learning,
          .gbp = s.gbp,
          .mtu = s.mtu == 0 ? 1450 : s.mtu,
          .mac = s.mac.empty() ? "0e:00:00:00:00:01" : s.mac};
}

TEST(VxlanDifferencesTest, IdenticalAndDefaultsAreCompatible) {
  VxlanSpec want{.name = "flannel.1", .local = Ip("192.0.2.1"), .lower_ifindex = 3};
  EXPECT_TRUE(VxlanDifferences(want, Matching(want)).empty());
  VxlanInfo have = Matching(want);
  have.mtu = 9000;
  have.mac = "0E:00:00:00:00:09";
  EXPECT_TRUE(VxlanDifferences(want, have).empty()) << "mtu 0 and mac \"\" accept anything";
  want.mac = "0e:00:00:00:00:09";
  EXPECT_TRUE(VxlanDifferences(want, have).empty()) << "MACs compare case-insensitively";
}

TEST(VxlanDifferencesTest, NamesEveryDifferingFieldInOrder) {
  VxlanSpec want{.name = "flannel.1",
                 .vni = 1,
                 .local = Ip("192.0.2.1"),
                 .lower_ifindex = 3,
                 .port = 0,
                 .learning = false,
                 .gbp = false,
                 .mtu = 1450,
                 .mac = "0e:00:00:00:00:01"};
  VxlanInfo have{.index = 9,
                 .name = "flannel.2",
                 .vni = 2,
                 .local = Ip("192.0.2.9"),
                 .lower_ifindex = 4,
                 .port = 4789,
                 .learning = true,
                 .gbp = true,
                 .mtu = 1400,
                 .mac = "0e:00:00:00:00:02"};
  EXPECT_EQ(VxlanDifferences(want, have), (std::vector<std::string>{"name", "vni", "local", "lower_ifindex", "port",
                                                                    "learning", "gbp", "mtu", "mac"}));
  have = Matching(want);
  have.local.reset();
  EXPECT_EQ(VxlanDifferences(want, have), std::vector<std::string>{"local"});
  want.port = 8472;
  EXPECT_TRUE(VxlanDifferences(want, Matching(want)).empty()) << "8472 is the default";
}

class VxlanTest : public NetnsTest {
 protected:
  void SetUp() override {
    NetnsTest::SetUp();
    if (IsSkipped()) return;
    MakePair("ul0");
    lower_ = Index(*host_, "ul0");
    AddAddress(*host_, lower_, cni::IpNet::Parse("192.0.2.1/24").value());
  }
  int lower_ = 0;
};

TEST_F(VxlanTest, CreatesFlannelStyleDeviceAndReadsItBack) {
  VxlanSpec spec{.name = "flannel.1",
                 .vni = 1,
                 .local = Ip("192.0.2.1"),
                 .lower_ifindex = lower_,
                 .mtu = 1450,
                 .mac = "0e:00:00:00:00:01"};
  CreateVxlan(*host_, spec);

  auto j = Dev(*host_tmp_, "flannel.1");
  ASSERT_TRUE(j.is_object()) << "device missing";
  auto data = j["linkinfo"]["info_data"];
  EXPECT_EQ(j["linkinfo"].value("info_kind", ""), "vxlan") << j.dump();
  EXPECT_EQ(data.value("id", 0), 1) << j.dump();
  EXPECT_EQ(data.value("local", ""), "192.0.2.1") << j.dump();
  EXPECT_EQ(data.value("port", 0), 8472) << j.dump();
  EXPECT_EQ(data.value("learning", true), false) << j.dump();
  EXPECT_EQ(data.value("link", ""), "ul0") << j.dump();
  EXPECT_FALSE(data.contains("gbp")) << j.dump();
  EXPECT_EQ(j.value("mtu", 0), 1450);
  EXPECT_EQ(j.value("address", ""), "0e:00:00:00:00:01");

  auto got = FindVxlan(*host_, "flannel.1");
  ASSERT_TRUE(got);
  EXPECT_EQ(got->index, j.value("ifindex", -1));
  EXPECT_EQ(got->name, "flannel.1");
  EXPECT_EQ(got->vni, 1u);
  EXPECT_EQ(got->local, Ip("192.0.2.1"));
  EXPECT_EQ(got->lower_ifindex, lower_);
  EXPECT_EQ(got->port, 8472);
  EXPECT_FALSE(got->learning);
  EXPECT_FALSE(got->gbp);
  EXPECT_EQ(got->mtu, 1450);
  EXPECT_EQ(got->mac, "0e:00:00:00:00:01");
  EXPECT_FALSE(got->admin_up);
  EXPECT_TRUE(VxlanDifferences(spec, *got).empty());

  SetLinkUp(*host_, "flannel.1");
  EXPECT_TRUE(FindVxlan(*host_, "flannel.1")->admin_up);
}

TEST_F(VxlanTest, PortGbpLearningAndIpv6Local) {
  AddAddress(*host_, lower_, cni::IpNet::Parse("fd00:2::1/64").value(), /*nodad=*/true);
  VxlanSpec spec{.name = "flannel-v6.7",
                 .vni = 7,
                 .local = Ip("fd00:2::1"),
                 .lower_ifindex = lower_,
                 .port = 4789,
                 .learning = true,
                 .gbp = true};
  CreateVxlan(*host_, spec);
  auto data = Dev(*host_tmp_, "flannel-v6.7")["linkinfo"]["info_data"];
  EXPECT_EQ(data.value("id", 0), 7) << data.dump();
  EXPECT_EQ(data.value("local6", ""), "fd00:2::1") << data.dump();
  EXPECT_EQ(data.value("port", 0), 4789) << data.dump();
  EXPECT_EQ(data.value("learning", false), true) << data.dump();
  EXPECT_EQ(data.value("gbp", false), true) << data.dump();

  auto got = FindVxlan(*host_, "flannel-v6.7");
  ASSERT_TRUE(got);
  EXPECT_EQ(got->local, Ip("fd00:2::1"));
  EXPECT_EQ(got->port, 4789);
  EXPECT_TRUE(got->learning);
  EXPECT_TRUE(got->gbp);
  EXPECT_TRUE(VxlanDifferences(spec, *got).empty());
}

TEST_F(VxlanTest, DifferencesOfADeviceMadeWithOtherParameters) {
  ASSERT_EQ(
      host_tmp_->Sh("ip link add flannel.1 type vxlan id 2 dstport 4789 local 192.0.2.9 dev ul0 learning").exit_code,
      0);
  VxlanSpec want{.name = "flannel.1", .vni = 1, .local = Ip("192.0.2.1"), .lower_ifindex = lower_};
  auto got = FindVxlan(*host_, "flannel.1");
  ASSERT_TRUE(got);
  EXPECT_EQ(VxlanDifferences(want, *got), (std::vector<std::string>{"vni", "local", "port", "learning"}));
}

TEST_F(VxlanTest, AbsentOtherKindExistingAndBadInput) {
  EXPECT_FALSE(FindVxlan(*host_, "flannel.1"));
  EXPECT_FALSE(FindVxlan(*host_, ""));
  std::string msg = ExpectError(cni::kInvalidConfig, [&] { FindVxlan(*host_, "ul0"); });
  EXPECT_NE(msg.find("not a vxlan"), std::string::npos) << msg;
  EXPECT_NE(msg.find("veth"), std::string::npos) << msg;
  ExpectError(cni::kInvalidConfig, [&] { FindVxlan(*host_, "lo"); });

  VxlanSpec spec{.name = "flannel.1", .lower_ifindex = lower_};
  CreateVxlan(*host_, spec);
  EXPECT_EQ(ErrnoOf([&] { CreateVxlan(*host_, spec); }), EEXIST);

  auto bad = [&](auto change) {
    VxlanSpec s{.name = "vxbad", .lower_ifindex = lower_};
    change(s);
    ExpectError(cni::kInvalidConfig, [&] { CreateVxlan(*host_, s); });
  };
  bad([](VxlanSpec& s) { s.vni = 1u << 24; });
  bad([](VxlanSpec& s) { s.port = 65536; });
  bad([](VxlanSpec& s) { s.mac = "0e:00:00:00:00"; });
  bad([](VxlanSpec& s) { s.mtu = -1; });
  bad([](VxlanSpec& s) { s.name = "a-name-far-too-long"; });
  bad([](VxlanSpec& s) { s.name = "a/b"; });
  EXPECT_FALSE(FindLink(*host_, "vxbad")) << "validation precedes any request";

  msg =
      ExpectError(cni::kNetlink, [&] { CreateVxlan(*host_, {.name = "vxbig", .lower_ifindex = lower_, .mtu = 9000}); });
  EXPECT_FALSE(msg.empty());
  EXPECT_FALSE(FindLink(*host_, "vxbig"));
}

}  // namespace
}  // namespace netiface::nl
