// host-local's verbs called in-process against a temp data dir (no root, no exec).
#include "netiface/host_local/host_local.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "cni_helpers.h"
#include "netiface/cni/error.h"
#include "testutil.h"

namespace netiface::host_local {
namespace {

using nlohmann::json;
using ::testing::HasSubstr;

class HostLocalTest : public ::testing::Test {
 protected:
  json Conf(json ipam, const std::string& version = "1.1.0") const {
    ipam["type"] = "host-local";
    ipam["dataDir"] = tmp_.path();
    return {{"cniVersion", version}, {"name", "net1"}, {"type", "host-local"}, {"ipam", ipam}};
  }
  json Simple(const std::string& subnet = "10.0.0.0/24", const std::string& version = "1.1.0") const {
    return Conf({{"subnet", subnet}}, version);
  }
  cni::CmdArgs Args(const std::string& command, const json& conf, const std::string& cid = "ctr1",
                    const std::string& ifname = "eth0", const std::string& cni_args = "") const {
    return testing::MakeCmdArgs(conf, {.command = command,
                                       .container_id = cid,
                                       .netns = "/var/run/netns/whatever",
                                       .ifname = ifname,
                                       .cni_args = cni_args,
                                       .path = "/nonexistent"});
  }
  cni::Result AddOk(const json& conf, const std::string& cid = "ctr1", const std::string& ifname = "eth0",
                    const std::string& cni_args = "") {
    return Add(Args("ADD", conf, cid, ifname, cni_args));
  }
  template <typename F>
  cni::Error ErrorOf(F f) {
    return testing::ThrownError(f);
  }
  std::vector<std::string> Files() const { return testing::ListDir(tmp_ / "net1"); }
  std::string Read(const std::string& name) const { return testing::ReadFile(tmp_ / ("net1/" + name)); }

