// NAT end to end through the built plugins (bridge and veth-workload with ipMasq / floating IPs, our
// host-local as IPAM), run inside a throw-away "host" namespace: the rules appear tagged with the
// attachment, carry real traffic, and DEL, failed ADD and GC leave `nft -j list ruleset` in the host
// namespace exactly as before.
#include <sys/stat.h>
#include <unistd.h>

#include <memory>
#include <string>

#include <gtest/gtest.h>

#include "testutil.h"

namespace netiface::testing {
namespace {

using json = nlohmann::json;

#define REQUIRE_PLUGIN(name)                                                                  \
  do {                                                                                        \
    if (::access(Bin(name).c_str(), X_OK) != 0) GTEST_SKIP() << Bin(name) << " is not built"; \
  } while (0)

// The container's addresses ("a.b.c.d" / "x::y", no prefix) of a plugin result of any version.
std::vector<std::string> ResultIps(const json& r) {
  std::vector<std::string> out;
  auto strip = [](const std::string& s) { return s.substr(0, s.find('/')); };
  if (r.contains("ips")) {
    for (const auto& ip : r["ips"]) out.push_back(strip(ip["address"].get<std::string>()));
  }
  for (const char* key : {"ip4", "ip6"}) {
    if (r.contains(key) && r[key].is_object()) out.push_back(strip((*r.find(key))["ip"].get<std::string>()));
  }
  return out;
}

class PluginsNat : public ::testing::Test {
 protected:
  void SetUp() override {
    NETIFACE_REQUIRE_ROOT();
    REQUIRE_PLUGIN("host-local");
    host_ = std::make_unique<TempNetns>("npnh");
    // An uplink to an "outside" namespace that knows no pod subnet; the host's default route points at it
    // (veth-workload's proxy ARP for 169.254.1.1 needs one).
    out_ = std::make_unique<TempNetns>("npno");
    Sh(*host_, "ip link add up0 type veth peer name eth0 netns " + out_->name() +
                   " && ip addr add 198.51.100.1/24 dev up0 && ip link set up0 up"
                   " && ip route add default via 198.51.100.2 && sysctl -qw net.ipv4.ip_forward=1");
    Sh(*out_,
       "ip addr add 198.51.100.2/24 dev eth0 && ip link set eth0 up"
       " && ip route add 203.0.113.0/24 via 198.51.100.1");
    bridge_ = UniqueName("nbr");
  }

  static void Sh(const TempNetns& ns, const std::string& cmd) {
    auto r = ns.Sh(cmd);
    ASSERT_EQ(r.exit_code, 0) << cmd << ": " << r.err;
  }

  json Ruleset() const {
    auto r = host_->Sh("nft -j list ruleset");
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return json::parse(r.out);
  }
  std::string RulesetText() const { return host_->Sh("nft list ruleset").out; }

  // The addresses host-local holds for `network`.
  std::vector<std::string> Reserved(const std::string& network) const {
    std::vector<std::string> ips;
    for (const auto& f : ListDir(dir_ / ("ipam/" + network))) {
      if (f != "lock" && f.rfind("last_reserved_ip", 0) != 0) ips.push_back(f);
    }
    return ips;
  }

  const TempNetns& NewPod() {
    pods_.push_back(std::make_unique<TempNetns>("npnp"));
    return *pods_.back();
  }

  RunResult Call(const std::string& plugin, const std::string& command, const TempNetns* pod, const std::string& cid,
                 const json& conf) const {
    PluginCall c;
    c.command = command;
    c.container_id = cid;
    c.netns = pod != nullptr ? pod->path() : "";
    c.host_ns = host_->name();
    return RunPlugin(Bin(plugin), c, conf);
  }

