// portmap end to end through the built plugins in throw-away namespaces: a "host" namespace (bridge +
// host-local, then portmap chained with prevResult), a container namespace with TCP and UDP listeners, an
// "outside" namespace linked to the host. A client outside reaches the listeners through the host's
// address; the host itself through 127.0.0.1 and through its address; the container through its own
// published port (hairpin); IPv6 from outside and from the host. CHECK passes; DEL leaves
// `nft -j list ruleset` exactly as before the ADD and deletes the UDP flows' conntrack entries; GC and
// STATUS work (1.1.0); the result equals the reference portmap's on the same input (0.4.0 and 1.0.0: it
// speaks no 1.1.0). Versions 0.4.0, 1.0.0 and 1.1.0.
#include <memory>
#include <string>

#include <gtest/gtest.h>

#include "sockets.h"
#include "testutil.h"

namespace netiface::testing {
namespace {

using json = nlohmann::json;

const std::string kCid = "5c2e8a1f4b7d0e3a6c9f2b5e8d1a4c7f0b3e6a9d2c5f8b1e4a7d0c3f6b9e2a58";

class PortmapNetns : public ::testing::Test {
 protected:
  void SetUp() override {
    NETIFACE_REQUIRE_ROOT();
    for (const char* p : {"portmap", "bridge", "host-local"}) {
      if (::access(Bin(p).c_str(), X_OK) != 0) GTEST_SKIP() << Bin(p) << " is not built";
    }
    host_ = std::make_unique<TempNetns>("pmh");
    out_ = std::make_unique<TempNetns>("pmo");
    pod_ = std::make_unique<TempNetns>("pmp");
    Sh(*host_, "ip link add up0 type veth peer name eth0 netns " + out_->name() +
                   " && ip addr add 198.51.100.1/24 dev up0 && ip addr add 2001:db8:1::1/64 dev up0 nodad"
                   " && ip link set up0 up && ip link set lo up"
                   " && sysctl -qw net.ipv4.ip_forward=1");
    Sh(*out_,
       "ip addr add 198.51.100.2/24 dev eth0 && ip addr add 2001:db8:1::2/64 dev eth0 nodad"
       " && ip link set eth0 up && ip link set lo up");
    Sh(*pod_, "ip link set lo up");
    bridge_ = UniqueName("pmbr");
  }

  static void Sh(const TempNetns& ns, const std::string& cmd) {
    auto r = ns.Sh(cmd);
    ASSERT_EQ(r.exit_code, 0) << cmd << ": " << r.err;
  }

  std::string Ruleset(const TempNetns& ns) const {
    auto r = ns.Sh("nft -j list ruleset");
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return r.out;
  }

  RunResult Call(const std::string& plugin_path, const std::string& command, const TempNetns& host,
                 const json& conf) const {
    PluginCall c;
    c.command = command;
    c.container_id = kCid;
    c.netns = pod_->path();
    c.host_ns = host.name();
    return RunPlugin(plugin_path, c, conf);
  }

  json BridgeConf(const std::string& version) const {
    return {{"cniVersion", version},
            {"name", "pmnet"},
            {"type", "bridge"},
            {"bridge", bridge_},
            {"isGateway", true},
            // With br_netfilter loaded, a DNATed frame from a port back to the same port is bridged: the
            // container reaching its own published port needs hairpin mode (as Kubernetes sets it).
            {"hairpinMode", true},
            {"ipam",
             {{"type", "host-local"},
              {"dataDir", dir_ / "ipam"},
              {"ranges", json::parse(R"([[{"subnet":"10.77.0.0/24"}],[{"subnet":"fd77::/64"}]])")},
              {"routes", json::parse(R"([{"dst":"0.0.0.0/0"},{"dst":"::/0"}])")}}}};
  }

  static json PortmapConf(const std::string& version, const json& prev, const std::string& backend) {
    return {{"cniVersion", version},
            {"name", "pmnet"},
            {"type", "portmap"},
            {"backend", backend},
            {"prevResult", prev},
            {"runtimeConfig",
             {{"portMappings", json::array({{{"hostPort", 8080}, {"containerPort", 80}, {"protocol", "tcp"}},
                                            {{"hostPort", 5353}, {"containerPort", 53}, {"protocol", "udp"}}})}}}};
  }

