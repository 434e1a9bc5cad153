#include "netiface/cni/result.h"

#include <gtest/gtest.h>

#include "netiface/cni/error.h"
#include "netiface/cni/version.h"
#include "testutil.h"

namespace netiface::cni {
namespace {

using nlohmann::json;

IpNet N(const char* s) { return *IpNet::Parse(s); }
IpAddr A(const char* s) { return *IpAddr::Parse(s); }

// Every field of every version is set, with more than one IP per family.
Result FullResult() {
  Result r;
  r.interfaces = {{"cni0", "0a:00:00:00:00:01", "", std::nullopt, "", ""},
                  {"veth1234", "0a:00:00:00:00:02", "", std::nullopt, "", ""},
                  {"eth0", "0a:00:00:00:00:03", "/run/netns/ctr", 1450, "/run/vhost.sock", "0000:04:00.5"}};
  r.ips = {{2, N("10.1.0.5/24"), A("10.1.0.1")},
           {2, N("10.2.0.5/24"), std::nullopt},
           {2, N("fd00::5/64"), A("fd00::1")},
           {std::nullopt, N("fd01::5/64"), std::nullopt}};
  Route def4{N("0.0.0.0/0"), std::nullopt};
  Route extra4{N("10.9.0.0/16"), A("10.1.0.254")};
  extra4.mtu = 1400;
  extra4.advmss = 1360;
  extra4.priority = 5;
  extra4.table = 100;
  extra4.scope = 0;
  Route def6{N("::/0"), A("fd00::1")};
  r.routes = {def4, def6, extra4};
  r.dns = {{"10.0.0.53", "fd00::53"}, "cluster.local", {"svc.cluster.local"}, {"ndots:5"}};
  return r;
}

// What a result keeps when it passes through `version` (the test's own model of the spec).
Result Project(Result r, const std::string& version) {
  if (CompareVersions(version, "1.1.0") < 0) {
    for (auto& i : r.interfaces) {
      i.mtu.reset();
      i.socket_path.clear();
      i.pci_id.clear();
    }
    for (auto& rt : r.routes) rt.mtu = rt.advmss = rt.priority = rt.table = rt.scope = std::nullopt;
  }
  if (CompareVersions(version, "0.3.0") < 0) {
    Result out;
    out.dns = r.dns;
    std::optional<IpConfig> v4, v6;
    for (const auto& ip : r.ips) {
      auto& slot = ip.address.addr().is_v4() ? v4 : v6;
      if (!slot) slot = IpConfig{std::nullopt, ip.address, ip.gateway};
    }
    for (auto* slot : {&v4, &v6}) {
      if (!*slot) continue;
      out.ips.push_back(**slot);
      for (const auto& rt : r.routes) {
        if (rt.dst.family() == (*slot)->address.family()) out.routes.push_back(rt);
      }
    }
    return out;
  }
  return r;
}

TEST(ResultTest, RoundTripOverEveryVersionPair) {
  const Result full = FullResult();
  for (const auto& from : testing::AllVersions()) {
    json j_from = ResultToJson(full, from);
    EXPECT_EQ(j_from["cniVersion"], from);
    Result at_from = ParseResult(j_from, from);
    ASSERT_EQ(at_from, Project(full, from)) << from;
    EXPECT_EQ(ParseResult(j_from), at_from) << "own cniVersion, " << from;
    for (const auto& to : testing::AllVersions()) {
      SCOPED_TRACE(from + " -> " + to);
      json j_to = ResultToJson(at_from, to);
      EXPECT_EQ(j_to["cniVersion"], to);
      Result at_to = ParseResult(j_to, to);
      EXPECT_EQ(at_to, Project(Project(full, from), to));
      // Converting back to `from` loses nothing that `to` kept.
      EXPECT_EQ(ParseResult(ResultToJson(at_to, from), from), Project(at_to, from));
    }
  }
}

TEST(ResultTest, V02KeepsFirstIpPerFamilyAndAttachesRoutes) {
  json j = ResultToJson(FullResult(), "0.2.0");
  json want = R"({
    "cniVersion": "0.2.0",
    "ip4": {"ip": "10.1.0.5/24", "gateway": "10.1.0.1",
            "routes": [{"dst": "0.0.0.0/0"}, {"dst": "10.9.0.0/16", "gw": "10.1.0.254"}]},
    "ip6": {"ip": "fd00::5/64", "gateway": "fd00::1", "routes": [{"dst": "::/0", "gw": "fd00::1"}]},
    "dns": {"nameservers": ["10.0.0.53", "fd00::53"], "domain": "cluster.local",
            "search": ["svc.cluster.local"], "options": ["ndots:5"]}
  })"_json;
  EXPECT_EQ(j, want);
  EXPECT_EQ(ResultToJson(FullResult(), "0.1.0")["ip4"], want["ip4"]);
}