  testing::TempDir tmp_;
};

TEST_F(HostLocalTest, AddResultInEveryVersion) {
  for (const auto& v : testing::AllVersions()) {
    testing::TempDir fresh;
    json conf = Simple("10.0.0.0/24", v);
    conf["ipam"]["dataDir"] = fresh.path();
    conf["ipam"]["routes"] = json::array({{{"dst", "0.0.0.0/0"}}});
    cni::Result r = AddOk(conf);
    ASSERT_EQ(r.ips.size(), 1u) << v;
    EXPECT_EQ(r.ips[0].address.ToString(), "10.0.0.2/24");
    EXPECT_EQ(r.ips[0].gateway, cni::IpAddr::Parse("10.0.0.1"));
    EXPECT_FALSE(r.ips[0].interface);
    EXPECT_TRUE(r.interfaces.empty());
    json j = cni::ResultToJson(r, v);
    if (v == "0.1.0" || v == "0.2.0") {
      EXPECT_EQ(j["ip4"]["ip"], "10.0.0.2/24") << j.dump();
      EXPECT_EQ(j["ip4"]["gateway"], "10.0.0.1");
      EXPECT_EQ(j["ip4"]["routes"][0]["dst"], "0.0.0.0/0");
    } else {
      EXPECT_EQ(j["ips"][0]["address"], "10.0.0.2/24") << j.dump();
      EXPECT_EQ(j["ips"][0].contains("version"), v < "1.0.0") << j.dump();
      EXPECT_EQ(j["routes"][0]["dst"], "0.0.0.0/0");
    }
    EXPECT_EQ(testing::ReadFile(fresh / "net1/10.0.0.2"), "ctr1\r\neth0");
  }
}

TEST_F(HostLocalTest, RoundRobinDoesNotReuseAFreedAddressAtOnce) {
  json conf = Simple("10.0.0.0/29");
  EXPECT_EQ(AddOk(conf, "a").ips[0].address.addr().ToString(), "10.0.0.2");
  EXPECT_EQ(AddOk(conf, "b").ips[0].address.addr().ToString(), "10.0.0.3");
  Del(Args("DEL", conf, "a"));
  EXPECT_EQ(AddOk(conf, "c").ips[0].address.addr().ToString(), "10.0.0.4");
  EXPECT_EQ(Read("last_reserved_ip.0"), "10.0.0.4");
  EXPECT_EQ(AddOk(conf, "d").ips[0].address.addr().ToString(), "10.0.0.5");
  EXPECT_EQ(AddOk(conf, "e").ips[0].address.addr().ToString(), "10.0.0.6");
  EXPECT_EQ(AddOk(conf, "f").ips[0].address.addr().ToString(), "10.0.0.2");  // wrapped, gateway skipped
  cni::Error e = ErrorOf([&] { AddOk(conf, "g"); });
  EXPECT_EQ(e.code(), cni::kTryAgainLater);
  EXPECT_THAT(e.msg(), HasSubstr("no IP addresses available"));
}

TEST_F(HostLocalTest, DuplicateAttachmentIsAnError) {
  json conf = Simple();
  AddOk(conf);
  cni::Error e = ErrorOf([&] { AddOk(conf); });
  EXPECT_THAT(e.msg(), HasSubstr("duplicate allocation is not allowed"));
  EXPECT_EQ(AddOk(conf, "ctr1", "eth1").ips.size(), 1u);  // another interface of the same container is fine
}

TEST_F(HostLocalTest, DualStackAndRollbackOfAFailedAdd) {
  json conf = Conf(
      {{"ranges",
        json::array({json::array({{{"subnet", "10.0.0.0/24"}}}),
                     json::array({{{"subnet", "fd00::/120"}, {"rangeStart", "fd00::5"}, {"rangeEnd", "fd00::5"}}})})}});
  cni::Result r = AddOk(conf, "a");
  ASSERT_EQ(r.ips.size(), 2u);
  EXPECT_EQ(r.ips[1].address.ToString(), "fd00::5/120");
  // The v6 set is exhausted: the v4 address taken for "b" must be released again.
  cni::Error e = ErrorOf([&] { AddOk(conf, "b"); });
  EXPECT_THAT(e.msg(), HasSubstr("range 1"));
  EXPECT_EQ(Files(),
            (std::vector<std::string>{"10.0.0.2", "fd00::5", "last_reserved_ip.0", "last_reserved_ip.1", "lock"}));
}

TEST_F(HostLocalTest, RequestedAddresses) {
  json conf = Simple();
  EXPECT_EQ(AddOk(conf, "a", "eth0", "IP=10.0.0.77").ips[0].address.ToString(), "10.0.0.77/24");
  EXPECT_EQ(Read("last_reserved_ip.0"), "10.0.0.77");
  json with_args = conf;
  with_args["args"] = {{"cni", {{"ips", json::array({"10.0.0.88/24"})}}}};
  EXPECT_EQ(AddOk(with_args, "b").ips[0].address.ToString(), "10.0.0.88/24");
  json rt = conf;
  rt["runtimeConfig"] = {{"ips", json::array({"10.0.0.77"})}};
  cni::Error e = ErrorOf([&] { AddOk(rt, "c"); });
  EXPECT_THAT(e.msg(), HasSubstr("10.0.0.77"));
  EXPECT_THAT(e.msg(), HasSubstr("container a"));  // names the holder
  EXPECT_EQ(Read("10.0.0.77"), "a\r\neth0");
  EXPECT_EQ(ErrorOf([&] { AddOk(conf, "d", "eth0", "IP=10.0.0.1"); }).code(), cni::kInvalidConfig);  // gateway
  EXPECT_EQ(ErrorOf([&] { AddOk(conf, "d", "eth0", "IP=10.9.0.1"); }).code(), cni::kInvalidConfig);
}

TEST_F(HostLocalTest, UnsatisfiedRequestReleasesWhatWasTaken) {
  json conf =
      Conf({{"ranges",
             json::array({json::array({{{"subnet", "10.0.0.0/24"}}}), json::array({{{"subnet", "10.1.0.0/24"}}})})}});
  AddOk(conf, "a", "eth0", "IP=10.1.0.9");
  EXPECT_THROW(AddOk(conf, "b", "eth0", "IP=10.1.0.9"), cni::Error);
  for (const auto& f : Files()) {
    if (f.rfind("10.", 0) == 0) {
      EXPECT_EQ(Read(f), "a\r\neth0") << f;
    }
  }
}

TEST_F(HostLocalTest, ResolvConfAndRoutes) {
  testing::WriteFile(tmp_ / "resolv.conf", "nameserver 1.1.1.1\nsearch x.y\n");
  json conf = Conf({{"subnet", "10.0.0.0/24"},
                    {"resolvConf", tmp_ / "resolv.conf"},
                    {"routes", json::array({{{"dst", "10.9.0.0/16"}, {"gw", "10.0.0.254"}}})}});
  cni::Result r = AddOk(conf);
  EXPECT_EQ(r.dns.nameservers, std::vector<std::string>{"1.1.1.1"});
  EXPECT_EQ(r.dns.search, std::vector<std::string>{"x.y"});
  ASSERT_EQ(r.routes.size(), 1u);
  EXPECT_EQ(r.routes[0].gw, cni::IpAddr::Parse("10.0.0.254"));
  conf["ipam"]["resolvConf"] = tmp_ / "missing.conf";
  cni::Error e = ErrorOf([&] { AddOk(conf, "b"); });
  EXPECT_EQ(e.code(), cni::kInvalidConfig);
  EXPECT_THAT(e.msg(), HasSubstr("missing.conf"));
}

TEST_F(HostLocalTest, DelIsIdempotentAndNeedsNoValidRanges) {
  json conf = Simple();
  AddOk(conf, "a");
  AddOk(conf, "a", "eth1");
  json broken = conf;
  broken["ipam"]["subnet"] = "10.0.0.1/24";  // invalid now: DEL still releases
  Del(Args("DEL", broken, "a"));
  Del(Args("DEL", broken, "a"));
  EXPECT_EQ(Files(), (std::vector<std::string>{"10.0.0.3", "last_reserved_ip.0", "lock"}));
  json elsewhere = conf;
  elsewhere["ipam"]["dataDir"] = tmp_ / "never-created";
  Del(Args("DEL", elsewhere, "a"));
  EXPECT_FALSE(std::filesystem::exists(tmp_ / "never-created"));
}

TEST_F(HostLocalTest, CheckAgainstReservationAndPrevResult) {
  json conf = Simple();
  cni::Result r = AddOk(conf);
  Check(Args("CHECK", conf));
  json with_prev = conf;
  with_prev["prevResult"] = cni::ResultToJson(r, "1.1.0");
  Check(Args("CHECK", with_prev));
  json wrong = with_prev;
  wrong["prevResult"]["ips"][0]["address"] = "10.0.0.99/24";
  EXPECT_THAT(ErrorOf([&] { Check(Args("CHECK", wrong)); }).msg(), HasSubstr("10.0.0.99"));
  json foreign = with_prev;  // addresses outside our ranges are someone else's business
  foreign["prevResult"]["ips"].push_back({{"address", "192.168.1.5/24"}});
  Check(Args("CHECK", foreign));
  EXPECT_THROW(Check(Args("CHECK", conf, "ctr2")), cni::Error);
  Del(Args("DEL", conf));
  EXPECT_THROW(Check(Args("CHECK", with_prev)), cni::Error);
}

TEST_F(HostLocalTest, StatusReportsExhaustionAndUnusableDataDir) {
  json conf = Conf({{"subnet", "10.0.0.0/24"}, {"rangeStart", "10.0.0.10"}, {"rangeEnd", "10.0.0.11"}});
  Status(Args("STATUS", conf));
  AddOk(conf, "a");
  AddOk(conf, "b");
  cni::Error e = ErrorOf([&] { Status(Args("STATUS", conf)); });
  EXPECT_EQ(e.code(), cni::kNotAvailable);
  EXPECT_THAT(e.msg(), HasSubstr("range set 0"));
  Del(Args("DEL", conf, "a"));
  Status(Args("STATUS", conf));

  testing::WriteFile(tmp_ / "a-file", "x");
  json bad = conf;
  bad["ipam"]["dataDir"] = tmp_ / "a-file";
  e = ErrorOf([&] { Status(Args("STATUS", bad)); });
  EXPECT_EQ(e.code(), cni::kNotAvailable);
  EXPECT_THAT(e.msg(), HasSubstr("a-file"));
}

TEST_F(HostLocalTest, GcReleasesWhatNoValidAttachmentOwns) {
  json conf = Simple();
  AddOk(conf, "a");
  AddOk(conf, "b");
  AddOk(conf, "c", "net1");
  testing::WriteFile(tmp_ / "net1/10.0.0.50", "a");     // legacy, container a is valid
  testing::WriteFile(tmp_ / "net1/10.0.0.51", "gone");  // legacy, container gone
  testing::WriteFile(tmp_ / "net1/10.0.0.52", "");      // debris of a killed reference ADD
  json gc = conf;
  gc["cni.dev/valid-attachments"] =
      json::array({{{"containerID", "a"}, {"ifname", "eth0"}}, {{"containerID", "c"}, {"ifname", "net1"}}});
  Gc(Args("GC", gc));
  EXPECT_EQ(Files(), (std::vector<std::string>{"10.0.0.2", "10.0.0.4", "10.0.0.50", "last_reserved_ip.0", "lock"}));
  EXPECT_EQ(Read("last_reserved_ip.0"), "10.0.0.4");

  json old_key = conf;  // the key of the tagged 1.1.0 spec
  old_key["cni.dev/attachments"] = json::array({{{"containerID", "c"}, {"ifname", "net1"}}});
  Gc(Args("GC", old_key));
  EXPECT_EQ(Files(), (std::vector<std::string>{"10.0.0.4", "last_reserved_ip.0", "lock"}));

  json none = conf;
  none["cni.dev/valid-attachments"] = json::array();
  Gc(Args("GC", none));
  EXPECT_EQ(Files(), (std::vector<std::string>{"last_reserved_ip.0", "lock"}));
  EXPECT_EQ(ErrorOf([&] { Gc(Args("GC", conf)); }).code(), cni::kInvalidConfig);
  // The index agrees with the folder afterwards.
  EXPECT_EQ(AddOk(conf, "a").ips.size(), 1u);
}

}  // namespace
}  // namespace netiface::host_local
