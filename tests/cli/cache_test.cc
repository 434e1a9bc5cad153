// The result cache: Go libcni's byte format and layout, read and written.
#include "netiface/cni/runtime/cache.h"

#include <sys/stat.h>

#include <gtest/gtest.h>

#include "netiface/cni/error.h"
#include "testutil.h"

namespace netiface::cni {
namespace {

using nlohmann::json;

CacheEntry FullEntry() {
  CacheEntry e;
  e.container_id = "ctr1";
  e.ifname = "eth0";
  e.network_name = "net";
  e.netns = "/run/netns/p";
  e.config = R"({"a":1})";
  e.cni_args = {{"IgnoreUnknown", "1"}, {"K8S_POD_NAME", "a<b"}};
  e.capability_args = {{"portMappings", json::array({{{"hostPort", 80}, {"protocol", "tcp"}}})}};
  e.result = {{"cniVersion", "1.0.0"}, {"ips", json::array({{{"address", "10.0.0.2/24"}, {"interface", 0}}})}};
  return e;
}

// What Go's json.Marshal(cachedInfo) writes for FullEntry(): struct field order, sorted map keys,
// HTML-escaped '<'.
constexpr char kGoBytes[] =
    R"({"kind":"cniCacheV1","containerId":"ctr1","config":"eyJhIjoxfQ==","ifName":"eth0",)"
    R"("networkName":"net","netns":"/run/netns/p","cniArgs":[["IgnoreUnknown","1"],["K8S_POD_NAME","a\u003cb"]],)"
    R"("capabilityArgs":{"portMappings":[{"hostPort":80,"protocol":"tcp"}]},)"
    R"("result":{"cniVersion":"1.0.0","ips":[{"address":"10.0.0.2/24","interface":0}]}})";

TEST(CacheFormatTest, EncodesExactlyAsGoLibcni) { EXPECT_EQ(EncodeCacheEntry(FullEntry()), kGoBytes); }

TEST(CacheFormatTest, OmitsEmptyOptionalFields) {
  CacheEntry e;
  e.container_id = "c";
  e.ifname = "eth0";
  e.network_name = "n";
  e.config = "{}";
  EXPECT_EQ(EncodeCacheEntry(e),
            R"({"kind":"cniCacheV1","containerId":"c","config":"e30=","ifName":"eth0","networkName":"n"})");
}

TEST(CacheFormatTest, DecodesWhatGoWrites) {
  CacheEntry e = DecodeCacheEntry(kGoBytes);
  EXPECT_EQ(e, FullEntry());
  EXPECT_FALSE(e.legacy);
}

TEST(CacheFormatTest, DecodesEntriesOfOlderLibcniWithoutNetns) {
  CacheEntry e = DecodeCacheEntry(
      R"({"kind":"cniCacheV1","containerId":"c","config":"e30=","ifName":"eth0","networkName":"n","result":{"cniVersion":"0.4.0"}})");
  EXPECT_EQ(e.netns, "");
  EXPECT_EQ(e.config, "{}");
  EXPECT_EQ(e.result, json({{"cniVersion", "0.4.0"}}));
}

TEST(CacheFormatTest, AnObjectOfAnotherKindIsALegacyResult) {
  CacheEntry e = DecodeCacheEntry(R"({"cniVersion":"0.3.1","ips":[]})");
  EXPECT_TRUE(e.legacy);
  EXPECT_EQ(e.result["cniVersion"], "0.3.1");
}

TEST(CacheFormatTest, RejectsGarbage) {
  for (const char* bad : {"", "[]", "nope", R"({"kind":"cniCacheV1","config":"***"})",
                          R"({"kind":"cniCacheV1","cniArgs":[["a"]]})", R"({"kind":"cniCacheV1","result":[]})"}) {
    EXPECT_THROW(DecodeCacheEntry(bad), Error) << bad;
  }
}

TEST(GoJsonTest, EscapesAndNumbersAsGo) {
  json j = {
      {"s", "<a&b>\u2028\x01\n\"\\"},       {"f", 1.5}, {"big", 1e21}, {"tiny", 1e-7}, {"i", -3}, {"u", 7u}, {"z", 0.0},
      {"arr", json::array({true, nullptr})}};
  EXPECT_EQ(GoJsonMarshal(j),
            R"({"arr":[true,null],"big":1e+21,"f":1.5,"i":-3,"s":"\u003ca\u0026b\u003e\u2028\u0001\n\"\\",)"
            R"("tiny":1e-7,"u":7,"z":0})");
  EXPECT_EQ(GoJsonMarshal(std::string("bad\xff")), "\"bad\\ufffd\"");
}

TEST(Base64Test, RoundTripsEveryLength) {
  std::string s;
  for (int n = 0; n < 20; ++n) {
    EXPECT_EQ(Base64Decode(Base64Encode(s)), s);
    s += static_cast<char>(n * 37);
  }
  EXPECT_EQ(Base64Encode("ab"), "YWI=");
  EXPECT_EQ(Base64Encode("a"), "YQ==");
  EXPECT_THROW(Base64Decode("YQ="), Error);
  EXPECT_THROW(Base64Decode("Y==Q"), Error);
}

TEST(ResultCacheTest, WritesLibcnisLayoutWithPrivateModes) {
  testing::TempDir dir;
  ResultCache cache(dir.path());
  cache.Write(FullEntry());
  std::string path = dir / "results/net-ctr1-eth0";
  EXPECT_EQ(cache.PathFor("net", "ctr1", "eth0"), path);
  EXPECT_EQ(testing::ReadFile(path), kGoBytes);
  struct stat st {};
  ASSERT_EQ(stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  ASSERT_EQ(stat((dir / "results").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0700u);
  EXPECT_EQ(testing::ListDir(dir / "results"), std::vector<std::string>{"net-ctr1-eth0"});

  auto back = cache.Read("net", "ctr1", "eth0");
  ASSERT_TRUE(back);
  EXPECT_EQ(*back, FullEntry());
  EXPECT_FALSE(cache.Read("net", "ctr1", "eth1"));
  EXPECT_TRUE(cache.Remove("net", "ctr1", "eth0"));
  EXPECT_FALSE(cache.Remove("net", "ctr1", "eth0"));
  EXPECT_FALSE(cache.Read("net", "ctr1", "eth0"));
}

TEST(ResultCacheTest, RejectsPathsLeavingTheFolder) {
  ResultCache cache("/tmp/x");
  EXPECT_THROW(cache.PathFor("net", "../../etc", "eth0"), Error);
  EXPECT_THROW(cache.PathFor("", "c", "eth0"), Error);
}

TEST(ResultCacheTest, ListsReadableEntriesFilteredByContainer) {
  testing::TempDir dir;
  ResultCache cache(dir.path());
  CacheEntry a = FullEntry();
  CacheEntry b = FullEntry();
  b.container_id = "ctr2";
  CacheEntry c = FullEntry();
  c.network_name = "other";
  for (const auto& e : {a, b, c}) cache.Write(e);
  testing::WriteFile(dir / "results/garbage-ctr1-eth9", "not json");
  testing::WriteFile(dir / "results/legacy-ctr1-eth0", R"({"cniVersion":"0.3.1"})");
  testing::WriteFile(dir / "results/net-ctr9-eth0.tmp-0123456789ab", EncodeCacheEntry(FullEntry()));

  auto all = cache.List();
  ASSERT_EQ(all.size(), 3u);
  EXPECT_EQ(all[0].container_id, "ctr1");
  EXPECT_EQ(all[1].container_id, "ctr2");
  EXPECT_EQ(all[2].network_name, "other");
  auto only = cache.List("ctr2");
  ASSERT_EQ(only.size(), 1u);
  EXPECT_EQ(only[0].container_id, "ctr2");
  EXPECT_TRUE(ResultCache(dir / "missing").List().empty());
}

}  // namespace
}  // namespace netiface::cni