TEST(ResultTest, V02DropsRoutesOfAFamilyWithoutIp) {
  Result r;
  r.ips = {{std::nullopt, N("fd00::5/64"), std::nullopt}};
  r.routes = {{N("0.0.0.0/0"), A("10.0.0.1")}, {N("::/0"), std::nullopt}};
  json j = ResultToJson(r, "0.2.0");
  EXPECT_FALSE(j.contains("ip4"));
  EXPECT_EQ(j["ip6"], R"({"ip": "fd00::5/64", "routes": [{"dst": "::/0"}]})"_json);
  EXPECT_EQ(j["dns"], json::object());
}

TEST(ResultTest, V02WithoutIpCannotConvert) {
  Result r;
  r.interfaces = {{"eth0", "", "", std::nullopt, "", ""}};
  for (const char* v : {"0.1.0", "0.2.0"}) {
    try {
      ResultToJson(r, v);
      FAIL() << "no error for " << v;
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), kIncompatibleVersion);
      EXPECT_EQ(e.msg(), "cannot convert: no valid IP addresses");
    }
  }
  EXPECT_NO_THROW(ResultToJson(r, "0.3.0"));
}

// What validation consults (ResultNeedsAnAddress) is exactly what conversion enforces.
TEST(ResultTest, NeedsAnAddressIsWhatConversionRequires) {
  for (std::string_view v : kSupportedVersions) {
    SCOPED_TRACE(v);
    bool throws = false;
    try {
      ResultToJson(Result{}, v);
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), kIncompatibleVersion);
      throws = true;
    }
    EXPECT_EQ(ResultNeedsAnAddress(v), throws);
  }
}

TEST(ResultTest, V04HasIpVersionAndDrops11Fields) {
  json j = ResultToJson(FullResult(), "0.4.0");
  EXPECT_EQ(j["ips"][0], R"({"version": "4", "interface": 2, "address": "10.1.0.5/24", "gateway": "10.1.0.1"})"_json);
  EXPECT_EQ(j["ips"][2]["version"], "6");
  EXPECT_EQ(j["ips"][3], R"({"version": "6", "address": "fd01::5/64"})"_json);
  EXPECT_EQ(j["interfaces"][2], R"({"name": "eth0", "mac": "0a:00:00:00:00:03", "sandbox": "/run/netns/ctr"})"_json);
  EXPECT_EQ(j["interfaces"][0], R"({"name": "cni0", "mac": "0a:00:00:00:00:01"})"_json);
  EXPECT_EQ(j["routes"][2], R"({"dst": "10.9.0.0/16", "gw": "10.1.0.254"})"_json);
  EXPECT_EQ(ResultToJson(FullResult(), "0.3.0")["ips"], j["ips"]);
  EXPECT_EQ(ResultToJson(FullResult(), "0.3.1")["routes"], j["routes"]);
}

