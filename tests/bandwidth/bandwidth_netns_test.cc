// The built bandwidth plugin in a throw-away host namespace against a throw-away container namespace,
// compared with the reference plugin on the same config (a veth pair made with `ip` stands for the main
// plugin there, so both see the same prevResult): the qdiscs, filters and ifb it installs, the result JSON.
// Chained on our bridge + host-local, a measured TCP transfer checks that the shaping holds. DEL must leave
// links and qdiscs as they were before ADD.
#include <cstdio>

#include <gtest/gtest.h>

#include "netiface/bandwidth/plan.h"
#include "sockets.h"
#include "testutil.h"

namespace netiface::testing {
namespace {

using nlohmann::json;
constexpr const char* kId = "5d7c0a3e9b1f4c2a8e6d0b9a7c5e3f1d2b4a6c8e0f1a3b5c7d9e0f2a4b6c8d0e";

struct Pair {
  TempNetns host{"bwh"};
  TempNetns ctr{"bwc"};
  std::string veth = UniqueName("bwv");
  Pair() {
    EXPECT_EQ(host.Sh("ip link add " + veth + " type veth peer name eth0 netns " + ctr.name() + " && ip link set " +
                      veth + " up && ip addr add 10.99.0.1/24 dev " + veth)
                  .exit_code,
              0);
    EXPECT_EQ(ctr.Sh("ip link set lo up && ip link set eth0 up && ip addr add 10.99.0.2/24 dev eth0").exit_code, 0);
  }
  json Conf(const std::string& version, const json& keys) const {
    json prev = {
        {"cniVersion", version},
        {"interfaces", json::array({{{"name", veth}, {"mac", "aa:bb:cc:dd:ee:01"}},
                                    {{"name", "eth0"}, {"mac", "aa:bb:cc:dd:ee:02"}, {"sandbox", ctr.path()}}})},
        {"ips", json::array({{{"address", "10.99.0.2/24"}, {"interface", 1}}})}};
    if (version < "1.0.0") prev["ips"][0]["version"] = "4";
    json j = {{"cniVersion", version}, {"name", "bwnet"}, {"type", "bandwidth"}, {"prevResult", prev}};
    j.update(keys);
    return j;
  }
  RunResult Call(const std::string& plugin, const std::string& cmd, const json& conf) const {
    PluginCall c{.command = cmd, .container_id = kId, .netns = ctr.path(), .host_ns = host.name()};
    return RunPlugin(plugin, c, conf);
  }
  // The host's qdiscs and links and the redirect, without counters or kernel-chosen values.
  json State() const {
    json out = json::array();
    for (json q : host.Sh("tc -j qdisc show").Json()) {
      q.erase("refcnt");
      out.push_back(q);
    }
    json filters = json::array();
    for (const json& f : host.Sh("tc -j filter show dev " + veth + " ingress").Json()) {
      if (!f.contains("options") || !f["options"].contains("actions")) continue;
      const json& a = f["options"]["actions"][0];  // the reference repeats it as a second, "pass", action
      filters.push_back({f["protocol"], f["pref"], f["kind"], f["options"]["flowid"], a["kind"], a["mirred_action"],
                         a["direction"], a["to_dev"], a["control_action"]});
    }
    json links = json::array();
    for (const json& l : host.IpJson("link show")) links.push_back({l["ifname"], l.value("mtu", 0)});
    return {{"qdiscs", out}, {"filters", filters}, {"links", links}};
  }
};

const json kKeys = {
    {"ingressRate", 8000000}, {"ingressBurst", 80000}, {"egressRate", 16000000}, {"egressBurst", 160000}};

json MaskIfbMac(json r) {
  for (json& i : r["interfaces"]) {
    if (i["name"].get<std::string>().starts_with("bwp")) i["mac"] = "masked";
  }
  return r;
}

class BandwidthNetnsTest : public ::testing::Test {
 protected:
  void SetUp() override { NETIFACE_REQUIRE_ROOT(); }
};

TEST_F(BandwidthNetnsTest, SameStateAndResultAsTheReferenceAndDelRestores) {
  Pair p;  // every DEL must leave it as it was: one pair serves every version
  for (const std::string version : {"0.3.0", "0.3.1", "0.4.0", "1.0.0", "1.1.0"}) {
    SCOPED_TRACE(version);
    const json conf = p.Conf(version, kKeys);
    const json before = p.State();
    RunResult add = p.Call(Bin("bandwidth"), "ADD", conf);
    ASSERT_EQ(add.exit_code, 0) << add.out << add.err;
    const json ours = p.State();
    EXPECT_NE(ours, before);
    EXPECT_EQ(ours["filters"].size(), 1u) << ours.dump();
    if (version >= "0.4.0") {
      RunResult check = p.Call(Bin("bandwidth"), "CHECK", conf);
      EXPECT_EQ(check.exit_code, 0) << check.out << check.err;
    }
    EXPECT_EQ(p.Call(Bin("bandwidth"), "DEL", conf).exit_code, 0);
    EXPECT_EQ(p.State(), before);
    EXPECT_EQ(p.Call(Bin("bandwidth"), "DEL", conf).exit_code, 0);  // idempotent

    if (!HaveReference() || version == "1.1.0") continue;  // the reference stops at 1.0.0
    RunResult ref = p.Call(RefDir() + "/bandwidth", "ADD", conf);
    ASSERT_EQ(ref.exit_code, 0) << ref.out << ref.err;
    EXPECT_EQ(p.State(), ours);
    EXPECT_EQ(MaskIfbMac(add.Json()), MaskIfbMac(ref.Json()));
    // Our CHECK accepts what the reference made; our DEL cleans up after it.
    if (version >= "0.4.0") {
      EXPECT_EQ(p.Call(Bin("bandwidth"), "CHECK", conf).exit_code, 0);
    }
    EXPECT_EQ(p.Call(Bin("bandwidth"), "DEL", conf).exit_code, 0);
    EXPECT_EQ(p.State(), before);
  }
}

TEST_F(BandwidthNetnsTest, CheckNoticesAMissingQdiscAndBadInputChangesNothing) {
  Pair p;
  const json conf = p.Conf("1.0.0", kKeys);
  const json before = p.State();
  ASSERT_EQ(p.Call(Bin("bandwidth"), "ADD", conf).exit_code, 0);
  ASSERT_EQ(p.host.Sh("tc qdisc del dev " + p.veth + " ingress").exit_code, 0);
  RunResult check = p.Call(Bin("bandwidth"), "CHECK", conf);
  EXPECT_NE(check.exit_code, 0);
  EXPECT_NE(check.out.find("ingress"), std::string::npos) << check.out;
  EXPECT_EQ(p.Call(Bin("bandwidth"), "DEL", conf).exit_code, 0);
  EXPECT_EQ(p.State(), before);
  for (const json& bad : {json{{"ingressRate", 0}, {"ingressBurst", 800}}, json{{"egressRate", 4294967296}},
                          json{{"egressRate", 4294967296}, {"egressBurst", 800}}}) {
    RunResult r = p.Call(Bin("bandwidth"), "ADD", p.Conf("1.0.0", bad));
    EXPECT_NE(r.exit_code, 0);
    EXPECT_EQ(r.Json().value("code", 0), 7) << r.out;
    EXPECT_EQ(p.State(), before);
  }
}

// Our bridge + host-local make the attachment; bandwidth is chained on bridge's result, as a conflist runs
// it.
struct BridgeChain {
  TempNetns host{"bwh"};
  TempNetns ctr{"bwc"};
  TempDir ipam;
  json bridge_conf = {{"cniVersion", "1.0.0"},
                      {"name", "bwnet"},
                      {"type", "bridge"},
                      {"bridge", UniqueName("bwbr")},
                      {"isGateway", true},
                      {"ipam",
                       {{"type", "host-local"},
                        {"dataDir", ipam.path()},
                        {"ranges", json::parse(R"([[{"subnet":"10.98.0.0/24"}]])")}}}};
  RunResult Call(const std::string& plugin, const std::string& cmd, const json& conf) const {
    PluginCall c{.command = cmd, .container_id = kId, .netns = ctr.path(), .host_ns = host.name()};
    return RunPlugin(plugin, c, conf);
  }
  json Bandwidth(const json& prev) const {
    json j = {{"cniVersion", "1.0.0"}, {"name", "bwnet"}, {"type", "bandwidth"}, {"prevResult", prev}};
    j.update(kKeys);
    return j;
  }
};

TEST_F(BandwidthNetnsTest, ChainedOnBridgeATransferHoldsToTheLimitBothWays) {
  BridgeChain ch;
  ASSERT_EQ(ch.host.Sh("ip link set lo up").exit_code, 0);
  const json links_before = ch.host.IpJson("link show");
  RunResult br = ch.Call(Bin("bridge"), "ADD", ch.bridge_conf);
  ASSERT_EQ(br.exit_code, 0) << br.out << br.err;
  const json conf = ch.Bandwidth(br.Json());
  RunResult bw = ch.Call(Bin("bandwidth"), "ADD", conf);
  ASSERT_EQ(bw.exit_code, 0) << bw.out << bw.err;
  json expected = br.Json();
  expected["interfaces"].push_back({{"name", bw.Json()["interfaces"].back()["name"]}, {"mac", "masked"}});
  EXPECT_EQ(MaskIfbMac(bw.Json()), expected);
  EXPECT_EQ(ch.Call(Bin("bandwidth"), "CHECK", conf).exit_code, 0);

  // The buckets count whole frames: UDP payload + 8 (UDP) + 20 (IPv4) + 14 (Ethernet) bytes each.
  const double payload = kUdpPayload / (kUdpPayload + 42.0);
  // Twice the limit is offered each way: what arrives is what the bucket lets through.
  const double to_container = MeasureUdpBytesPerSecond(ch.host.path(), ch.ctr.path(), "10.98.0.2", 2 * 1e6 * payload);
  const double from_container = MeasureUdpBytesPerSecond(ch.ctr.path(), ch.host.path(), "10.98.0.1", 2 * 2e6 * payload);
  std::fprintf(stderr, "measured: to the container %.0f B/s, from it %.0f B/s\n", to_container, from_container);
  EXPECT_NEAR(to_container, 1e6 * payload, 0.2 * 1e6 * payload);    // ingressRate 8 Mbit/s
  EXPECT_NEAR(from_container, 2e6 * payload, 0.2 * 2e6 * payload);  // egressRate 16 Mbit/s

  // The conflist's DEL order: bandwidth first, then bridge; only the bridge itself stays (shared).
  EXPECT_EQ(ch.Call(Bin("bandwidth"), "DEL", conf).exit_code, 0);
  EXPECT_EQ(ch.Call(Bin("bridge"), "DEL", ch.bridge_conf).exit_code, 0);
  json names = json::array();
  for (const json& l : ch.host.IpJson("link show")) {
    if (l["ifname"] != ch.bridge_conf["bridge"]) names.push_back(l["ifname"]);
  }
  json names_before = json::array();
  for (const json& l : links_before) names_before.push_back(l["ifname"]);
  EXPECT_EQ(names, names_before);
}

}  // namespace
}  // namespace netiface::testing