  std::unique_ptr<TempNetns> host_;
  std::unique_ptr<TempNetns> out_;
  std::unique_ptr<TempNetns> pod_;
  TempDir dir_;
  std::string bridge_;
};

TEST_F(PortmapNetns, PublishedPortsCarryTrafficAndDelRestoresTheRuleset) {
  const std::string initial = Ruleset(*host_);
  for (const std::string version : {"0.4.0", "1.0.0", "1.1.0"}) {
    SCOPED_TRACE(version);
    auto br = Call(Bin("bridge"), "ADD", *host_, BridgeConf(version));
    ASSERT_EQ(br.exit_code, 0) << br.out << br.err;
    const json prev = br.Json();
    const std::string pod_cidr = prev["ips"][0]["address"].get<std::string>();
    ASSERT_TRUE(pod_cidr.starts_with("10.77.0.")) << pod_cidr;
    const std::string before = Ruleset(*host_);

    // "iptables" is served by nftables too (the reference is compared only where it speaks the version).
    const json conf = PortmapConf(version, prev, version == "1.1.0" ? "iptables" : "nftables");
    auto add = Call(Bin("portmap"), "ADD", *host_, conf);
    ASSERT_EQ(add.exit_code, 0) << add.out << add.err;
    EXPECT_EQ(add.Json(), prev) << "the result is prevResult, passed through";
    auto check = Call(Bin("portmap"), "CHECK", *host_, conf);
    EXPECT_EQ(check.exit_code, 0) << check.out << check.err;

    {
      Listeners l(pod_->path());
      // From outside, through the host's address: the container sees the client's own address.
      EXPECT_EQ(TcpVia(l, out_->path(), "198.51.100.1", 8080), "198.51.100.2");
      EXPECT_EQ(UdpVia(l, out_->path(), "198.51.100.1", 5353), "198.51.100.2");
      // From the host itself, through its address and through 127.0.0.1 (masqueraded to the gateway).
      EXPECT_EQ(TcpVia(l, host_->path(), "198.51.100.1", 8080), "198.51.100.1");
      EXPECT_EQ(UdpVia(l, host_->path(), "198.51.100.1", 5353), "198.51.100.1");
      EXPECT_EQ(TcpVia(l, host_->path(), "127.0.0.1", 8080), "10.77.0.1");
      EXPECT_EQ(UdpVia(l, host_->path(), "127.0.0.1", 5353), "10.77.0.1");
      // IPv6 from outside and from the host, through the host's IPv6 address.
      EXPECT_EQ(TcpVia(l, out_->path(), "2001:db8:1::1", 8080), "2001:db8:1::2");
      EXPECT_EQ(UdpVia(l, out_->path(), "2001:db8:1::1", 5353), "2001:db8:1::2");
      EXPECT_EQ(TcpVia(l, host_->path(), "2001:db8:1::1", 8080), "2001:db8:1::1");
      // The container through its own published port (hairpin, masqueraded).
      EXPECT_EQ(TcpVia(l, pod_->path(), "198.51.100.1", 8080), "10.77.0.1");
    }
    EXPECT_EQ(host_->Sh("sysctl -n net.ipv4.conf." + bridge_ + ".route_localnet").out, "1\n");

    // A rule removed behind the plugin's back fails CHECK.
    if (version == "1.0.0") {
      Sh(*host_, "nft flush chain inet netiface portmap_output");
      auto broken = Call(Bin("portmap"), "CHECK", *host_, conf);
      EXPECT_NE(broken.exit_code, 0);
      EXPECT_NE(broken.out.find("portmap_output"), std::string::npos) << broken.out;
    }

    json del = conf;
    del.erase("prevResult");
    if (version == "1.1.0") {
      // GC keeps a valid attachment and collects it once it is not; STATUS succeeds.
      json gc = del;
      gc["cni.dev/valid-attachments"] = json::array({{{"containerID", kCid}, {"ifname", "eth0"}}});
      EXPECT_EQ(Call(Bin("portmap"), "GC", *host_, gc).exit_code, 0);
      EXPECT_EQ(Call(Bin("portmap"), "CHECK", *host_, conf).exit_code, 0) << "a valid attachment was collected";
      EXPECT_EQ(Call(Bin("portmap"), "STATUS", *host_, gc).exit_code, 0);
      gc["cni.dev/valid-attachments"] = json::array();
      EXPECT_EQ(Call(Bin("portmap"), "GC", *host_, gc).exit_code, 0);
      EXPECT_EQ(Ruleset(*host_), before);
    }
    // DEL needs no prevResult; twice is fine; the ruleset is what it was before the ADD.
    // The UDP flows through 5353 have conntrack entries; DEL (which is handed the mappings) deletes them.
    auto udp_entries = [&] { return host_->Sh("grep -c 'udp .* dport=5353 ' /proc/net/nf_conntrack").out; };
    EXPECT_NE(udp_entries(), "0\n");
    for (int i = 0; i < 2; ++i) {
      auto d = Call(Bin("portmap"), "DEL", *host_, del);
      EXPECT_EQ(d.exit_code, 0) << d.out << d.err;
    }
    EXPECT_EQ(udp_entries(), "0\n");
    EXPECT_EQ(Ruleset(*host_), before);
    {
      Listeners l(pod_->path());
      EXPECT_EQ(TcpVia(l, out_->path(), "198.51.100.1", 8080), "") << "still published after DEL";
    }

    // The reference portmap (its nftables backend, in a throw-away host of its own) on the same input.
    if (HaveReference() && version != "1.1.0") {  // the reference speaks up to 1.0.0
      TempNetns ref_host("pmr");
      auto ref = Call(RefDir() + "/portmap", "ADD", ref_host, conf);
      ASSERT_EQ(ref.exit_code, 0) << ref.out << ref.err;
      EXPECT_EQ(ref.Json(), add.Json());
      EXPECT_EQ(Call(RefDir() + "/portmap", "DEL", ref_host, del).exit_code, 0);
    }

    auto bd = Call(Bin("bridge"), "DEL", *host_, BridgeConf(version));
    ASSERT_EQ(bd.exit_code, 0) << bd.out << bd.err;
  }
  EXPECT_EQ(Ruleset(*host_), initial);
}

}  // namespace
}  // namespace netiface::testing