TEST(ResultTest, V10DropsIpVersionV11AddsFields) {
  json j10 = ResultToJson(FullResult(), "1.0.0");
  EXPECT_EQ(j10["ips"][0], R"({"interface": 2, "address": "10.1.0.5/24", "gateway": "10.1.0.1"})"_json);
  EXPECT_EQ(j10["interfaces"][2].size(), 3u);
  EXPECT_EQ(j10["routes"][2].size(), 2u);
  json j11 = ResultToJson(FullResult(), "1.1.0");
  EXPECT_EQ(j11["interfaces"][2], R"({"name": "eth0", "mac": "0a:00:00:00:00:03", "mtu": 1450,
      "sandbox": "/run/netns/ctr", "socketPath": "/run/vhost.sock", "pciID": "0000:04:00.5"})"_json);
  EXPECT_EQ(j11["routes"][2], R"({"dst": "10.9.0.0/16", "gw": "10.1.0.254", "mtu": 1400, "advmss": 1360,
      "priority": 5, "table": 100, "scope": 0})"_json);
  EXPECT_EQ(j11["ips"], j10["ips"]);
}

TEST(ResultTest, ParsesV02IntoCanonicalShape) {
  json j = R"({"cniVersion": "0.2.0",
    "ip4": {"ip": "10.0.0.2/24", "gateway": "10.0.0.1", "routes": [{"dst": "0.0.0.0/0"}]},
    "ip6": {"ip": "fd00::2/64", "routes": [{"dst": "::/0", "gw": "fd00::1"}]},
    "dns": {"nameservers": ["1.1.1.1"]}})"_json;
  Result r = ParseResult(j);
  ASSERT_EQ(r.ips.size(), 2u);
  EXPECT_FALSE(r.ips[0].interface);
  EXPECT_EQ(r.ips[0].address.ToString(), "10.0.0.2/24");
  EXPECT_EQ(r.ips[0].gateway->ToString(), "10.0.0.1");
  EXPECT_FALSE(r.ips[1].gateway);
  ASSERT_EQ(r.routes.size(), 2u);
  EXPECT_EQ(r.routes[0].dst.ToString(), "0.0.0.0/0");
  EXPECT_EQ(r.routes[1].gw->ToString(), "fd00::1");
  EXPECT_EQ(r.dns.nameservers, std::vector<std::string>{"1.1.1.1"});
  EXPECT_TRUE(r.interfaces.empty());
}

TEST(ResultTest, ParseIgnoresNewerFieldsAtOlderVersions) {
  json j = R"({"interfaces": [{"name": "eth0", "mtu": 9000, "pciID": "x"}],
               "routes": [{"dst": "10.0.0.0/8", "table": 5}]})"_json;
  Result r10 = ParseResult(j, "1.0.0");
  EXPECT_FALSE(r10.interfaces[0].mtu);
  EXPECT_EQ(r10.interfaces[0].pci_id, "");
  EXPECT_FALSE(r10.routes[0].table);
  Result r11 = ParseResult(j, "1.1.0");
  EXPECT_EQ(r11.interfaces[0].mtu, 9000);
  EXPECT_EQ(r11.routes[0].table, 5);
}

TEST(ResultTest, ParseTreatsNullAndEmptyAsAbsent) {
  json j = R"({"ips": [{"address": "10.0.0.2/24", "gateway": "", "interface": null}], "dns": null,
               "routes": null, "interfaces": null})"_json;
  Result r = ParseResult(j, "1.0.0");
  ASSERT_EQ(r.ips.size(), 1u);
  EXPECT_FALSE(r.ips[0].gateway);
  EXPECT_FALSE(r.ips[0].interface);
  EXPECT_TRUE(r.routes.empty());
  EXPECT_TRUE(r.dns.empty());
}