  json BridgeConf(const std::string& version, bool dual_stack) const {
    json ranges = dual_stack ? json::parse(R"([[{"subnet":"10.78.0.0/24"}],[{"subnet":"fd78::/64"}]])")
                             : json::parse(R"([[{"subnet":"10.78.0.0/24"}]])");
    return {{"cniVersion", version},
            {"name", "natbr"},
            {"type", "bridge"},
            {"bridge", bridge_},
            {"isGateway", true},
            {"ipMasq", true},
            {"ipam",
             {{"type", "host-local"},
              {"dataDir", dir_ / "ipam"},
              {"ranges", ranges},
              {"routes", json::parse(R"([{"dst":"0.0.0.0/0"}])")}}}};
  }

  json VethConf(const std::string& version, const std::vector<std::string>& floating = {}) const {
    json conf = {{"cniVersion", version},
                 {"name", "natvw"},
                 {"type", "veth-workload"},
                 {"ipMasq", true},
                 {"nodename", "node1"},
                 {"dataDir", dir_ / "endpoints"},
                 {"featureControl", {{"floatingIps", true}}},
                 {"ipam",
                  {{"type", "host-local"},
                   {"dataDir", dir_ / "ipam"},
                   {"ranges", json::parse(R"([[{"subnet":"10.79.0.0/24"}]])")}}}};
    if (!floating.empty()) conf["args"] = {{"cni", {{"floatingIps", floating}}}};
    return conf;
  }

  // ADD must succeed; returns the result.
  json Add(const std::string& plugin, const TempNetns& pod, const std::string& cid, const json& conf) {
    auto r = Call(plugin, "ADD", &pod, cid, conf);
    EXPECT_EQ(r.exit_code, 0) << plugin << " ADD " << cid << ": " << r.out << r.err;
    return r.exit_code == 0 ? r.Json() : json();
  }
  void Del(const std::string& plugin, const TempNetns* pod, const std::string& cid, const json& conf) {
    auto r = Call(plugin, "DEL", pod, cid, conf);
    EXPECT_EQ(r.exit_code, 0) << plugin << " DEL " << cid << ": " << r.out << r.err;
  }

