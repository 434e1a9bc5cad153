// The built veth-workload (with our host-local as IPAM) run inside a throw-away "host" namespace of a
// fake node, against pod namespaces: the dataplane it builds, traffic, CHECK, DEL, GC, STATUS and
// failed ADDs, for every spec version.
#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

#include "netiface/veth_workload/naming.h"
#include "node_fixture.h"

namespace netiface::veth_workload::test {
namespace {

std::string VethOf(const std::string& cid, const std::string& ifname = "eth0") {
  return HostVethName("cali", Identity{.container_id = cid, .ifname = ifname});
}

// The container route table as "dst via gw dev" strings.
std::vector<std::string> PodRoutes(const t::TempNetns& pod, const char* family) {
  std::vector<std::string> out;
  for (const auto& r : pod.IpJson(std::string(family) + " route show")) {
    out.push_back(r.value("dst", "") + (r.contains("gateway") ? " via " + r["gateway"].get<std::string>() : "") +
                  " dev " + r.value("dev", ""));
  }
  return out;
}

bool Has(const std::vector<std::string>& v, const std::string& s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

// The pod's global addresses on eth0 as "addr/len".
std::vector<std::string> PodAddrs(const t::TempNetns& pod, const std::string& ifname = "eth0") {
  std::vector<std::string> out;
  for (const auto& l : pod.IpJson("addr show dev " + ifname)) {
    for (const auto& a : l["addr_info"]) {
      if (a.value("scope", "") == "global")
        out.push_back(a["local"].get<std::string>() + "/" + std::to_string(a["prefixlen"].get<int>()));
    }
  }
  return out;
}

using VethWorkloadNode = NodeTest;

TEST_F(VethWorkloadNode, Ipv4EveryVersion) {
  for (const auto& version : t::AllVersions()) {
    SCOPED_TRACE(version);
    const t::TempNetns& pod = NewPod();
    const std::string cid = "v4-" + version;
    const std::string veth = VethOf(cid);
    json conf = Conf(version);
    json r = Add(pod, cid, conf);
    ASSERT_FALSE(r.is_null());
    EXPECT_EQ(r["cniVersion"], version);
    auto ips = ResultIps(r);
    ASSERT_EQ(ips.size(), 1u) << r.dump();
    const std::string ip = Bare(ips[0]);
    EXPECT_EQ(ips[0], ip + "/32");
    if (version < "0.3.0") {
      EXPECT_EQ(r["ip4"]["gateway"], "169.254.1.1");
      EXPECT_FALSE(r.contains("interfaces"));
    } else {
      ASSERT_EQ(r["interfaces"].size(), 2u);
      EXPECT_EQ(r["interfaces"][0]["name"], veth);
      EXPECT_EQ(r["interfaces"][0]["mac"], "ee:ee:ee:ee:ee:ee");
      EXPECT_FALSE(r["interfaces"][0].contains("sandbox"));
      EXPECT_EQ(r["interfaces"][1]["name"], "eth0");
      EXPECT_EQ(r["interfaces"][1]["sandbox"], pod.path());
      EXPECT_EQ(r["ips"][0]["interface"], 1);
      EXPECT_EQ(r["ips"][0]["gateway"], "169.254.1.1");
      EXPECT_EQ(r["ips"][0].contains("version"), version < "1.0.0");
      EXPECT_EQ(r["interfaces"][0].contains("mtu"), version == "1.1.0");
      EXPECT_EQ(r["routes"][0]["dst"], "0.0.0.0/0");
      EXPECT_EQ(r["routes"][0]["gw"], "169.254.1.1");
    }

    // The dataplane.
    EXPECT_EQ(PodAddrs(pod), std::vector<std::string>{ip + "/32"});
    auto routes = PodRoutes(pod, "-4");
    EXPECT_TRUE(Has(routes, "default via 169.254.1.1 dev eth0")) << ::testing::PrintToString(routes);
    EXPECT_TRUE(Has(routes, "169.254.1.1 dev eth0")) << ::testing::PrintToString(routes);
    EXPECT_TRUE(Has(HostPodRoutes(), ip + " dev " + veth)) << ::testing::PrintToString(HostPodRoutes());
    auto link = host_->IpJson("link show " + veth);
    ASSERT_EQ(link.size(), 1u);
    EXPECT_EQ(link[0]["address"], "ee:ee:ee:ee:ee:ee");
    EXPECT_EQ(HostSysctl("net/ipv4/conf/" + veth + "/proxy_arp"), "1");
    EXPECT_EQ(HostSysctl("net/ipv4/neigh/" + veth + "/proxy_delay"), "0");
    EXPECT_EQ(HostSysctl("net/ipv4/conf/" + veth + "/forwarding"), "1");
    EXPECT_EQ(HostSysctl("net/ipv4/conf/" + veth + "/route_localnet"), "1");
    EXPECT_EQ(HostSysctl("net/ipv6/conf/" + veth + "/accept_ra"), "0");
    EXPECT_EQ(Records().size(), 1u);
    EXPECT_EQ(Reserved(), std::vector<std::string>{ip});

    // Traffic: host -> pod, and pod -> the node's uplink address through 169.254.1.1.
    EXPECT_TRUE(host_->Ping(ip));
    EXPECT_TRUE(pod.Ping("192.168.250.1"));

    if (version >= "0.4.0") {
      json check = conf;
      check["prevResult"] = r;
      auto c = Call("CHECK", &pod, cid, check);
      EXPECT_EQ(c.exit_code, 0) << c.out << c.err;
      EXPECT_EQ(c.out, "");
    }
    Del(&pod, cid, conf);
    EXPECT_TRUE(HostLinks().empty()) << ::testing::PrintToString(HostLinks());
    EXPECT_TRUE(HostPodRoutes().empty()) << ::testing::PrintToString(HostPodRoutes());
    EXPECT_TRUE(Reserved().empty());
    EXPECT_TRUE(Records().empty());
    EXPECT_TRUE(AttachmentLinks().empty()) << ::testing::PrintToString(AttachmentLinks());
    EXPECT_NE(pod.Sh("ip link show eth0").exit_code, 0);
  }
}

TEST_F(VethWorkloadNode, Ipv6Pod) {
  const t::TempNetns& pod = NewPod();
  json conf = Conf("1.1.0", kV6Range);
  json r = Add(pod, "v6", conf);
  ASSERT_FALSE(r.is_null());
  ASSERT_EQ(ResultIps(r).size(), 1u);
  const std::string ip = Bare(ResultIps(r)[0]);
  EXPECT_EQ(r["ips"][0]["gateway"], "fe80::ecee:eeff:feee:eeee");
  EXPECT_EQ(PodAddrs(pod), std::vector<std::string>{ip + "/128"});
  auto routes = PodRoutes(pod, "-6");
  EXPECT_TRUE(Has(routes, "default via fe80::ecee:eeff:feee:eeee dev eth0")) << ::testing::PrintToString(routes);
  EXPECT_TRUE(PodRoutes(pod, "-4").empty());
  const std::string veth = VethOf("v6");
  EXPECT_TRUE(Has(HostPodRoutes(), ip + " dev " + veth)) << ::testing::PrintToString(HostPodRoutes());
  EXPECT_EQ(HostSysctl("net/ipv6/conf/" + veth + "/proxy_ndp"), "1");
  EXPECT_EQ(HostSysctl("net/ipv6/conf/" + veth + "/forwarding"), "1");
  EXPECT_EQ(HostSysctl("net/ipv6/conf/" + veth + "/accept_ra"), "0");
  EXPECT_EQ(pod.Sh("cat /proc/sys/net/ipv6/conf/eth0/accept_dad").out, "0\n");
  EXPECT_TRUE(host_->Ping(ip));
  EXPECT_TRUE(pod.Ping("fd00:250::1"));
  json check = conf;
  check["prevResult"] = r;
  auto c = Call("CHECK", &pod, "v6", check);
  EXPECT_EQ(c.exit_code, 0) << c.out << c.err;
  Del(&pod, "v6", conf);
  EXPECT_TRUE(HostLinks().empty());
  EXPECT_TRUE(Reserved().empty());
}

TEST_F(VethWorkloadNode, DualStackPodToPod) {
  const t::TempNetns& a = NewPod();
  const t::TempNetns& b = NewPod();
  json conf = Conf("1.1.0", kDualRange);
  json ra = Add(a, "dual-a", conf, "IgnoreUnknown=1;K8S_POD_NAMESPACE=default;K8S_POD_NAME=web-1");
  json rb = Add(b, "dual-b", conf);
  ASSERT_EQ(ResultIps(ra).size(), 2u);
  ASSERT_EQ(ResultIps(rb).size(), 2u);
  EXPECT_EQ(ra["interfaces"][0]["name"],
            HostVethName("cali", Identity{.pod_namespace = "default", .pod = "web-1", .ifname = "eth0"}));
  for (size_t i = 0; i < 2; ++i) {
    EXPECT_TRUE(a.Ping(Bare(ResultIps(rb)[i]))) << ResultIps(rb)[i];
    EXPECT_TRUE(b.Ping(Bare(ResultIps(ra)[i]))) << ResultIps(ra)[i];
    EXPECT_TRUE(host_->Ping(Bare(ResultIps(ra)[i])));
  }
  EXPECT_EQ(Records(),
            (std::vector<std::string>{"_cni/node1-cni-dual--b-eth0.json", "default/node1-k8s-web--1-eth0.json"}));
  EXPECT_EQ(AttachmentLinks().size(), 2u);
  Del(&a, "dual-a", conf, "IgnoreUnknown=1;K8S_POD_NAMESPACE=default;K8S_POD_NAME=web-1");
  Del(&b, "dual-b", conf);
  EXPECT_TRUE(HostLinks().empty());
  EXPECT_TRUE(HostPodRoutes().empty()) << ::testing::PrintToString(HostPodRoutes());
  EXPECT_TRUE(Reserved().empty());
  EXPECT_TRUE(Records().empty());
  EXPECT_TRUE(AttachmentLinks().empty()) << ::testing::PrintToString(AttachmentLinks());
}

TEST_F(VethWorkloadNode, CheckCatchesRemovedRouteAddressOrVeth) {
  json conf = Conf("1.0.0", kDualRange);
  struct Damage {
    std::string name;
    std::string pod_cmd;   // run in the pod
    std::string host_cmd;  // run in the host ("%v" = host veth)
    std::string needle;
  } damages[] = {
      {"route", "ip route del default", "", "0.0.0.0/0"},
      {"v6 route", "ip -6 route del default", "", "::/0"},
      {"address", "ip addr del %a/32 dev eth0", "", "lacks address"},
      {"host route", "", "ip route del %a/32", "host route"},
      {"sysctl", "", "sysctl -qw net.ipv4.conf.%v.proxy_arp=0", "proxy_arp"},
      {"veth", "", "ip link del %v", "does not exist"},
  };
  for (const auto& d : damages) {
    SCOPED_TRACE(d.name);
    const t::TempNetns& pod = NewPod();
    const std::string cid = "chk" + std::to_string(&d - damages);
    json r = Add(pod, cid, conf);
    ASSERT_FALSE(r.is_null());
    json check = conf;
    check["prevResult"] = r;
    auto ok = Call("CHECK", &pod, cid, check);
    EXPECT_EQ(ok.exit_code, 0) << ok.out << ok.err;
    auto subst = [&](std::string cmd) {
      for (auto [key, value] :
           {std::pair<std::string, std::string>{"%v", VethOf(cid)}, {"%a", Bare(ResultIps(r)[0])}}) {
        for (size_t p; (p = cmd.find(key)) != std::string::npos;) cmd.replace(p, key.size(), value);
      }
      return cmd;
    };
    if (!d.pod_cmd.empty()) {
      ASSERT_EQ(pod.Sh(subst(d.pod_cmd)).exit_code, 0);
    }
    if (!d.host_cmd.empty()) {
      ASSERT_EQ(host_->Sh(subst(d.host_cmd)).exit_code, 0);
    }
    auto bad = Call("CHECK", &pod, cid, check);
    EXPECT_NE(bad.exit_code, 0);
    EXPECT_NE(bad.out.find(d.needle), std::string::npos) << bad.out;
    Del(&pod, cid, conf);
  }
  EXPECT_TRUE(HostLinks().empty());
  EXPECT_TRUE(Reserved().empty());
}

TEST_F(VethWorkloadNode, DelWithoutNetnsReleasesEverything) {
  const t::TempNetns& pod = NewPod();
  json conf = Conf("1.1.0");
  ASSERT_FALSE(Add(pod, "nons", conf).is_null());
  ASSERT_EQ(Reserved().size(), 1u);
  Del(nullptr, "nons", conf);
  EXPECT_TRUE(Reserved().empty());
  EXPECT_TRUE(Records().empty());
  EXPECT_TRUE(AttachmentLinks().empty()) << ::testing::PrintToString(AttachmentLinks());
  EXPECT_TRUE(HostLinks().empty()) << "the record's host veth is deleted, and the pair with it";
  EXPECT_NE(pod.Sh("ip link show eth0").exit_code, 0);
}

TEST_F(VethWorkloadNode, DelIsIdempotent) {
  json conf = Conf("1.1.0");
  {
    const t::TempNetns& pod = NewPod();
    ASSERT_FALSE(Add(pod, "idem", conf).is_null());
    Del(&pod, "idem", conf);
    Del(&pod, "idem", conf);
    Del(nullptr, "idem", conf);
  }
  Del(nullptr, "never-added", conf);
  // A namespace that is gone counts as done.
  const t::TempNetns& pod = NewPod();
  ASSERT_FALSE(Add(pod, "gone", conf).is_null());
  std::string path = pod.path();
  pods_.clear();
  t::PluginCall call{.command = "DEL", .container_id = "gone", .netns = path, .host_ns = host_->name()};
  auto r = t::RunPlugin(t::Bin("veth-workload"), call, conf);
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_TRUE(Reserved().empty());
  EXPECT_TRUE(Records().empty());
  EXPECT_TRUE(AttachmentLinks().empty()) << ::testing::PrintToString(AttachmentLinks());
}

// A failed ADD leaves no link, route, record or IP reservation behind.
TEST_F(VethWorkloadNode, FailedAddLeavesNothing) {
  json conf = Conf("1.1.0");
  auto expect_nothing = [&](const t::TempNetns& pod) {
    EXPECT_TRUE(HostLinks().empty()) << ::testing::PrintToString(HostLinks());
    EXPECT_TRUE(HostPodRoutes().empty()) << ::testing::PrintToString(HostPodRoutes());
    EXPECT_TRUE(Reserved().empty());
    EXPECT_TRUE(Records().empty()) << ::testing::PrintToString(Records());
    EXPECT_TRUE(AttachmentLinks().empty()) << ::testing::PrintToString(AttachmentLinks());
    EXPECT_NE(pod.Sh("ip link show eth0").exit_code, 0);
  };
  {
    SCOPED_TRACE("host route on another interface");
    const t::TempNetns& pod = NewPod();
    ASSERT_EQ(host_->Sh("ip route add 10.77.0.50/32 dev up0").exit_code, 0);
    auto r = Call("ADD", &pod, "clash", conf, "IP=10.77.0.50");
    EXPECT_NE(r.exit_code, 0);
    EXPECT_NE(r.out.find("already exists for an interface other than"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("up0"), std::string::npos) << r.out;
    ASSERT_EQ(host_->Sh("ip route del 10.77.0.50/32 dev up0").exit_code, 0);
    expect_nothing(pod);
  }
  {
    SCOPED_TRACE("endpoint record cannot be written");
    const t::TempNetns& pod = NewPod();
    // A file where the record's folder goes (the failed ADDs above may have left the empty folder).
    ASSERT_EQ(t::Sh("mkdir -p " + (dir_ / "endpoints/vwnet") + " && rmdir " + (dir_ / "endpoints/vwnet/_cni") +
                    " 2>/dev/null; echo x > " + (dir_ / "endpoints/vwnet/_cni"))
                  .exit_code,
              0);
    auto r = Call("ADD", &pod, "norecord", conf);
    EXPECT_NE(r.exit_code, 0) << r.out;
    t::Sh("rm -f " + (dir_ / "endpoints/vwnet/_cni"));
    expect_nothing(pod);
  }
  {
    SCOPED_TRACE("interface name taken in the pod");
    const t::TempNetns& pod = NewPod();
    ASSERT_EQ(pod.Sh("ip link add eth0 type veth peer name other0").exit_code, 0);
    auto r = Call("ADD", &pod, "taken", conf);
    EXPECT_NE(r.exit_code, 0);
    EXPECT_EQ(r.Json()["code"], 4) << r.out;
    EXPECT_TRUE(Reserved().empty());
    EXPECT_TRUE(HostLinks().empty());
  }
  {
    SCOPED_TRACE("requested IP outside every range: IPAM fails");
    const t::TempNetns& pod = NewPod();
    auto r = Call("ADD", &pod, "badip", conf, "IP=10.99.0.5");
    EXPECT_NE(r.exit_code, 0);
    expect_nothing(pod);
  }
  {
    SCOPED_TRACE("invalid config: nothing is even tried");
    const t::TempNetns& pod = NewPod();
    json bad = conf;
    bad["mtu"] = "big";
    auto r = Call("ADD", &pod, "badconf", bad);
    EXPECT_EQ(r.Json()["code"], 7) << r.out;
    EXPECT_NE(r.out.find("mtu"), std::string::npos);
    expect_nothing(pod);
  }
}

// Issue 17, case 2: a veth-workload killed (SIGKILL) while its endpoint record is drafted leaves the
// draft's temporary file <name>.json.tmp-XXXX. The kill is made certain: an IPAM that waits until the
// draft exists and then kills its parent, the plugin. DEL of that attachment, and GC, remove the leftover.
TEST_F(VethWorkloadNode, DelAndGcRemoveTheDraftOfAKilledAdd) {
  t::TempDir plugins;
  const std::string drafts = dir_ / "endpoints/vwnet/_cni";
  {
    std::ofstream f(plugins / "kill-ipam");
    f << "#!/bin/sh\n"
         "[ \"$CNI_COMMAND\" = ADD ] || exec "
      << t::Bin("host-local")
      << "\n"
         "i=0\n"
         "while [ $i -lt 1000 ] && ! ls "
      << drafts
      << "/*.json.tmp-* >/dev/null 2>&1; do sleep 0.005; i=$((i+1)); done\n"
         "kill -KILL $PPID\n"
         "exit 1\n";
  }
  std::filesystem::permissions(plugins / "kill-ipam", std::filesystem::perms::owner_all);
  json killing = Conf("1.1.0");
  killing["ipam"]["type"] = "kill-ipam";
  const std::string cni_path = plugins.path() + ":" + t::BinDir();
  for (int i = 0; i < 6; ++i) {
    const bool by_gc = i % 2 == 1;
    SCOPED_TRACE(by_gc ? "GC" : "DEL");
    const t::TempNetns& pod = NewPod();
    const std::string cid = "killed" + std::to_string(i);
    auto add = Call("ADD", &pod, cid, killing, "", "eth0", cni_path);
    ASSERT_NE(add.exit_code, 0) << add.out << add.err;
    // The kill came with the draft in place: the test is not vacuous.
    ASSERT_EQ(Records().size(), 1u) << ::testing::PrintToString(Records());
    EXPECT_NE(Records()[0].find(".json.tmp-"), std::string::npos) << Records()[0];
    if (by_gc) {
      json gc = Conf("1.1.0");
      gc["cni.dev/valid-attachments"] = json::array();
      auto r = Call("GC", nullptr, "", gc);
      EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
      EXPECT_TRUE(Records().empty()) << ::testing::PrintToString(Records());
    }
    Del(&pod, cid, Conf("1.1.0"));
    EXPECT_TRUE(Records().empty()) << ::testing::PrintToString(Records());
    EXPECT_TRUE(HostLinks().empty()) << ::testing::PrintToString(HostLinks());
    EXPECT_TRUE(Reserved().empty());
  }
}

TEST_F(VethWorkloadNode, StaleHostVethIsReplaced) {
  const t::TempNetns& pod = NewPod();
  const std::string veth = VethOf("stale");
  ASSERT_EQ(host_->Sh("ip link add " + veth + " type veth peer name leftover0").exit_code, 0);
  json conf = Conf("1.1.0");
  json r = Add(pod, "stale", conf);
  ASSERT_FALSE(r.is_null());
  EXPECT_NE(host_->Sh("ip link show leftover0").exit_code, 0) << "the stale pair is gone";
  EXPECT_TRUE(host_->Ping(Bare(ResultIps(r)[0])));
  Del(&pod, "stale", conf);
  EXPECT_TRUE(HostLinks().empty());
}

TEST_F(VethWorkloadNode, IpAddrsNoIpam) {
  const t::TempNetns& pod = NewPod();
  json conf = Conf("1.1.0");
  conf["featureControl"] = {{"ipAddrsNoIpam", true}};
  conf["args"] = {{"cni", {{"ipAddrsNoIpam", {"10.88.0.9"}}}}};
  json r = Add(pod, "noipam", conf);
  ASSERT_FALSE(r.is_null());
  EXPECT_EQ(ResultIps(r), std::vector<std::string>{"10.88.0.9/32"});
  EXPECT_TRUE(Reserved().empty());
  EXPECT_TRUE(host_->Ping("10.88.0.9"));
  json check = conf;
  check["prevResult"] = r;
  auto c = Call("CHECK", &pod, "noipam", check);
  EXPECT_EQ(c.exit_code, 0) << c.out << c.err;
  Del(&pod, "noipam", conf);
  EXPECT_TRUE(HostLinks().empty());
  // Without the feature flag the same request is a config error.
  conf.erase("featureControl");
  auto bad = Call("ADD", &pod, "noipam2", conf);
  EXPECT_EQ(bad.Json()["code"], 7) << bad.out;
}

TEST_F(VethWorkloadNode, MacMtuAndQueues) {
  const t::TempNetns& pod = NewPod();
  json conf = Conf("1.1.0");
  conf["mtu"] = 1400;
  conf["numQueues"] = 2;
  conf["runtimeConfig"] = {{"mac", "0a:12:34:56:78:9a"}};
  json r = Add(pod, "mac", conf);
  ASSERT_FALSE(r.is_null());
  EXPECT_EQ(r["interfaces"][1]["mac"], "0a:12:34:56:78:9a");
  auto link = pod.IpJson("-d link show eth0");
  ASSERT_EQ(link.size(), 1u);
  EXPECT_EQ(link[0]["address"], "0a:12:34:56:78:9a");
  EXPECT_EQ(link[0]["mtu"], 1400);
  EXPECT_EQ(link[0]["num_tx_queues"], 2);
  EXPECT_EQ(host_->IpJson("link show " + VethOf("mac"))[0]["mtu"], 1400);
  json check = conf;
  check["prevResult"] = r;
  EXPECT_EQ(Call("CHECK", &pod, "mac", check).exit_code, 0);
  Del(&pod, "mac", conf);
}

TEST_F(VethWorkloadNode, SecondInterfaceOfAPod) {
  const t::TempNetns& pod = NewPod();
  json conf = Conf("1.1.0");
  json conf2 = Conf("1.1.0", R"([[{"subnet":"10.78.0.0/24"}]])", "vwnet2");
  conf2["ipam"]["routes"] = json::parse(R"([{"dst":"10.99.0.0/16"}])");
  json r1 = Add(pod, "multi", conf);
  json r2 = Add(pod, "multi", conf2, "", "net1");
  ASSERT_FALSE(r1.is_null());
  ASSERT_FALSE(r2.is_null());
  EXPECT_NE(r1["interfaces"][0]["name"], r2["interfaces"][0]["name"]);
  EXPECT_TRUE(Has(PodRoutes(pod, "-4"), "10.99.0.0/16 via 169.254.1.1 dev net1"))
      << ::testing::PrintToString(PodRoutes(pod, "-4"));
  EXPECT_TRUE(host_->Ping(Bare(ResultIps(r2)[0])));
  for (auto [c, r, ifname] : {std::tuple{conf, r1, "eth0"}, std::tuple{conf2, r2, "net1"}}) {
    json check = c;
    check["prevResult"] = r;
    auto res = Call("CHECK", &pod, "multi", check, "", ifname);
    EXPECT_EQ(res.exit_code, 0) << ifname << ": " << res.out << res.err;
  }
  Del(&pod, "multi", conf2, "", "net1");
  Del(&pod, "multi", conf);
  EXPECT_TRUE(HostLinks().empty());
  EXPECT_TRUE(Reserved("vwnet2").empty());
}

TEST_F(VethWorkloadNode, GcAndStatus) {
  json conf = Conf("1.1.0");
  auto st = Call("STATUS", nullptr, "", conf);
  EXPECT_EQ(st.exit_code, 0) << st.out << st.err;
  const t::TempNetns& a = NewPod();
  const t::TempNetns& b = NewPod();
  json ra = Add(a, "gc-keep", conf);
  json rb = Add(b, "gc-stale", conf);
  ASSERT_EQ(Records().size(), 2u);
  json gc = conf;
  gc["cni.dev/valid-attachments"] = json::parse(R"([{"containerID":"gc-keep","ifname":"eth0"}])");
  auto r = Call("GC", nullptr, "", gc);
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(Records(), std::vector<std::string>{"_cni/node1-cni-gc--keep-eth0.json"});
  EXPECT_EQ(AttachmentLinks(), std::vector<std::string>{"gc-keep:eth0"});
  EXPECT_EQ(Reserved(), std::vector<std::string>{Bare(ResultIps(ra)[0])});
  Del(&a, "gc-keep", conf);
  Del(&b, "gc-stale", conf);
  EXPECT_TRUE(Reserved().empty());
  EXPECT_TRUE(HostLinks().empty());
}

// The reference host-local (spec <= 1.0.0) works as the IPAM too.
TEST_F(VethWorkloadNode, ReferenceHostLocalAsIpam) {
  if (!t::HaveReference()) GTEST_SKIP() << "no reference plugins";
  const t::TempNetns& pod = NewPod();
  json conf = Conf("1.0.0", kDualRange);
  auto r = Call("ADD", &pod, "ref", conf, "", "eth0", t::RefDir());
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  json result = r.Json();
  ASSERT_EQ(ResultIps(result).size(), 2u);
  EXPECT_TRUE(host_->Ping(Bare(ResultIps(result)[0])));
  EXPECT_EQ(Reserved().size(), 2u);
  json check = conf;
  check["prevResult"] = result;
  EXPECT_EQ(Call("CHECK", &pod, "ref", check, "", "eth0", t::RefDir()).exit_code, 0);
  auto d = Call("DEL", &pod, "ref", conf, "", "eth0", t::RefDir());
  EXPECT_EQ(d.exit_code, 0) << d.out << d.err;
  EXPECT_TRUE(Reserved().empty());
  EXPECT_TRUE(HostLinks().empty());
}

}  // namespace
}  // namespace netiface::veth_workload::test
