// `netiface ipam ls` on reservations written by ipam's own store, in the reference's format
// ("<containerID>\r\n<ifname>"): the CLI reads them through ipam's reader, not a parser of its own.
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
      json::parse(j.out),
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

}  // namespace
}  // namespace netiface::cli
