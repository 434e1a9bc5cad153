// The built firewall plugin chained after our bridge + host-local in a throw-away "host" namespace, with
// two bridges and a pod on each (plus a second pod on the first): the rules it installs, traffic between
// the pods with ingressPolicy open and same-bridge, CHECK noticing a deleted rule, DEL and GC returning
// `nft -j list ruleset` to what it was, refusals that change nothing, and the result next to the
// reference firewall's on the same input.
#include <unistd.h>

#include <memory>
#include <string>

#include <gtest/gtest.h>

#include "testutil.h"

namespace netiface::testing {
namespace {

using json = nlohmann::json;

struct Pod {
  std::string id;
  std::unique_ptr<TempNetns> ns;
  json result;  // bridge's
};

class FirewallNetns : public ::testing::Test {
 protected:
  void SetUp() override {
    NETIFACE_REQUIRE_ROOT();
    for (const char* p : {"firewall", "bridge", "host-local"}) {
      if (::access(Bin(p).c_str(), X_OK) != 0) GTEST_SKIP() << Bin(p) << " is not built";
    }
    host_ = std::make_unique<TempNetns>("fwh");
    ASSERT_EQ(host_->Sh("ip link set lo up && sysctl -qw net.ipv4.ip_forward=1").exit_code, 0);
    bridges_ = {UniqueName("fwa"), UniqueName("fwb")};
  }

  json BridgeConf(int net) const {
    const std::string subnet = net == 0 ? "10.78.1.0/24" : "10.78.2.0/24";
    return {{"cniVersion", "1.0.0"},
            {"name", "fwnet" + std::to_string(net)},
            {"type", "bridge"},
            {"bridge", bridges_[net]},
            {"isGateway", true},
            {"ipam",
             {{"type", "host-local"},
              {"dataDir", dir_ / "ipam"},
              {"ranges", json::array({json::array({{{"subnet", subnet}}})})},
              {"routes", json::parse(R"([{"dst":"0.0.0.0/0"}])")}}}};
  }
  static json FirewallConf(int net, const json& prev, const json& keys = json::object(),
                           const std::string& version = "1.0.0") {
    json c = {{"cniVersion", version}, {"name", "fwnet" + std::to_string(net)}, {"type", "firewall"}};
    if (!prev.is_null()) c["prevResult"] = prev;
    c.update(keys);
    return c;
  }
  RunResult Call(const std::string& plugin, const std::string& cmd, const Pod& pod, const json& conf) const {
    PluginCall c{.command = cmd, .container_id = pod.id, .netns = pod.ns->path(), .host_ns = host_->name()};
    return RunPlugin(plugin, c, conf);
  }
  Pod AddPod(int net) {
    Pod p{UniqueName("fwpod") + "x" + std::to_string(net), std::make_unique<TempNetns>("fwp"), {}};
    EXPECT_EQ(p.ns->Sh("ip link set lo up").exit_code, 0);
    RunResult br = Call(Bin("bridge"), "ADD", p, BridgeConf(net));
    EXPECT_EQ(br.exit_code, 0) << br.out << br.err;
    p.result = br.Json();
    return p;
  }
  static std::string Ip(const Pod& p) {
    std::string a = p.result["ips"][0]["address"];
    return a.substr(0, a.find('/'));
  }
  std::string Ruleset() const { return host_->Sh("nft -j list ruleset").out; }
  std::string RulesetText() const { return host_->Sh("nft list ruleset").out; }

