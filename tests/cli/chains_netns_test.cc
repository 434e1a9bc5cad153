// The stock conflists that chain the companion plugins, driven by the netiface CLI inside a throw-away
// node namespace with only our binaries on CNI_PATH. They are the example files the package installs
// (docs/examples/), with only their folders moved into the test's:
//   flannel's:       flannel (-> bridge + host-local) + portmap              10-flannel.conflist
//   Calico-shaped:   veth-workload (+ host-local) + bandwidth + portmap      10-calico-shaped.conflist
//   podman-shaped:   bridge (+ host-local) + portmap + firewall + tuning     87-podman-shaped.conflist
// A published port carries TCP and UDP from another namespace, from the node itself (its own address and
// 127.0.0.1) and from the pod to its own published port (hairpin); the bandwidth limits hold within 20 % on
// a measured transfer between namespaces; CHECK notices a deleted rule or qdisc; DEL and GC return the
// node's ruleset, qdiscs, links and sysctls to exactly what they were before the ADD.
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <memory>

#include <gtest/gtest.h>

#include "sockets.h"
#include "testutil.h"

namespace netiface::testing {
namespace {

using nlohmann::json;

constexpr const char* kNodeIp = "198.51.100.1";
constexpr const char* kOutsideIp = "198.51.100.2";

class ChainsNetnsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    NETIFACE_REQUIRE_ROOT();
    node_ = std::make_unique<TempNetns>("chn");
    out_ = std::make_unique<TempNetns>("cho");
    std::filesystem::create_directories(dir_ / "net.d");
    // A node as a runtime finds it: forwarding on, an uplink to the outside namespace with a default route.
    ASSERT_EQ(node_
                  ->Sh("ip link set lo up && sysctl -qw net.ipv4.ip_forward=1 && ip link add up0 type veth peer "
                       "name up1 netns " +
                       out_->name() + " && ip addr add " + kNodeIp + "/24 dev up0 && ip link set up0 up && " +
                       "ip route add default via " + kOutsideIp)
                  .exit_code,
              0);
    ASSERT_EQ(out_->Sh(std::string("ip link set lo up && ip addr add ") + kOutsideIp +
                       "/24 dev up1 && ip link set up1 up && ip route add 10.0.0.0/8 via " + kNodeIp)
                  .exit_code,
              0);
  }

  // `netiface ARGS` in the node namespace, on our conflists, our binaries only.
  RunResult Netiface(std::vector<std::string> args) {
    std::vector<std::string> argv = {"/usr/bin/nsenter", "--net=" + node_->path(), "--", Bin("netiface")};
    argv.insert(argv.end(), args.begin(), args.end());
    argv.insert(argv.end(), {"--conf-dir", dir_ / "net.d", "--cni-path", BinDir(), "--cache-dir", dir_ / "cache"});
    std::map<std::string, std::string> env = {{"PATH", "/usr/sbin:/usr/bin:/sbin:/bin"}};
    if (const char* asan = std::getenv("ASAN_OPTIONS")) env["ASAN_OPTIONS"] = asan;
    return testing::Run(argv, env);
  }

  void WriteList(const std::string& name, json plugins) {
    json l = {{"cniVersion", "1.0.0"}, {"name", name}, {"plugins", std::move(plugins)}};
    WriteFile(dir_ / ("net.d/" + name + ".conflist"), l.dump(2));
  }

  // docs/examples/<file> into the test's net.d; returns its network name. `edit` moves its folders.
  std::string WriteExample(const std::string& file, const std::function<void(json& plugin)>& edit) {
    json list = json::parse(ReadFile(std::string(std::getenv("NETIFACE_SOURCE_DIR")) + "/docs/examples/" + file));
    for (json& plugin : list["plugins"]) edit(plugin);
    WriteFile(dir_ / ("net.d/" + file), list.dump(2));
    return list["name"];
  }

  // flannel's stock conflist (its delegate: hairpin, default gateway) on a subnet.env of the test's.
  std::string WriteFlannel() {
    WriteFile(dir_ / "subnet.env",
              "FLANNEL_NETWORK=10.244.0.0/16\nFLANNEL_SUBNET=10.244.7.1/24\nFLANNEL_MTU=1450\nFLANNEL_IPMASQ=true\n");
    return WriteExample("10-flannel.conflist", [this](json& p) {
      if (p["type"] != "flannel") return;
      p["subnetFile"] = dir_ / "subnet.env";
      p["dataDir"] = dir_ / "flannel";
      p["ipam"] = {{"dataDir", dir_ / "ipam"}};
    });
  }

  // Calico's chain shape (its manifest's: portmap with snat): the routed veth dataplane, then bandwidth
  // and portmap. No masquerade: the outside namespace routes to the pods.
  std::string WriteCalico() {
    return WriteExample("10-calico-shaped.conflist", [this](json& p) {
      if (p["type"] != "veth-workload") return;
      p["nodename"] = "chains-node";
      p["dataDir"] = dir_ / "endpoints";
      p["ipMasq"] = false;
      p["ipam"]["dataDir"] = dir_ / "ipam";
    });
  }

