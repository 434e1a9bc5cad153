#include "netiface/agent/flags.h"

#include <sstream>

#include <gtest/gtest.h>

namespace netiface::agent {
namespace {

Command Parse(std::vector<std::string> args, std::map<std::string, std::string> env = {}) {
  args.insert(args.begin(), "netiface-agent");
  std::ostringstream out, err;
  return ParseCommandLine(args, env, out, err);
}

TEST(AgentFlags, FlanneldDefaults) {
  Command c = Parse({});
  ASSERT_EQ(c.kind, Command::kRun);
  EXPECT_EQ(c.options.etcd.endpoints, (std::vector<std::string>{"http://127.0.0.1:4001", "http://127.0.0.1:2379"}));
  EXPECT_EQ(c.options.prefix, "/coreos.com/network");
  EXPECT_EQ(c.options.subnet_file, "/run/flannel/subnet.env");
  EXPECT_FALSE(c.options.ip_masq);
  EXPECT_TRUE(c.options.forward_rules);
  EXPECT_EQ(c.options.renew_margin_s, 3600);
  EXPECT_EQ(c.options.lease_ttl_s, 86400);
  EXPECT_EQ(c.options.reconcile_interval_s, 10);
  EXPECT_EQ(c.options.route_protocol, 78);
}

TEST(AgentFlags, FlanneldSpellingsAndEnvironment) {
  Command c = Parse({"-etcd-endpoints=https://10.0.0.1:2379,https://10.0.0.2:2379", "-iface", "eth1", "--ip-masq",
                     "--iptables-forward-rules=false", "-subnet-lease-renew-margin=30", "--etcd-prefix=/x/net/"},
                    {{"FLANNELD_SUBNET_FILE", "/tmp/s.env"}, {"FLANNELD_ETCD_ENDPOINTS", "http://ignored:1"}});
  ASSERT_EQ(c.kind, Command::kRun);
  EXPECT_EQ(c.options.etcd.endpoints, (std::vector<std::string>{"https://10.0.0.1:2379", "https://10.0.0.2:2379"}));
  EXPECT_EQ(c.options.uplink.ifaces, (std::vector<std::string>{"eth1"}));
  EXPECT_TRUE(c.options.ip_masq);
  EXPECT_FALSE(c.options.forward_rules);
  EXPECT_EQ(c.options.renew_margin_s, 30 * 60);
  EXPECT_EQ(c.options.prefix, "/x/net");
  EXPECT_EQ(c.options.subnet_file, "/tmp/s.env");  // from FLANNELD_SUBNET_FILE
  // A later flag wins, as with Go's flag package; --iface accumulates.
  c = Parse({"--etcd-prefix=/a", "--etcd-prefix=/b", "--iface=eth0", "--iface=192.0.2.3", "--ip-masq", "--ip-masq"});
  ASSERT_EQ(c.kind, Command::kRun);
  EXPECT_EQ(c.options.prefix, "/b");
  EXPECT_EQ(c.options.uplink.ifaces, (std::vector<std::string>{"eth0", "192.0.2.3"}));
  c = Parse({"--subnet-lease-renew-margin=5"}, {{"FLANNELD_IP_MASQ", "true"},
                                                {"FLANNELD_PUBLIC_IP", "192.0.2.7"},
                                                {"FLANNELD_IPTABLES_RESYNC", "9"},
                                                {"FLANNELD_SUBNET_LEASE_RENEW_MARGIN", "30"},
                                                {"FLANNELD_IFACE", "eth3"}});
  ASSERT_EQ(c.kind, Command::kRun);
  EXPECT_EQ(c.options.rules_resync_s, 9);
  EXPECT_EQ(c.options.renew_margin_s, 5 * 60);  // the command line wins over the environment
  EXPECT_EQ(c.options.uplink.ifaces, (std::vector<std::string>{"eth3"}));
  EXPECT_TRUE(c.options.ip_masq);
  ASSERT_TRUE(c.options.uplink.public_ip);
  EXPECT_EQ(c.options.uplink.public_ip->ToString(), "192.0.2.7");
}

TEST(AgentFlags, UsageErrors) {
  for (const auto& args : std::vector<std::vector<std::string>>{{"--public-ip=fd00::1"},
                                                                {"--public-ip=nope"},
                                                                {"--subnet-lease-renew-margin=0"},
                                                                {"--subnet-lease-renew-margin=1440"},
                                                                {"--etcd-prefix=relative"},
                                                                {"--etcd-endpoints="},
                                                                {"--kube-subnet-mgr"},
                                                                {"--no-such-flag"}}) {
    Command c = Parse(args);
    EXPECT_EQ(c.kind, Command::kExit) << args[0];
    EXPECT_EQ(c.exit_code, 2) << args[0];
  }
  Command v = Parse({"--version"});
  EXPECT_EQ(v.kind, Command::kExit);
  EXPECT_EQ(v.exit_code, 0);
  EXPECT_EQ(Parse({"cleanup"}).kind, Command::kCleanup);
}

TEST(AgentFlags, NormalizeGoFlags) {
  EXPECT_EQ(NormalizeGoFlags({"a", "-etcd-prefix=/x", "-h", "--iface", "-v", "-ip-masq"}),
            (std::vector<std::string>{"a", "--etcd-prefix=/x", "-h", "--iface", "-v", "--ip-masq"}));
}

}  // namespace
}  // namespace netiface::agent