TEST(ResultTest, ParseRejectsWrongShapes) {
  const char* bad[] = {
      R"([])",
      R"("x")",
      R"({"ips": {}})",
      R"({"ips": [{"gateway": "10.0.0.1"}]})",
      R"({"ips": [{"address": "10.0.0.2"}]})",
      R"({"ips": [{"address": "10.0.0.300/24"}]})",
      R"({"ips": [{"address": "10.0.0.2/24", "gateway": "nope"}]})",
      R"({"ips": [{"address": "10.0.0.2/24", "interface": -1}]})",
      R"({"ips": [{"address": "10.0.0.2/24", "interface": "0"}]})",
      R"({"ips": [{"address": 5}]})",
      R"({"ips": ["10.0.0.2/24"]})",
      R"({"interfaces": [{"name": 7}]})",
      R"({"interfaces": ["eth0"]})",
      R"({"routes": [{"gw": "10.0.0.1"}]})",
      R"({"routes": [{"dst": "10.0.0.0"}]})",
      R"({"routes": [{"dst": "10.0.0.0/8", "gw": "x"}]})",
      R"({"dns": []})",
      R"({"dns": {"nameservers": "1.1.1.1"}})",
      R"({"dns": {"nameservers": [1]}})",
  };
  for (const char* text : bad) {
    try {
      ParseResult(json::parse(text), "1.0.0");
      ADD_FAILURE() << "accepted " << text;
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), kDecodeFailure) << text;
    }
  }
  EXPECT_THROW(ParseResult(R"({"ips": [{"version": "5", "address": "10.0.0.2/24"}]})"_json, "0.4.0"), Error);
  EXPECT_THROW(ParseResult(R"({"ip4": "10.0.0.2/24"})"_json, "0.2.0"), Error);
  EXPECT_THROW(ParseResult(R"({"ip4": {"gateway": "10.0.0.1"}})"_json, "0.2.0"), Error);
}

TEST(ResultTest, UnknownVersionIsIncompatible) {
  for (const char* v : {"", "0.5.0", "2.0.0", "1.0", "x"}) {
    try {
      ResultToJson(FullResult(), v);
      ADD_FAILURE() << "accepted " << v;
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), kIncompatibleVersion) << v;
    }
    try {
      ParseResult(json::object(), v);
      ADD_FAILURE() << "accepted " << v;
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), kIncompatibleVersion) << v;
    }
  }
  EXPECT_THROW(ParseResult(R"({"cniVersion": "9.0.0"})"_json), Error);
}

TEST(ResultTest, DnsAndRouteHelpers) {
  EXPECT_EQ(DnsToJson(Dns{}), json::object());
  Dns d = DnsFromJson(R"({"domain": "x", "options": ["a", "b"]})"_json);
  EXPECT_EQ(d.domain, "x");
  EXPECT_EQ(d.options.size(), 2u);
  EXPECT_EQ(DnsFromJson(DnsToJson(d)), d);
  Route r = RouteFromJson(R"({"dst": "10.0.0.0/8", "gw": "10.0.0.1", "mtu": 1300, "scope": 253})"_json);
  EXPECT_EQ(RouteToJson(r, "1.0.0"), R"({"dst": "10.0.0.0/8", "gw": "10.0.0.1"})"_json);
  EXPECT_EQ(RouteToJson(r, "1.1.0"), R"({"dst": "10.0.0.0/8", "gw": "10.0.0.1", "mtu": 1300, "scope": 253})"_json);
}

// The reference bridge's exact bytes for this result, as captured from its stdout.
TEST(PrintJsonTest, MatchesReferenceBridgeOutput) {
  Result r;
  r.interfaces = {{"cni-bench0", "ca:72:c5:53:d4:66", "", std::nullopt, "", ""},
                  {"vethabd5e926", "8e:30:df:6e:c0:55", "", std::nullopt, "", ""},
                  {"eth0", "02:fb:1b:de:9c:21", "/var/run/netns/cnib-br-0", std::nullopt, "", ""}};
  r.ips = {{2, N("10.244.0.2/16"), A("10.244.0.1")}};
  r.routes = {{N("0.0.0.0/0"), std::nullopt}};
  const char* want = R"({
    "cniVersion": "1.0.0",
    "interfaces": [
        {
            "name": "cni-bench0",
            "mac": "ca:72:c5:53:d4:66"
        },
        {
            "name": "vethabd5e926",
            "mac": "8e:30:df:6e:c0:55"
        },
        {
            "name": "eth0",
            "mac": "02:fb:1b:de:9c:21",
            "sandbox": "/var/run/netns/cnib-br-0"
        }
    ],
    "ips": [
        {
            "interface": 2,
            "address": "10.244.0.2/16",
            "gateway": "10.244.0.1"
        }
    ],
    "routes": [
        {
            "dst": "0.0.0.0/0"
        }
    ],
    "dns": {}
})";
  EXPECT_EQ(PrintJson(ResultToJson(r, "1.0.0")), want);
}