  // podman's default network: bridge cni-podman0 with masquerade, portmap, firewall, tuning.
  std::string WritePodman() {
    return WriteExample("87-podman-shaped.conflist", [this](json& p) {
      if (p["type"] == "bridge") p["ipam"]["dataDir"] = dir_ / "ipam";
      if (p["type"] == "tuning") p["dataDir"] = dir_ / "tuning";
    });
  }

  // What a chain may change on the node and must give back: the ruleset, the qdiscs, the links (but
  // `keep`, the shared bridge, which stays as the reference bridge leaves it) and the sysctls portmap and
  // the main plugins write.
  json NodeState(const std::string& keep = "") const {
    json nft = json::array();
    for (const json& e : node_->Sh("nft -j list ruleset").Json().value("nftables", json::array())) {
      if (!e.contains("metainfo")) nft.push_back(e);
    }
    json qdiscs = json::array();
    for (json q : node_->Sh("tc -j qdisc show").Json()) {
      if (q.value("dev", "") == keep) continue;
      q.erase("refcnt");
      qdiscs.push_back(q);
    }
    json links = json::array();
    for (const json& l : node_->IpJson("link show")) {
      if (l["ifname"] != keep) links.push_back(l["ifname"]);
    }
    std::string sysctls = node_
                              ->Sh(
                                  "sysctl net.ipv4.ip_forward net.ipv4.conf.all.route_localnet "
                                  "net.ipv4.conf.up0.route_localnet net.ipv4.conf.all.forwarding")
                              .out;
    return {{"nft", nft}, {"qdiscs", qdiscs}, {"links", links}, {"sysctls", sysctls}};
  }

  // Deletes one rule of ours whose text (as `nft -j` prints it) contains `what`; false when none.
  bool DeleteRuleWith(const std::string& what) const {
    for (const json& e : node_->Sh("nft -j list ruleset").Json().value("nftables", json::array())) {
      if (!e.contains("rule") || e["rule"].dump().find(what) == std::string::npos) continue;
      const json& r = e["rule"];
      return node_
                 ->Sh("nft delete rule " + r["family"].get<std::string>() + " " + r["table"].get<std::string>() + " " +
                      r["chain"].get<std::string>() + " handle " + std::to_string(r["handle"].get<int>()))
                 .exit_code == 0;
    }
    return false;
  }

  static std::string PodIp(const RunResult& add) {
    const std::string cidr = add.Json()["ips"][0]["address"];
    return cidr.substr(0, cidr.find('/'));
  }

  // A published 8080/tcp and 5353/udp reach the pod's listeners from outside, from the node itself and
  // from the pod (hairpin).
  void ExpectPublished(const TempNetns& pod, const std::string& pod_ip) {
    Listeners l(pod.path());
    EXPECT_EQ(TcpVia(l, out_->path(), kNodeIp, 8080), kOutsideIp) << "outside -> node:8080";
    EXPECT_EQ(UdpVia(l, out_->path(), kNodeIp, 5353), kOutsideIp) << "outside -> node:5353/udp";
    EXPECT_NE(TcpVia(l, node_->path(), kNodeIp, 8080), "") << "node -> its own address:8080";
    EXPECT_NE(TcpVia(l, node_->path(), "127.0.0.1", 8080), "") << "node -> 127.0.0.1:8080";
    EXPECT_NE(TcpVia(l, pod.path(), kNodeIp, 8080), "") << "pod " << pod_ip << " -> node:8080 (hairpin)";
  }

  TempDir dir_;
  std::unique_ptr<TempNetns> node_;
  std::unique_ptr<TempNetns> out_;
};

TEST_F(ChainsNetnsTest, FlannelWithPortmapPublishesAndDelGcRestoreTheNode) {
  ASSERT_EQ(WriteFlannel(), "cbr0");
  const json before = NodeState("cni0");
  TempNetns pod("chp");
  RunResult add = Netiface({"add", "cbr0", pod.path(), "-p", "8080:80/tcp", "-p", "5353:53/udp"});
  ASSERT_EQ(add.exit_code, 0) << add.out << add.err;
  const std::string ip = PodIp(add);
  EXPECT_TRUE(ip.starts_with("10.244.7.")) << ip;
  ExpectPublished(pod, ip);
  EXPECT_EQ(Netiface({"check", "cbr0", pod.path()}).exit_code, 0);
  ASSERT_TRUE(DeleteRuleWith("8080")) << node_->Sh("nft list ruleset").out;
  RunResult check = Netiface({"check", "cbr0", pod.path()});
  EXPECT_NE(check.exit_code, 0) << "CHECK missed a deleted DNAT rule";
  EXPECT_EQ(Netiface({"del", "cbr0", pod.path()}).exit_code, 0);
  EXPECT_EQ(NodeState("cni0"), before);

  // GC: two pods, one named valid; the other's rules and address go, then DEL of the first.
  TempNetns keep("chk"), stale("chs");
  ASSERT_EQ(Netiface({"add", "cbr0", keep.path(), "-p", "8080:80/tcp"}).exit_code, 0);
  ASSERT_EQ(Netiface({"add", "cbr0", stale.path(), "-p", "8081:80/tcp"}).exit_code, 0);
  RunResult gc = Netiface({"gc", "cbr0", keep.path()});
  EXPECT_EQ(gc.exit_code, 0) << gc.out << gc.err;
  EXPECT_EQ(node_->Sh("nft list ruleset").out.find("8081"), std::string::npos) << "GC left the stale pod's rules";
  EXPECT_EQ(Netiface({"check", "cbr0", keep.path()}).exit_code, 0);
  EXPECT_EQ(Netiface({"del", "cbr0", keep.path()}).exit_code, 0);
  EXPECT_EQ(NodeState("cni0"), before);
}