  std::unique_ptr<TempNetns> host_;
  std::vector<std::string> bridges_;
  TempDir dir_;
};

TEST_F(FirewallNetns, OpenAndSameBridgePoliciesCheckDelAndGc) {
  const std::string empty = Ruleset();
  Pod a = AddPod(0), a2 = AddPod(0), b = AddPod(1);
  const std::string before = Ruleset();
  EXPECT_EQ(before, empty);  // bridge without ipMasq writes no rule
  ASSERT_TRUE(a.ns->Ping(Ip(b))) << "pods on two bridges reach each other through the host before any firewall";

  // open: the accepts for each pod's address; traffic still flows.
  for (const Pod* p : {&a, &a2}) {
    RunResult r = Call(Bin("firewall"), "ADD", *p, FirewallConf(0, p->result));
    ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
    EXPECT_EQ(r.Json(), p->result);  // prevResult, passed through
  }
  RunResult rb = Call(Bin("firewall"), "ADD", b, FirewallConf(1, b.result));
  ASSERT_EQ(rb.exit_code, 0) << rb.out << rb.err;
  const std::string text = RulesetText();
  EXPECT_NE(text.find("ip daddr " + Ip(a) +
                      " ct state established,related accept comment \"netiface-firewall:fwnet0:" + a.id + ":eth0\""),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("ip saddr " + Ip(b) + " accept"), std::string::npos) << text;
  EXPECT_TRUE(a.ns->Ping(Ip(b)));
  EXPECT_EQ(Call(Bin("firewall"), "CHECK", a, FirewallConf(0, a.result)).exit_code, 0);

  // same-bridge on both networks: a and b no longer reach each other; a and a2 (one bridge) and the host do.
  const json same = {{"ingressPolicy", "same-bridge"}};
  for (const Pod* p : {&a, &a2})
    ASSERT_EQ(Call(Bin("firewall"), "ADD", *p, FirewallConf(0, p->result, same)).exit_code, 0);
  ASSERT_EQ(Call(Bin("firewall"), "ADD", b, FirewallConf(1, b.result, same)).exit_code, 0);
  EXPECT_FALSE(a.ns->Ping(Ip(b)));
  EXPECT_FALSE(b.ns->Ping(Ip(a)));
  EXPECT_TRUE(a.ns->Ping(Ip(a2)));
  EXPECT_TRUE(host_->Ping(Ip(a)));
  EXPECT_TRUE(host_->Ping(Ip(b)));
  EXPECT_EQ(Call(Bin("firewall"), "CHECK", b, FirewallConf(1, b.result, same)).exit_code, 0);

  // A rule deleted by hand: CHECK names it.
  RunResult handles = host_->Sh("nft -a list chain inet netiface firewall_forward | grep 'saddr " + Ip(b) +
                                " accept' | sed 's/.*# handle //'");
  ASSERT_FALSE(handles.out.empty()) << RulesetText();
  ASSERT_EQ(host_->Sh("nft delete rule inet netiface firewall_forward handle " + handles.out).exit_code, 0);
  RunResult bad = Call(Bin("firewall"), "CHECK", b, FirewallConf(1, b.result, same));
  EXPECT_NE(bad.exit_code, 0);
  EXPECT_NE(bad.out.find("firewall_forward: ip saddr " + Ip(b) + " accept"), std::string::npos) << bad.out;

  // DEL of b (no prevResult needed): a reaches b again, since only one isolated bridge is left.
  RunResult del = Call(Bin("firewall"), "DEL", b, FirewallConf(1, json()));
  ASSERT_EQ(del.exit_code, 0) << del.out << del.err;
  EXPECT_EQ(RulesetText().find(b.id), std::string::npos);
  EXPECT_TRUE(a.ns->Ping(Ip(b)));
  EXPECT_EQ(Call(Bin("firewall"), "DEL", b, FirewallConf(1, json())).exit_code, 0);  // idempotent

  // GC at 1.1.0 with a2 valid: a's rules go, a2's stay; DEL of a2 leaves the ruleset as before.
  json gc = FirewallConf(0, json(), json::object(), "1.1.0");
  gc["cni.dev/valid-attachments"] = json::array({{{"containerID", a2.id}, {"ifname", "eth0"}}});
  RunResult g = Call(Bin("firewall"), "GC", a, gc);
  ASSERT_EQ(g.exit_code, 0) << g.out << g.err;
  EXPECT_EQ(RulesetText().find(a.id), std::string::npos);
  EXPECT_NE(RulesetText().find(a2.id), std::string::npos);
  EXPECT_EQ(Call(Bin("firewall"), "STATUS", a, FirewallConf(0, json(), json::object(), "1.1.0")).exit_code, 0);
  ASSERT_EQ(Call(Bin("firewall"), "DEL", a2, FirewallConf(0, json())).exit_code, 0);
  EXPECT_EQ(Ruleset(), before);
  for (Pod* p : {&a, &a2, &b}) EXPECT_EQ(Call(Bin("bridge"), "DEL", *p, BridgeConf(p == &b ? 1 : 0)).exit_code, 0);
}

TEST_F(FirewallNetns, BadInputChangesNothing) {
  Pod a = AddPod(0);
  const std::string before = Ruleset();
  for (const json& keys :
       {json{{"backend", "firewalld"}}, json{{"ingressPolicy", "isolated"}}, json{{"backend", "nftables"}}}) {
    SCOPED_TRACE(keys.dump());
    RunResult r = Call(Bin("firewall"), "ADD", a, FirewallConf(0, a.result, keys));
    EXPECT_EQ(r.exit_code, 1);
    EXPECT_EQ(r.Json()["code"], 7) << r.out;
  }
  RunResult no_prev = Call(Bin("firewall"), "ADD", a, FirewallConf(0, json()));
  EXPECT_EQ(no_prev.Json()["code"], 7) << no_prev.out;
  EXPECT_EQ(Ruleset(), before);
  EXPECT_EQ(Call(Bin("bridge"), "DEL", a, BridgeConf(0)).exit_code, 0);
}

// The reference (its iptables backend, in the same throw-away host) prints the same result for the same
// input at the versions both speak.
TEST_F(FirewallNetns, ResultMatchesTheReference) {
  if (!HaveReference() || ::access("/usr/sbin/iptables", X_OK) != 0) GTEST_SKIP() << "no reference or no iptables";
  Pod a = AddPod(0);
  for (const std::string version : {"0.4.0", "1.0.0"}) {
    SCOPED_TRACE(version);
    json prev = a.result;
    prev["cniVersion"] = version;
    const json conf = FirewallConf(0, prev, {{"backend", "iptables"}}, version);
    RunResult ref = Call(RefDir() + "/firewall", "ADD", a, conf);
    ASSERT_EQ(ref.exit_code, 0) << ref.out << ref.err;
    RunResult ours = Call(Bin("firewall"), "ADD", a, conf);
    ASSERT_EQ(ours.exit_code, 0) << ours.out << ours.err;
    EXPECT_EQ(ours.Json(), ref.Json());
    EXPECT_EQ(Call(RefDir() + "/firewall", "DEL", a, conf).exit_code, 0);
    EXPECT_EQ(Call(Bin("firewall"), "DEL", a, conf).exit_code, 0);
  }
  EXPECT_EQ(RulesetText().find("netiface"), std::string::npos);
  EXPECT_EQ(Call(Bin("bridge"), "DEL", a, BridgeConf(0)).exit_code, 0);
}

}  // namespace
}  // namespace netiface::testing
