// The portmap verbs against FakeOps: order, prevResult passed through, rollback at every step (before
// and after its effect), DEL without prevResult, CHECK's comparison, GC. No root; portmap_netns_test
// proves the kernel side.
#include <gtest/gtest.h>

#include "cni_helpers.h"
#include "fake_ops.h"
#include "netiface/cni/error.h"
#include "netiface/portmap/portmap.h"

namespace netiface::portmap {
namespace {

using nlohmann::json;
using test::FakeOps;

const std::string kCid = "9b1e4c7a2d5f8e0b3a6c9d2e5f8a1b4c7d0e3f6a9b2c5d8e1f4a7b0c3d6e9f20";

json Prev() {
  return json::parse(R"({"cniVersion":"1.0.0",
    "interfaces":[{"name":"cni0","mac":"0a:00:00:00:00:01"},{"name":"eth0","mac":"0a:58:0a:01:00:05","sandbox":"/var/run/netns/c"}],
    "ips":[{"address":"10.1.0.5/24","gateway":"10.1.0.1","interface":1},{"address":"fd00:1::5/64","interface":1}],
    "dns":{}})");
}

json Conf(json extra = json::object()) {
  json j = {{"cniVersion", "1.0.0"},
            {"name", "net1"},
            {"type", "portmap"},
            {"prevResult", Prev()},
            {"runtimeConfig",
             {{"portMappings", json::array({{{"hostPort", 8080}, {"containerPort", 80}, {"protocol", "tcp"}},
                                            {{"hostPort", 5353}, {"containerPort", 53}, {"protocol", "udp"}}})}}}};
  j.update(extra);
  return j;
}

cni::CmdArgs Args(const json& conf, const std::string& command = "ADD") {
  return testing::MakeCmdArgs(conf, {.command = command, .container_id = kCid});
}

TEST(PortmapVerbs, AddInstallsTheRulesAndPassesPrevResultThrough) {
  FakeOps ops;
  auto args = Args(Conf());
  cni::Result r = Add(args, ops);
  EXPECT_EQ(ops.faults.calls, (std::vector<std::string>{"EnableRouteLocalnet", "Apply"}));
  EXPECT_EQ(cni::ResultToJson(r, "1.0.0"), cni::ResultToJson(*args.conf.prev_result, "1.0.0"));
  ASSERT_EQ(ops.rules.size(), 1u);
  const auto& spec = ops.rules.begin()->second;
  EXPECT_EQ(spec.tag.container_id, kCid);
  EXPECT_EQ(spec.tag.ifname, "eth0");
  ASSERT_EQ(spec.container_addrs.size(), 2u);
  EXPECT_EQ(spec.container_addrs[0].ToString(), "10.1.0.5");
  EXPECT_EQ(spec.container_addrs[1].ToString(), "fd00:1::5");
  EXPECT_EQ(ops.route_localnet, (std::set<std::string>{"10.1.0.5"}));
}

TEST(PortmapVerbs, AddWithoutSnatLeavesRouteLocalnetAlone) {
  FakeOps ops;
  Add(Args(Conf({{"snat", false}})), ops);
  EXPECT_EQ(ops.faults.calls, (std::vector<std::string>{"Apply"}));
  EXPECT_FALSE(ops.rules.begin()->second.snat);
}

TEST(PortmapVerbs, AddWithoutMappingsChangesNothing) {
  FakeOps ops;
  Add(Args(Conf({{"runtimeConfig", json::object()}})), ops);
  EXPECT_TRUE(ops.faults.calls.empty());
}

TEST(PortmapVerbs, AddRefusesBeforeAnyChange) {
  for (json bad : {json{{"prevResult", nullptr}}, json{{"externalSetMarkChain", "KUBE-MARK-MASQ"}},
                   json{{"prevResult", json::parse(R"({"cniVersion":"1.0.0","ips":[]})")}}}) {
    FakeOps ops;
    json conf = Conf(bad);
    if (conf["prevResult"].is_null()) conf.erase("prevResult");
    EXPECT_THROW(Add(Args(conf), ops), cni::Error) << bad.dump();
    EXPECT_TRUE(ops.faults.calls.empty()) << bad.dump();
  }
}

TEST(PortmapVerbs, FailedAddLeavesNoRulesAtAnyStep) {
  FakeOps probe;
  Add(Args(Conf()), probe);
  for (const auto& step : probe.faults.calls) {
    for (bool after : {false, true}) {
      // Apply leaves nothing when it throws (its contract: one nftables transaction), so its undo is pushed
      // once it succeeded and failing it after its effect is outside the contract.
      if (after && step == "Apply") continue;
      FakeOps ops;
      ops.faults.fail_at = step;
      ops.faults.fail_after = after;
      EXPECT_THROW(Add(Args(Conf()), ops), cni::Error) << step << (after ? " after" : " before");
      EXPECT_TRUE(ops.faults.fired);
      EXPECT_TRUE(ops.rules.empty()) << step << (after ? " after" : " before");
    }
  }
}

TEST(PortmapVerbs, DelRemovesByTagWithoutPrevResultAndIsIdempotent) {
  FakeOps ops;
  Add(Args(Conf()), ops);
  json del = Conf();
  del.erase("prevResult");
  del.erase("runtimeConfig");
  Del(Args(del, "DEL"), ops);
  EXPECT_TRUE(ops.rules.empty());
  Del(Args(del, "DEL"), ops);
  EXPECT_EQ(ops.faults.Count("Remove"), 2);
  EXPECT_EQ(ops.faults.Count("FlushUdpConntrack"), 0) << "no mappings known: nothing to flush";
}

TEST(PortmapVerbs, DelFlushesTheUdpHostPortsAndDoesEveryStep) {
  FakeOps ops;
  Add(Args(Conf()), ops);
  ops.faults = {};
  ops.faults.fail_at = "Remove";
  EXPECT_THROW(Del(Args(Conf(), "DEL"), ops), cni::Error);
  EXPECT_EQ(ops.faults.calls, (std::vector<std::string>{"Remove", "FlushUdpConntrack"}));
  EXPECT_EQ(ops.flushed, (std::set<uint16_t>{5353}));
  Del(Args(Conf(), "DEL"), ops);
  EXPECT_TRUE(ops.rules.empty());
}

TEST(PortmapVerbs, CheckComparesTheObservedRules) {
  FakeOps ops;
  EXPECT_THROW(Check(Args(Conf(), "CHECK"), ops), cni::Error);
  Add(Args(Conf()), ops);
  Check(Args(Conf(), "CHECK"), ops);
  json more = Conf();
  more["runtimeConfig"]["portMappings"].push_back({{"hostPort", 9090}, {"containerPort", 90}});
  try {
    Check(Args(more, "CHECK"), ops);
    ADD_FAILURE() << "CHECK passed with a mapping missing";
  } catch (const cni::Error& e) {
    EXPECT_NE(std::string(e.what()).find("tcp dport 9090"), std::string::npos) << e.what();
  }
  EXPECT_TRUE(CompareRules({}).empty());
  EXPECT_EQ(CompareRules({{"portmap_output: x"}}), (std::vector<std::string>{"missing rule portmap_output: x"}));
}

TEST(PortmapVerbs, GcKeepsTheValidAttachmentsOnly) {
  FakeOps ops;
  Add(Args(Conf()), ops);
  auto other = testing::MakeCmdArgs(Conf(), {.command = "ADD", .container_id = "a" + kCid.substr(1)});
  Add(other, ops);
  json gc = Conf({{"cniVersion", "1.1.0"}});
  gc.erase("prevResult");
  gc["cni.dev/valid-attachments"] = json::array({{{"containerID", kCid}, {"ifname", "eth0"}}});
  Gc(Args(gc, "GC"), ops);
  ASSERT_EQ(ops.rules.size(), 1u);
  EXPECT_EQ(ops.rules.begin()->second.tag.container_id, kCid);
  // Without a valid list nothing is removed.
  gc.erase("cni.dev/valid-attachments");
  Gc(Args(gc, "GC"), ops);
  EXPECT_EQ(ops.faults.Count("Gc"), 1);
}

}  // namespace
}  // namespace netiface::portmap