TEST_F(ChainsNetnsTest, CalicoShapedChainShapesPublishesAndDelRestoresTheNode) {
  ASSERT_EQ(WriteCalico(), "k8s-pod-network");
  const json before = NodeState();
  TempNetns pod("chp");
  // ingress 8 Mbit/s (1 MB/s) toward the pod, egress 16 Mbit/s (2 MB/s) from it.
  RunResult add =
      Netiface({"add", "k8s-pod-network", pod.path(), "-p", "8080:80/tcp", "-p", "5353:53/udp", "--ingress-rate",
                "8000000", "--ingress-burst", "80000", "--egress-rate", "16000000", "--egress-burst", "160000"});
  ASSERT_EQ(add.exit_code, 0) << add.out << add.err;
  const std::string ip = PodIp(add);
  EXPECT_TRUE(ip.starts_with("10.245.3.")) << ip;
  ExpectPublished(pod, ip);

  // The buckets count whole frames: UDP payload + 8 (UDP) + 20 (IPv4) + 14 (Ethernet) bytes each. Twice
  // the limit is offered: what arrives is what the bucket lets through.
  const double payload = kUdpPayload / (kUdpPayload + 42.0);
  const double to_pod = MeasureUdpBytesPerSecond(out_->path(), pod.path(), ip, 2 * 1e6 * payload);
  const double from_pod = MeasureUdpBytesPerSecond(pod.path(), out_->path(), kOutsideIp, 2 * 2e6 * payload);
  std::fprintf(stderr, "measured: outside -> pod %.0f B/s, pod -> outside %.0f B/s\n", to_pod, from_pod);
  EXPECT_NEAR(to_pod, 1e6 * payload, 0.2 * 1e6 * payload);
  EXPECT_NEAR(from_pod, 2e6 * payload, 0.2 * 2e6 * payload);

  EXPECT_EQ(Netiface({"check", "k8s-pod-network", pod.path()}).exit_code, 0);
  // A qdisc removed by hand: CHECK says so.
  std::string host_veth;
  for (const json& q : node_->Sh("tc -j qdisc show").Json()) {
    if (q.value("kind", "") == "tbf" && !q.value("dev", "").starts_with("bwp")) host_veth = q["dev"];
  }
  ASSERT_FALSE(host_veth.empty()) << node_->Sh("tc qdisc show").out;
  ASSERT_EQ(node_->Sh("tc qdisc del dev " + host_veth + " root").exit_code, 0);
  EXPECT_NE(Netiface({"check", "k8s-pod-network", pod.path()}).exit_code, 0) << "CHECK missed a deleted qdisc";
  EXPECT_EQ(Netiface({"del", "k8s-pod-network", pod.path()}).exit_code, 0);
  EXPECT_EQ(NodeState(), before);
  // DEL again (idempotent): nothing changes, nothing fails.
  EXPECT_EQ(Netiface({"del", "k8s-pod-network", pod.path()}).exit_code, 0);
  EXPECT_EQ(NodeState(), before);
}

TEST_F(ChainsNetnsTest, PodmanShapedChainPublishesPingsAndDelRestoresTheNode) {
  ASSERT_EQ(WritePodman(), "podman");
  const json before = NodeState("cni-podman0");
  TempNetns pod("chp");
  RunResult add = Netiface({"add", "podman", pod.path(), "-p", "8080:80/tcp", "-p", "5353:53/udp"});
  ASSERT_EQ(add.exit_code, 0) << add.out << add.err;
  const std::string ip = PodIp(add);
  EXPECT_TRUE(ip.starts_with("10.88.0.")) << ip;
  EXPECT_TRUE(node_->Ping(ip)) << "node -> pod";
  EXPECT_TRUE(pod.Ping(kOutsideIp)) << "pod -> outside (masqueraded)";
  ExpectPublished(pod, ip);
  EXPECT_EQ(Netiface({"check", "podman", pod.path()}).exit_code, 0);
  EXPECT_EQ(Netiface({"del", "podman", pod.path()}).exit_code, 0);
  EXPECT_EQ(NodeState("cni-podman0"), before);
  EXPECT_TRUE(ListDir(dir_ / "cache/results").empty());
}

}  // namespace
}  // namespace netiface::testing
