#include "netiface/cni/config.h"

#include <gtest/gtest.h>

#include "netiface/cni/error.h"
#include "testutil.h"

namespace netiface::cni {
namespace {

using nlohmann::json;

// The code of the Error that `f` throws, or -1 when it throws none.
template <typename F>
int CodeOf(F&& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.code();
  }
  return -1;
}

TEST(NetConfTest, ParsesWellKnownKeysAndKeepsTheRest) {
  NetConf c = ParseNetConf(R"({
    "cniVersion": "1.0.0", "name": "net1", "type": "bridge", "bridge": "br9",
    "ipam": {"type": "host-local", "subnet": "10.0.0.0/24"},
    "dns": {"nameservers": ["10.0.0.53"]},
    "runtimeConfig": {"portMappings": []}, "args": {"cni": {"ips": ["10.0.0.7"]}}
  })");
  EXPECT_EQ(c.cni_version, "1.0.0");
  EXPECT_EQ(c.name, "net1");
  EXPECT_EQ(c.type, "bridge");
  EXPECT_EQ(c.IpamType(), "host-local");
  EXPECT_EQ(c.ipam["subnet"], "10.0.0.0/24");
  ASSERT_TRUE(c.dns);
  EXPECT_EQ(c.dns->nameservers[0], "10.0.0.53");
  EXPECT_TRUE(c.runtime_config.contains("portMappings"));
  EXPECT_EQ(c.args["cni"]["ips"][0], "10.0.0.7");
  EXPECT_EQ(c.raw["bridge"], "br9");
  EXPECT_FALSE(c.prev_result);
  EXPECT_FALSE(c.valid_attachments);
}

TEST(NetConfTest, DefaultsForAbsentKeys) {
  NetConf c = ParseNetConf(R"({"name": "n", "type": "ptp"})");
  EXPECT_EQ(c.cni_version, "0.1.0");
  EXPECT_TRUE(c.ipam.is_null());
  EXPECT_EQ(c.IpamType(), "");
  EXPECT_FALSE(c.dns);
  EXPECT_EQ(c.runtime_config, json::object());
  EXPECT_EQ(c.args, json::object());
  EXPECT_EQ(ParseNetConf(R"({"name": "n", "cniVersion": ""})").cni_version, "0.1.0");
}

TEST(NetConfTest, ErrorCodes) {
  struct Case {
    const char* text;
    int code;
  } cases[] = {
      {"", kDecodeFailure},
      {"{", kDecodeFailure},
      {"[]", kDecodeFailure},
      {"\"x\"", kDecodeFailure},
      {R"({"name": "n"} trailing)", kDecodeFailure},
      {R"({"cniVersion": "0.5.0", "name": "n"})", kIncompatibleVersion},
      {R"({"cniVersion": "2.0.0", "name": "n"})", kIncompatibleVersion},
      {R"({"cniVersion": "1.0", "name": "n"})", kIncompatibleVersion},
      {R"({"cniVersion": 1, "name": "n"})", kInvalidConfig},
      {R"({"cniVersion": "1.0.0"})", kInvalidConfig},
      {R"({"cniVersion": "1.0.0", "name": ""})", kInvalidConfig},
      {R"({"cniVersion": "1.0.0", "name": "../x"})", kInvalidConfig},
      {R"({"cniVersion": "1.0.0", "name": "a/b"})", kInvalidConfig},
      {R"({"cniVersion": "1.0.0", "name": ".."})", kInvalidConfig},
      {R"({"cniVersion": "1.0.0", "name": 5})", kInvalidConfig},
      {R"({"cniVersion": "1.0.0", "name": "n", "type": 5})", kInvalidConfig},
      {R"({"cniVersion": "1.0.0", "name": "n", "ipam": "host-local"})", kInvalidConfig},
      {R"({"cniVersion": "1.0.0", "name": "n", "ipam": {"type": 1}})", kInvalidConfig},
      {R"({"cniVersion": "1.0.0", "name": "n", "dns": []})", kInvalidConfig},
      {R"({"cniVersion": "1.0.0", "name": "n", "dns": {"nameservers": "x"}})", kInvalidConfig},
      {R"({"cniVersion": "1.0.0", "name": "n", "runtimeConfig": []})", kInvalidConfig},
      {R"({"cniVersion": "1.0.0", "name": "n", "args": "x"})", kInvalidConfig},
      {R"({"cniVersion": "1.0.0", "name": "n", "prevResult": {"ips": "x"}})", kDecodeFailure},
      {R"({"cniVersion": "1.1.0", "name": "n", "cni.dev/valid-attachments": {}})", kInvalidConfig},
      {R"({"cniVersion": "1.1.0", "name": "n", "cni.dev/attachments": [5]})", kInvalidConfig},
      {R"({"cniVersion": "1.1.0", "name": "n", "cni.dev/attachments": [{"containerID": 5}]})", kInvalidConfig},
  };
  for (const auto& c : cases) {
    EXPECT_EQ(CodeOf([&] { ParseNetConf(c.text); }), c.code) << c.text;
  }
}