TEST(PrintJsonTest, MatchesReferenceIpamOutput) {
  Result r;
  r.ips = {{std::nullopt, N("10.246.0.2/16"), A("10.246.0.1")}};
  r.routes = {{N("0.0.0.0/0"), std::nullopt}};
  const char* want = R"({
    "cniVersion": "1.0.0",
    "ips": [
        {
            "address": "10.246.0.2/16",
            "gateway": "10.246.0.1"
        }
    ],
    "routes": [
        {
            "dst": "0.0.0.0/0"
        }
    ],
    "dns": {}
})";
  EXPECT_EQ(PrintJson(ResultToJson(r, "1.0.0")), want);
}

TEST(PrintJsonTest, GoFieldOrderForEveryStruct) {
  std::string v11 = PrintJson(ResultToJson(FullResult(), "1.1.0"));
  auto before = [&](const std::string& text, const char* a, const char* b) {
    size_t pa = text.find(a), pb = text.find(b);
    EXPECT_NE(pa, std::string::npos) << a;
    EXPECT_NE(pb, std::string::npos) << b;
    EXPECT_LT(pa, pb) << a << " before " << b;
  };
  before(v11, "\"cniVersion\"", "\"interfaces\"");
  before(v11, "\"interfaces\"", "\"ips\"");
  before(v11, "\"ips\"", "\"routes\"");
  before(v11, "\"routes\"", "\"dns\"");
  before(v11, "\"mac\": \"0a:00:00:00:00:03\"", "\"mtu\": 1450");
  before(v11, "\"mtu\": 1450", "\"sandbox\"");
  before(v11, "\"sandbox\"", "\"socketPath\"");
  before(v11, "\"socketPath\"", "\"pciID\"");
  before(v11, "\"gw\": \"10.1.0.254\"", "\"mtu\": 1400");
  before(v11, "\"mtu\": 1400", "\"advmss\"");
  before(v11, "\"advmss\"", "\"priority\"");
  before(v11, "\"priority\"", "\"table\"");
  before(v11, "\"table\"", "\"scope\"");
  before(v11, "\"nameservers\"", "\"domain\"");
  before(v11, "\"domain\"", "\"search\"");
  before(v11, "\"search\"", "\"options\"");
  std::string v04 = PrintJson(ResultToJson(FullResult(), "0.4.0"));
  before(v04, "\"version\": \"4\"", "\"interface\": 2");
  before(v04, "\"interface\": 2", "\"address\"");
  std::string v02 = PrintJson(ResultToJson(FullResult(), "0.2.0"));
  before(v02, "\"cniVersion\"", "\"ip4\"");
  before(v02, "\"ip4\"", "\"ip6\"");
  before(v02, "\"ip6\"", "\"dns\"");
  before(v02, "\"ip\": \"10.1.0.5/24\"", "\"gateway\": \"10.1.0.1\"");
  before(v02, "\"gateway\": \"10.1.0.1\"", "\"routes\"");
  EXPECT_NE(v02.back(), '\n');
}

TEST(PrintJsonTest, ErrorShapeEscapesAndUnknownKeys) {
  json e = Error(kInvalidConfig, "bad <x> & y", "d").ToJson("1.0.0");
  EXPECT_EQ(PrintJson(e),
            "{\n    \"cniVersion\": \"1.0.0\",\n    \"code\": 7,\n    \"msg\": \"bad \\u003cx\\u003e \\u0026 y\",\n"
            "    \"details\": \"d\"\n}");
  EXPECT_EQ(PrintJson(json::object()), "{}");
  EXPECT_EQ(PrintJson(json::array()), "[]");
  EXPECT_EQ(PrintJson(R"({"zeta": 1, "alpha": [true, null, 1.5], "name": "n"})"_json),
            "{\n    \"name\": \"n\",\n    \"alpha\": [\n        true,\n        null,\n        1.5\n    ],\n"
            "    \"zeta\": 1\n}");
  EXPECT_EQ(json::parse(PrintJson(json("bad \xff utf8"))).get<std::string>().find("bad "), 0u);
}

}  // namespace
}  // namespace netiface::cni