  std::unique_ptr<TempNetns> host_;
  std::unique_ptr<TempNetns> out_;
  std::vector<std::unique_ptr<TempNetns>> pods_;
  TempDir dir_;
  std::string bridge_;
};

TEST_F(PluginsNat, BridgeAddTagsTheRulesAndDelRestoresTheRuleset) {
  REQUIRE_PLUGIN("bridge");
  for (const auto& version : AllVersions()) {
    SCOPED_TRACE(version);
    const bool dual = version >= std::string("0.3.0");
    const json before = Ruleset();
    const TempNetns& pod = NewPod();
    json conf = BridgeConf(version, dual);
    json result = Add("bridge", pod, "c" + version, conf);
    auto ips = ResultIps(result);
    ASSERT_EQ(ips.size(), dual ? 2u : 1u) << result.dump();
    std::string text = RulesetText();
    const std::string comment = "comment \"netiface:natbr:c" + version + ":eth0\"";
    EXPECT_NE(
        text.find("ip saddr " + ips[0] + " ip daddr != 10.78.0.0/24 ip daddr != 224.0.0.0/4 masquerade " + comment),
        std::string::npos)
        << text;
    if (dual) {
      EXPECT_NE(
          text.find("ip6 saddr " + ips[1] + " ip6 daddr != fd78::/64 ip6 daddr != ff00::/8 masquerade " + comment),
          std::string::npos)
          << text;
    }
    if (version >= std::string("0.4.0")) {
      json check = conf;
      check["prevResult"] = result;
      auto r = Call("bridge", "CHECK", &pod, "c" + version, check);
      EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
      // CHECK notices the masquerade rule going away.
      host_->Sh("nft flush chain inet netiface postrouting");
      r = Call("bridge", "CHECK", &pod, "c" + version, check);
      EXPECT_NE(r.exit_code, 0) << "CHECK passed without the masquerade rule";
    }
    Del("bridge", &pod, "c" + version, conf);
    EXPECT_EQ(Ruleset(), before) << RulesetText();
    // DEL again (and without a netns) is idempotent and still leaves nothing.
    Del("bridge", nullptr, "c" + version, conf);
    EXPECT_EQ(Ruleset(), before);
  }
}

TEST_F(PluginsNat, BridgePodIsMasqueradedToTheOutside) {
  REQUIRE_PLUGIN("bridge");
  const TempNetns& pod = NewPod();
  json conf = BridgeConf("1.0.0", false);
  json conf_nomasq = conf;
  conf_nomasq["ipMasq"] = false;
  // Without masquerade the outside cannot answer: it has no route to the pod subnet.
  ASSERT_FALSE(Add("bridge", pod, "plain", conf_nomasq).is_null());
  EXPECT_FALSE(pod.Ping("198.51.100.2"));
  Del("bridge", &pod, "plain", conf_nomasq);
  const TempNetns& pod2 = NewPod();
  ASSERT_FALSE(Add("bridge", pod2, "masq", conf).is_null());
  EXPECT_TRUE(pod2.Ping("198.51.100.2"));
  Del("bridge", &pod2, "masq", conf);
}

TEST_F(PluginsNat, BridgeFailedAddLeavesTheRulesetAsBefore) {
  REQUIRE_PLUGIN("bridge");
  // A table of ours whose postrouting chain is a filter chain: masquerade is refused there, so the ADD
  // fails at the NAT step, after the veth, the IPAM reservation and the addresses exist.
  Sh(*host_,
     "nft 'add table inet netiface; add chain inet netiface postrouting "
     "{ type filter hook postrouting priority 0; policy accept; }'");
  const json before = Ruleset();
  const TempNetns& pod = NewPod();
  for (const auto& version : VersionsFrom("0.3.0")) {
    SCOPED_TRACE(version);
    json conf = BridgeConf(version, true);
    auto r = Call("bridge", "ADD", &pod, "bad", conf);
    EXPECT_NE(r.exit_code, 0) << r.out;
    EXPECT_EQ(r.Json().value("code", 0), 102) << r.out;
    EXPECT_EQ(Ruleset(), before) << RulesetText();
    EXPECT_EQ(Reserved("natbr"), std::vector<std::string>{}) << "reservation left after a failed ADD";
    EXPECT_FALSE(pod.Sh("ip link show eth0").exit_code == 0) << "container interface left after a failed ADD";
  }
}

TEST_F(PluginsNat, BridgeGcRemovesOnlyStaleAttachments) {
  REQUIRE_PLUGIN("bridge");
  const json before = Ruleset();
  const TempNetns& a = NewPod();
  const TempNetns& b = NewPod();
  json conf = BridgeConf("1.1.0", false);
  auto ip_a = ResultIps(Add("bridge", a, "ga", conf));
  auto ip_b = ResultIps(Add("bridge", b, "gb", conf));
  ASSERT_EQ(ip_a.size(), 1u);
  ASSERT_EQ(ip_b.size(), 1u);
  json gc = conf;
  gc["cni.dev/valid-attachments"] = json::parse(R"([{"containerID":"ga","ifname":"eth0"}])");
  auto r = Call("bridge", "GC", nullptr, "", gc);
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  std::string text = RulesetText();
  EXPECT_NE(text.find("netiface:natbr:ga:eth0"), std::string::npos) << text;
  EXPECT_EQ(text.find("netiface:natbr:gb:eth0"), std::string::npos) << text;
  gc["cni.dev/valid-attachments"] = json::array();
  r = Call("bridge", "GC", nullptr, "", gc);
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_EQ(Ruleset(), before) << RulesetText();
  Del("bridge", &a, "ga", conf);
  Del("bridge", &b, "gb", conf);
  EXPECT_EQ(Ruleset(), before);
}

TEST_F(PluginsNat, VethWorkloadMasqueradeAndFloatingIpEndToEnd) {
  REQUIRE_PLUGIN("veth-workload");
  for (const auto& version : VersionsFrom("0.3.0")) {
    SCOPED_TRACE(version);
    const json before = Ruleset();
    const TempNetns& pod = NewPod();
    const std::string cid = "w" + version;
    json conf = VethConf(version, {"203.0.113.20"});
    json result = Add("veth-workload", pod, cid, conf);
    auto ips = ResultIps(result);
    ASSERT_EQ(ips.size(), 1u) << result.dump();
    std::string text = RulesetText();
    const std::string comment = "comment \"netiface:natvw:" + cid + ":eth0\"";
    for (const std::string& rule :
         {"ip daddr 203.0.113.20 dnat ip to " + ips[0] + " " + comment,
          "ip saddr " + ips[0] + " snat ip to 203.0.113.20 " + comment,
          "ip saddr " + ips[0] + " ip daddr != 10.79.0.0/24 ip daddr != 224.0.0.0/4 masquerade " + comment}) {
      EXPECT_NE(text.find(rule), std::string::npos) << rule << "\nin\n" << text;
    }
    // The outside reaches the pod through its floating IP, and the pod reaches the outside as it.
    EXPECT_TRUE(out_->Ping("203.0.113.20"));
    EXPECT_TRUE(pod.Ping("198.51.100.2"));
    if (version >= std::string("0.4.0")) {
      json check = conf;
      check["prevResult"] = result;
      auto r = Call("veth-workload", "CHECK", &pod, cid, check);
      EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
    }
    Del("veth-workload", &pod, cid, conf);
    EXPECT_EQ(Ruleset(), before) << RulesetText();
    EXPECT_FALSE(out_->Ping("203.0.113.20"));
  }
}

TEST_F(PluginsNat, VethWorkloadFailedAddAfterNatLeavesTheRulesetAsBefore) {
  REQUIRE_PLUGIN("veth-workload");
  const json before = Ruleset();
  // The endpoint record is written after the NAT rules: a file where its folder should be makes it fail.
  json conf = VethConf("1.0.0", {"203.0.113.21"});
  ::mkdir((dir_ / "endpoints").c_str(), 0700);
  ::mkdir((dir_ / "endpoints/natvw").c_str(), 0700);
  WriteFile(dir_ / "endpoints/natvw/_cni", "not a folder");
  const TempNetns& pod = NewPod();
  auto r = Call("veth-workload", "ADD", &pod, "wfail", conf);
  EXPECT_NE(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("_cni"), std::string::npos) << "failed elsewhere than at the endpoint record: " << r.out;
  EXPECT_EQ(Ruleset(), before) << RulesetText();
  EXPECT_FALSE(pod.Sh("ip link show eth0").exit_code == 0) << "container interface left after a failed ADD";
}

TEST_F(PluginsNat, VethWorkloadGcRemovesStaleNatRules) {
  REQUIRE_PLUGIN("veth-workload");
  const json before = Ruleset();
  const TempNetns& a = NewPod();
  const TempNetns& b = NewPod();
  json conf = VethConf("1.1.0");
  ASSERT_FALSE(Add("veth-workload", a, "va", conf).is_null());
  ASSERT_FALSE(Add("veth-workload", b, "vb", conf).is_null());
  json gc = conf;
  gc["cni.dev/valid-attachments"] = json::parse(R"([{"containerID":"va","ifname":"eth0"}])");
  auto r = Call("veth-workload", "GC", nullptr, "", gc);
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  std::string text = RulesetText();
  EXPECT_NE(text.find("netiface:natvw:va:eth0"), std::string::npos) << text;
  EXPECT_EQ(text.find("netiface:natvw:vb:eth0"), std::string::npos) << text;
  Del("veth-workload", &a, "va", conf);
  Del("veth-workload", &b, "vb", conf);
  EXPECT_EQ(Ruleset(), before) << RulesetText();
}

}  // namespace
}  // namespace netiface::testing