TEST(NetConfTest, PrevResultIsParsedAtTheConfVersion) {
  // A 0.2.0-shaped prevResult in a 0.2.0 conf, and a 0.4.0-shaped one in a 0.4.0 conf.
  NetConf old = ParseNetConf(R"({"cniVersion": "0.2.0", "name": "n",
      "prevResult": {"ip4": {"ip": "10.0.0.2/24", "routes": [{"dst": "0.0.0.0/0"}]}}})");
  ASSERT_TRUE(old.prev_result);
  EXPECT_EQ(old.prev_result->ips.at(0).address.ToString(), "10.0.0.2/24");
  EXPECT_EQ(old.prev_result->routes.size(), 1u);
  NetConf v04 = ParseNetConf(R"({"cniVersion": "0.4.0", "name": "n",
      "prevResult": {"cniVersion": "0.4.0", "interfaces": [{"name": "eth0"}],
                     "ips": [{"version": "4", "interface": 0, "address": "10.0.0.2/24"}]}})");
  ASSERT_TRUE(v04.prev_result);
  EXPECT_EQ(v04.prev_result->interfaces.at(0).name, "eth0");
  EXPECT_EQ(v04.prev_result->ips.at(0).interface, 0);
  // A 1.0.0 conf does not read a 0.2.0-shaped prevResult as IPs.
  NetConf mismatched = ParseNetConf(R"({"cniVersion": "1.0.0", "name": "n",
      "prevResult": {"ip4": {"ip": "10.0.0.2/24"}}})");
  EXPECT_TRUE(mismatched.prev_result->ips.empty());
}

TEST(NetConfTest, GcAttachmentsFromEitherKey) {
  NetConf c = ParseNetConf(R"({"cniVersion": "1.1.0", "name": "n",
      "cni.dev/valid-attachments": [{"containerID": "a", "ifname": "eth0"}, {"containerID": "b", "ifname": "net1"}]})");
  ASSERT_TRUE(c.valid_attachments);
  EXPECT_EQ(*c.valid_attachments, (std::vector<Attachment>{{"a", "eth0"}, {"b", "net1"}}));
  NetConf old = ParseNetConf(R"({"cniVersion": "1.1.0", "name": "n",
      "cni.dev/attachments": [{"containerID": "c", "ifname": "eth0"}]})");
  EXPECT_EQ(*old.valid_attachments, (std::vector<Attachment>{{"c", "eth0"}}));
  NetConf both = ParseNetConf(R"({"cniVersion": "1.1.0", "name": "n",
      "cni.dev/attachments": [{"containerID": "old", "ifname": "eth0"}],
      "cni.dev/valid-attachments": [{"containerID": "new", "ifname": "eth0"}]})");
  EXPECT_EQ(both.valid_attachments->at(0).container_id, "new");
  NetConf empty = ParseNetConf(R"({"cniVersion": "1.1.0", "name": "n", "cni.dev/valid-attachments": []})");
  ASSERT_TRUE(empty.valid_attachments);  // an empty list is meaningful: nothing is valid
  EXPECT_TRUE(empty.valid_attachments->empty());
}

