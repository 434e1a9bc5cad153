// The tuning config (keys, precedence, refusals), sysctl keys as paths, the backup's file format and
// CHECK's comparison, as values.
#include "netiface/tuning/config.h"

#include <gtest/gtest.h>

#include "cni_helpers.h"
#include "netiface/cni/error.h"
#include "netiface/tuning/plan.h"

namespace netiface::tuning {
namespace {

Config Parse(const std::string& keys, const std::string& cni_args = "") {
  std::string conf = R"({"cniVersion":"1.0.0","name":"t","type":"tuning")";
  if (!keys.empty()) conf += "," + keys;
  return ParseConfig(cni::ParseNetConf(conf + "}"), cni_args, "eth0");
}

TEST(TuningConfig, ReadsEveryKey) {
  Config c = Parse(R"("sysctl":{"net.core.somaxconn":"500","net.ipv4.conf.IFNAME.arp_filter":"1"},)"
                   R"("mac":"C2:11:22:33:44:55","promisc":true,"mtu":9000,"allmulti":false,"txQLen":500,)"
                   R"("dataDir":"/tmp/tuning")");
  EXPECT_EQ(c.data_dir, "/tmp/tuning");
  EXPECT_EQ(c.sysctls, (std::vector<std::pair<std::string, std::string>>{{"net/core/somaxconn", "500"},
                                                                         {"net/ipv4/conf/eth0/arp_filter", "1"}}));
  EXPECT_EQ(c.mac, "c2:11:22:33:44:55");
  EXPECT_TRUE(c.promisc);
  EXPECT_EQ(c.mtu, 9000);
  EXPECT_EQ(c.allmulti, false);
  EXPECT_EQ(c.txqlen, 500u);
  EXPECT_TRUE(c.ChangesLink());
}

TEST(TuningConfig, DefaultsAreTheReferences) {
  Config c = Parse(R"("mtu":0,"promisc":false,"mac":"")");
  EXPECT_EQ(c.data_dir, "/run/cni/tuning");
  EXPECT_FALSE(c.ChangesLink());
  EXPECT_TRUE(c.sysctls.empty());
}

TEST(TuningConfig, MacPrecedenceIsConfigThenCniArgsThenRuntimeConfigThenArgs) {
  EXPECT_EQ(Parse(R"("mac":"c2:00:00:00:00:01")").mac, "c2:00:00:00:00:01");
  EXPECT_EQ(Parse(R"("mac":"c2:00:00:00:00:01")", "IgnoreUnknown=1;MAC=c2:00:00:00:00:02").mac, "c2:00:00:00:00:02");
  EXPECT_EQ(
      Parse(R"("mac":"c2:00:00:00:00:01","runtimeConfig":{"mac":"c2:00:00:00:00:03"})", "MAC=c2:00:00:00:00:02").mac,
      "c2:00:00:00:00:03");
  EXPECT_EQ(Parse(R"("runtimeConfig":{"mac":"c2:00:00:00:00:03"},"args":{"cni":{"mac":"c2:00:00:00:00:04"}})").mac,
            "c2:00:00:00:00:04");
}

TEST(TuningConfig, ArgsCniAddsSysctlsAndOverridesAttributes) {
  Config c = Parse(R"("sysctl":{"net.core.somaxconn":"500"},"mtu":1400,)"
                   R"("args":{"cni":{"sysctl":{"net.core.somaxconn":"600","net.ipv4.ip_forward":"1"},"mtu":1300,)"
                   R"("promisc":true}})");
  EXPECT_EQ(c.sysctls, (std::vector<std::pair<std::string, std::string>>{{"net/core/somaxconn", "600"},
                                                                         {"net/ipv4/ip_forward", "1"}}));
  EXPECT_EQ(c.mtu, 1300);
  EXPECT_TRUE(c.promisc);
}

TEST(TuningConfig, RefusesBadValuesBeforeAnything) {
  for (const char* keys : {
           R"("sysctl":{"kernel.hostname":"x"})",                                // outside net.
           R"("sysctl":{"net/../kernel/hostname":"x"})",                         // path traversal with '/'
           R"("sysctl":{"net.ipv4..ip_forward":"1"})",                           // empty part
           R"("sysctl":{"net/ipv4/./ip_forward":"1"})",                          // "."
           R"("sysctl":{"/net/ipv4/ip_forward":"1"})",                           // absolute
           R"("sysctl":{"net":"1"})",                                            // not a setting
           R"("sysctl":{"net.core.somaxconn":500})",                             // not a string
           R"("sysctl":{"net.core.somaxconn":"5\n6"})",                          // a second line
           R"("sysctl":["net.core.somaxconn"])",                                 // not an object
           R"("sysctl":{"net.ipv4.ip_forward":"1","net/ipv4/ip_forward":"0"})",  // one file, two keys
           R"("mac":"01:00:5e:00:00:01")",                                       // multicast
           R"("mac":"00:00:00:00:00:00")",
           R"("mac":"zz")",
           R"("runtimeConfig":{"mac":"c2:00:00:00:00:0"})",
           R"("mtu":67)",
           R"("mtu":65536)",
           R"("mtu":"1500")",
           R"("mtu":-1)",
           R"("mtu":1500.5)",
           R"("promisc":"yes")",
           R"("allmulti":1)",
           R"("txQLen":-1)",
           R"("txQLen":4294967296)",
           R"("dataDir":"relative/dir")",
           R"("args":{"cni":{"sysctl":{"vm.swappiness":"1"}}})",
       }) {
    SCOPED_TRACE(keys);
    EXPECT_EQ(testing::ThrownError([&] { Parse(keys); }).code(), cni::kInvalidConfig);
  }
  EXPECT_EQ(testing::ThrownError([&] { Parse("", "MAC=zz"); }).code(), cni::kInvalidConfig);
  EXPECT_EQ(testing::ThrownError([&] { Parse("", "NOPE=1"); }).code(), cni::kInvalidEnv);
}

TEST(TuningSysctlPath, DotsOrSlashesAndTheInterfaceName) {
  EXPECT_EQ(SysctlPath("net.ipv4.conf.IFNAME.arp_filter", "eth0"), "net/ipv4/conf/eth0/arp_filter");
  // An interface name with dots survives the dot form (substituted after the separators, as the reference).
  EXPECT_EQ(SysctlPath("net.ipv4.conf.IFNAME.rp_filter", "eth0.100"), "net/ipv4/conf/eth0.100/rp_filter");
  // The slash form keeps dots: sysctl(8)'s reading.
  EXPECT_EQ(SysctlPath("net/ipv4/conf/eth0.100/rp_filter", "eth0"), "net/ipv4/conf/eth0.100/rp_filter");
  EXPECT_EQ(SysctlPath("net/ipv6/conf/IFNAME/disable_ipv6", "net1"), "net/ipv6/conf/net1/disable_ipv6");
  EXPECT_EQ(testing::ThrownError([] { SysctlPath("net.ipv4.conf.IFNAME.x", ".."); }).code(), cni::kInvalidConfig);
  EXPECT_EQ(testing::ThrownError([] { SysctlPath("netx.core", "eth0"); }).code(), cni::kInvalidConfig);
}

TEST(TuningBackup, KeepsTheReferencesFileFormat) {
  Backup b{.mac = "0a:58:0a:00:00:02", .promisc = false, .mtu = 1500, .allmulti = true};
  // What the reference's json.MarshalIndent(config, "", " ") writes for the same values.
  EXPECT_EQ(BackupToJson(b),
            "{\n \"mac\": \"0a:58:0a:00:00:02\",\n \"promisc\": false,\n \"mtu\": 1500,\n"
            " \"allmulti\": true\n}");
  EXPECT_EQ(BackupToJson(Backup{}), "{}");
  b.txqlen = 1000;
  b.sysctls["net/core/somaxconn"] = "4096";
  EXPECT_EQ(BackupFromJson(BackupToJson(b)), b);
  EXPECT_EQ(BackupFromJson(R"({"mtu":0})"), Backup{});  // the reference's "not saved"
  for (const char* bad :
       {"", "[]", R"({"mac":1})", R"({"mtu":-5})", R"({"promisc":"x"})", R"({"sysctl":{"a":1}})", R"({"txQLen":-1})"}) {
    SCOPED_TRACE(bad);
    EXPECT_EQ(testing::ThrownError([&] { BackupFromJson(bad); }).code(), cni::kDecodeFailure);
  }
}

TEST(TuningBackup, SavesWhatChangesAndKeepsEarlierOriginals) {
  Config c = Parse(R"("sysctl":{"net.core.somaxconn":"500"},"mtu":9000,"promisc":true)");
  LinkState now{.mac = "0a:58:0a:00:00:02", .mtu = 1500, .promisc = false, .allmulti = true, .txqlen = 1000};
  Backup b = PlanBackup(c, now, {{"net/core/somaxconn", "4096"}}, std::nullopt);
  EXPECT_EQ(b, (Backup{.promisc = false, .mtu = 1500, .sysctls = {{"net/core/somaxconn", "4096"}}}));
  // A second ADD sees its own changes; the first backup's values stay the originals.
  LinkState tuned = now;
  tuned.mtu = 9000;
  tuned.promisc = true;
  EXPECT_EQ(PlanBackup(c, tuned, {{"net/core/somaxconn", "500"}}, b), b);
}

TEST(TuningCompare, ReportsEveryDifference) {
  Config c = Parse(R"("sysctl":{"net.core.somaxconn":"500","net.ipv4.ip_forward":"1"},"mac":"c2:00:00:00:00:01",)"
                   R"("mtu":9000,"allmulti":true,"txQLen":10)");
  LinkState ok{.mac = "c2:00:00:00:00:01", .mtu = 9000, .promisc = false, .allmulti = true, .txqlen = 10};
  std::map<std::string, std::optional<std::string>> sys = {{"net/core/somaxconn", "500"}, {"net/ipv4/ip_forward", "1"}};
  EXPECT_TRUE(Compare(c, ok, sys).empty());
  LinkState off{.mac = "c2:00:00:00:00:02", .mtu = 1500, .promisc = true, .allmulti = false, .txqlen = 1000};
  sys["net/core/somaxconn"] = "4096";
  sys["net/ipv4/ip_forward"] = std::nullopt;
  EXPECT_EQ(Compare(c, off, sys), (std::vector<std::string>{
                                      "sysctl net/core/somaxconn is 4096, configured 500",
                                      "sysctl net/ipv4/ip_forward does not exist",
                                      "MAC is c2:00:00:00:00:02, configured c2:00:00:00:00:01",
                                      "promiscuous mode is on, configured off",
                                      "MTU is 1500, configured 9000",
                                      "all-multicast mode is off, configured on",
                                      "txqueuelen is 1000, configured 10",
                                  }));
}

}  // namespace
}  // namespace netiface::tuning
