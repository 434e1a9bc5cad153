// `netiface ipam ls` on reservations written by ipam's own store, in the reference's format
// ("<containerID>\r\n<ifname>"): the CLI reads them through ipam's reader, not a parser of its own.
#include <filesystem>
#include <sstream>

#include <gtest/gtest.h>

#include "netiface/cli/cli.h"
#include "netiface/ipam/store.h"
#include "testutil.h"

namespace netiface::cli {
namespace {

using nlohmann::json;

constexpr char kContainerId[] = "5b9f0e2c6a1d4e8f9a0b1c2d3e4f5a6b7c8d9e0f1a2b3c4d5e6f7a8b9c0d1e2f";

struct LsRun {
  int code;
  std::string out;
  std::string err;
};

LsRun Ls(std::vector<std::string> args) {
  args.insert(args.begin(), {"netiface", "ipam", "ls"});
  std::ostringstream out, err;
  CliContext ctx;
  ctx.env = {{"PATH", "/usr/bin:/bin"}};
  ctx.out = &out;
  ctx.err = &err;
  int code = RunCli(args, ctx);
  return {code, out.str(), err.str()};
}

TEST(IpamLsTest, ShowsWhatTheStoreWrote) {
  testing::TempDir data;
  ipam::StoreConfig sc{"storenet", data.path(), ipam::kDefaultLockTimeoutMs};
  {
    auto store = ipam::Store::Open(sc, /*create=*/true);
    ASSERT_TRUE(store->Reserve(*cni::IpAddr::Parse("10.9.0.2"), kContainerId, "eth0"));
    ASSERT_TRUE(store->Reserve(*cni::IpAddr::Parse("fd09::2"), kContainerId, "net1"));
  }
  // The byte layout the reference writes and the CLI must take apart at "\r\n".
  EXPECT_EQ(testing::ReadFile(data / "storenet/10.9.0.2"), std::string(kContainerId) + "\r\neth0");

  auto j = Ls({"storenet", "--data-dir", data.path(), "--json"});
  ASSERT_EQ(j.code, 0) << j.err;
  EXPECT_EQ(
      json::parse(j.out)["reservations"],
      json({{{"network", "storenet"}, {"address", "10.9.0.2"}, {"containerId", kContainerId}, {"ifname", "eth0"}},
            {{"network", "storenet"}, {"address", "fd09::2"}, {"containerId", kContainerId}, {"ifname", "net1"}}}));

  auto table = Ls({"--data-dir", data.path()});
  ASSERT_EQ(table.code, 0) << table.err;
  EXPECT_EQ(table.out.find('\r'), std::string::npos) << table.out;
  std::istringstream lines(table.out);
  std::vector<std::string> rows;
  for (std::string l; std::getline(lines, l);) rows.push_back(l);
  ASSERT_EQ(rows.size(), 3u) << table.out;
  EXPECT_NE(rows[1].find(std::string(kContainerId) + "  eth0"), std::string::npos) << rows[1];
  EXPECT_EQ(rows[1].substr(rows[1].size() - 4), "eth0");
}

// Issue 17: `ipam ls NET` finds the store in the network's config, as the verbs find the network, and
// shows each range set's capacity and use; flannel's ranges come from its subnet.env.
TEST(IpamLsTest, FindsTheNetworksStoreInItsConfigAndShowsItsUse) {
  testing::TempDir dir;
  const std::string data = dir / "store";
  std::filesystem::create_directories(dir / "net.d");
  json ranges = json::array({json::array({{{"subnet", "10.7.0.0/29"}}}), json::array({{{"subnet", "fd07::/125"}}})});
  json bridge = {{"type", "bridge"}, {"ipam", {{"type", "host-local"}, {"dataDir", data}, {"ranges", ranges}}}};
  testing::WriteFile(
      dir / "net.d/10-web.conflist",
      json({{"cniVersion", "1.0.0"}, {"name", "web"}, {"plugins", json::array({bridge, {{"type", "portmap"}}})}})
          .dump());
  {
    auto store = ipam::Store::Open({"web", data, ipam::kDefaultLockTimeoutMs}, /*create=*/true);
    ASSERT_TRUE(store->Reserve(*cni::IpAddr::Parse("10.7.0.2"), kContainerId, "eth0"));
    ASSERT_TRUE(store->Reserve(*cni::IpAddr::Parse("10.7.0.3"), "other", "eth0"));
  }
  auto j = Ls({"web", "--conf-dir", dir / "net.d", "--json"});
  ASSERT_EQ(j.code, 0) << j.err;
  json out = json::parse(j.out);
  EXPECT_EQ(out["reservations"].size(), 2u);
  // /29: .1 is the gateway, .2-.6 can be handed out; the v6 /125: ::1 the gateway, ::2-::7.
  EXPECT_EQ(
      out["ranges"],
      json({{{"rangeSet", "subnet 10.7.0.0/29 (10.7.0.1-10.7.0.6)"}, {"capacity", 5}, {"reserved", 2}, {"free", 3}},
            {{"rangeSet", "subnet fd07::/125 (fd07::1-fd07::7)"}, {"capacity", 6}, {"reserved", 0}, {"free", 6}}}));
  auto table = Ls({"web", "--conf-dir", dir / "net.d"});
  ASSERT_EQ(table.code, 0) << table.err;
  EXPECT_NE(table.out.find("RANGE SET"), std::string::npos) << table.out;

  // flannel: the store its delegate uses, the range from subnet.env.
  testing::WriteFile(
      dir / "subnet.env",
      "FLANNEL_NETWORK=10.244.0.0/16\nFLANNEL_SUBNET=10.244.7.1/24\nFLANNEL_MTU=1450\nFLANNEL_IPMASQ=true\n");
  testing::WriteFile(
      dir / "net.d/20-cbr0.conflist",
      json({{"cniVersion", "1.0.0"},
            {"name", "cbr0"},
            {"plugins",
             json::array({{{"type", "flannel"}, {"subnetFile", dir / "subnet.env"}, {"ipam", {{"dataDir", data}}}}})}})
          .dump());
  auto fl = Ls({"cbr0", "--conf-dir", dir / "net.d", "--json"});
  ASSERT_EQ(fl.code, 0) << fl.err;
  EXPECT_EQ(json::parse(fl.out)["ranges"][0]["capacity"], 253) << fl.out;  // .1 gateway, .2-.254
  // A network without host-local, or none at all, is an error that says so.
  testing::WriteFile(dir / "net.d/30-lo.conf", R"({"cniVersion":"1.0.0","name":"lo","type":"loopback"})");
  auto lo = Ls({"lo", "--conf-dir", dir / "net.d"});
  EXPECT_NE(lo.code, 0);
  EXPECT_NE(lo.err.find("uses no host-local IPAM"), std::string::npos) << lo.err;
  EXPECT_NE(Ls({"nosuch", "--conf-dir", dir / "net.d"}).code, 0);
}

}  // namespace
}  // namespace netiface::cli