TEST(NameTest, IsValidName) {
  for (const char* ok : {"a", "net1", "My_net.v2-x", "0abc", "a..b"}) EXPECT_TRUE(IsValidName(ok)) << ok;
  for (const char* bad : {"", ".", "..", "../x", "-a", "_a", ".a", "a/b", "a b", "a:b", "a\n", "n\xc3\xa9t", "a$"}) {
    EXPECT_FALSE(IsValidName(bad)) << bad;
  }
}

TEST(NetConfListTest, PicksHighestSupportedVersion) {
  auto parse = [](const char* versions) {
    return ParseNetConfList(std::string(R"({"name": "n", "plugins": [{"type": "x"}], )") + versions + "}");
  };
  EXPECT_EQ(parse(R"("cniVersion": "0.4.0")").cni_version, "0.4.0");
  EXPECT_EQ(parse(R"("cniVersion": "0.4.0", "cniVersions": ["1.0.0", "0.3.1"])").cni_version, "1.0.0");
  EXPECT_EQ(parse(R"("cniVersion": "1.1.0", "cniVersions": ["1.0.0"])").cni_version, "1.1.0");
  EXPECT_EQ(parse(R"("cniVersions": ["1.0.0", "1.1.0", "1.2.0", "9.0.0"])").cni_version, "1.1.0");
  EXPECT_EQ(parse(R"("cniVersions": [])").cni_version, "0.1.0");
  EXPECT_EQ(parse(R"("disableCheck": false)").cni_version, "0.1.0");
  EXPECT_EQ(CodeOf([&] { parse(R"("cniVersion": "2.0.0")"); }), kIncompatibleVersion);
  EXPECT_EQ(CodeOf([&] { parse(R"("cniVersions": ["1.2.0"])"); }), kIncompatibleVersion);
  EXPECT_EQ(CodeOf([&] { parse(R"("cniVersions": ["x"])"); }), kInvalidConfig);
  EXPECT_EQ(CodeOf([&] { parse(R"("cniVersions": [1])"); }), kInvalidConfig);
  EXPECT_EQ(CodeOf([&] { parse(R"("cniVersions": "1.0.0")"); }), kInvalidConfig);
  EXPECT_EQ(CodeOf([&] { parse(R"("cniVersion": 1)"); }), kInvalidConfig);
}

TEST(NetConfListTest, FlagsAndPlugins) {
  NetConfList l = ParseNetConfList(R"({"cniVersion": "1.1.0", "name": "net", "disableCheck": true,
      "disableGC": "TRUE", "plugins": [{"type": "bridge", "k": 1}, {"type": "portmap"}]})");
  EXPECT_EQ(l.name, "net");
  EXPECT_TRUE(l.disable_check);
  EXPECT_TRUE(l.disable_gc);
  ASSERT_EQ(l.plugins.size(), 2u);
  EXPECT_EQ(l.plugins[0]["k"], 1);
  EXPECT_EQ(l.plugins[1]["type"], "portmap");
  EXPECT_EQ(l.raw["name"], "net");
  NetConfList d = ParseNetConfList(R"({"name": "n", "disableCheck": "false", "plugins": [{"type": "x"}]})");
  EXPECT_FALSE(d.disable_check);
  EXPECT_FALSE(d.disable_gc);
}

TEST(NetConfListTest, SingleConfBecomesAListOfOne) {
  NetConfList l = ParseNetConfList(R"({"cniVersion": "0.3.1", "name": "single", "type": "ptp", "mtu": 1400})");
  EXPECT_EQ(l.name, "single");
  EXPECT_EQ(l.cni_version, "0.3.1");
  ASSERT_EQ(l.plugins.size(), 1u);
  EXPECT_EQ(l.plugins[0]["type"], "ptp");
  EXPECT_EQ(l.plugins[0]["mtu"], 1400);
}

TEST(NetConfListTest, RuleViolations) {
  struct Case {
    const char* text;
    int code;
  } cases[] = {
      {"not json", kDecodeFailure},
      {"[]", kDecodeFailure},
      {R"({"plugins": [{"type": "x"}]})", kInvalidConfig},
      {R"({"name": "", "plugins": [{"type": "x"}]})", kInvalidConfig},
      {R"({"name": "../etc", "plugins": [{"type": "x"}]})", kInvalidConfig},
      {R"({"name": "n"})", kInvalidConfig},
      {R"({"name": "n", "plugins": []})", kInvalidConfig},
      {R"({"name": "n", "plugins": {}})", kInvalidConfig},
      {R"({"name": "n", "plugins": [{}]})", kInvalidConfig},
      {R"({"name": "n", "plugins": [{"type": ""}]})", kInvalidConfig},
      {R"({"name": "n", "plugins": [{"type": 3}]})", kInvalidConfig},
      {R"({"name": "n", "plugins": ["bridge"]})", kInvalidConfig},
      {R"({"name": "n", "disableCheck": "maybe", "plugins": [{"type": "x"}]})", kInvalidConfig},
      {R"({"name": "n", "disableGC": 1, "plugins": [{"type": "x"}]})", kInvalidConfig},
  };
  for (const auto& c : cases) {
    EXPECT_EQ(CodeOf([&] { ParseNetConfList(c.text); }), c.code) << c.text;
  }
}

TEST(CniArgsTest, KnownKeys) {
  CniArgs a = CniArgs::Parse("IP=10.0.0.5;MAC=0a:00:00:00:00:01", {"IP", "MAC"});
  EXPECT_EQ(a.Get("IP"), "10.0.0.5");
  EXPECT_EQ(a.Get("MAC"), "0a:00:00:00:00:01");
  EXPECT_FALSE(a.Get("OTHER"));
  EXPECT_FALSE(CniArgs::Parse("", {"IP"}).Get("IP"));
  EXPECT_EQ(CniArgs::Parse("IP=", {"IP"}).Get("IP"), "");
  EXPECT_EQ(CniArgs::Parse("IP=1.1.1.1;IP=2.2.2.2", {"IP"}).Get("IP"), "2.2.2.2");
}

TEST(CniArgsTest, UnknownKeysNeedIgnoreUnknown) {
  EXPECT_EQ(CodeOf([] { CniArgs::Parse("K8S_POD_NAME=p", {"IP"}); }), kInvalidEnv);
  for (const char* ignore : {"IgnoreUnknown=1", "IgnoreUnknown=true", "IgnoreUnknown=TRUE"}) {
    std::string s = std::string(ignore) + ";K8S_POD_NAME=p;IP=10.0.0.1";
    CniArgs a = CniArgs::Parse(s, {"IP"});
    EXPECT_EQ(a.Get("IP"), "10.0.0.1") << s;
    EXPECT_EQ(a.Get("K8S_POD_NAME"), "p") << s;
  }
  EXPECT_EQ(CodeOf([] { CniArgs::Parse("K8S_POD_NAME=p;IgnoreUnknown=1", {}); }), -1);  // order does not matter
  EXPECT_EQ(CodeOf([] { CniArgs::Parse("IgnoreUnknown=0;X=1", {}); }), kInvalidEnv);
  EXPECT_EQ(CodeOf([] { CniArgs::Parse("IgnoreUnknown=false", {}); }), -1);
  EXPECT_EQ(CodeOf([] { CniArgs::Parse("IgnoreUnknown=yes", {}); }), kInvalidEnv);
}

TEST(CniArgsTest, MalformedPairs) {
  for (const char* bad : {"IP", "IP=1;", ";IP=1", "IP=1;;MAC=2", "=1", "IP=1=2", "IgnoreUnknown=1;junk"}) {
    EXPECT_EQ(CodeOf([&] { CniArgs::Parse(bad, {"IP", "MAC"}); }), kInvalidEnv) << bad;
  }
}

}  // namespace
}  // namespace netiface::cni
