#include "netiface/cni/config_keys.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace netiface::cni {
namespace {

using nlohmann::json;
using ::testing::ElementsAre;
using ::testing::IsEmpty;

const std::vector<std::string> kBridge = {"bridge", "isGateway",         "isDefaultGateway", "ipMasq",
                                          "mtu",    "runtimeConfig.mac", "args.cni.mac"};

TEST(ConfigKeys, AMisspeltKeyNamesTheNearest) {
  json conf = {{"cniVersion", "1.0.0"}, {"name", "n"}, {"type", "bridge"},  {"isGatway", true},
               {"mtu", 1400},           {"zzz", 1},    {"ISGATEWAY", true}, {"ipmasq", true}};
  EXPECT_THAT(
      UnknownKeyWarnings(conf, kBridge),
      ElementsAre("unknown key \"ISGATEWAY\" (did you mean \"isGateway\"?), ignored",
                  "unknown key \"ipmasq\" (did you mean \"ipMasq\"?), ignored",
                  "unknown key \"isGatway\" (did you mean \"isGateway\"?), ignored", "unknown key \"zzz\", ignored"));
}

TEST(ConfigKeys, KeysEveryPluginReadsAndDottedPathsAreKnown) {
  json conf = {{"cniVersion", "1.0.0"},
               {"name", "n"},
               {"type", "bridge"},
               {"ipam", json::object()},
               {"dns", json::object()},
               {"args", json::object()},
               {"runtimeConfig", json::object()},
               {"capabilities", json::object()},
               {"prevResult", json::object()},
               {"logLevel", "debug"},
               {"logFile", "/x"},
               {"logFileMaxSize", 1},
               {"logFileMaxCount", 2},
               {"cni.dev/valid-attachments", json::array()},
               {"cni.dev/attachments", json::array()}};
  EXPECT_THAT(UnknownKeyWarnings(conf, kBridge), IsEmpty());
  EXPECT_THAT(UnknownKeyWarnings(json::array(), kBridge), IsEmpty());
  EXPECT_THAT(UnknownKeyWarnings("text", kBridge), IsEmpty());
}

TEST(ConfigKeys, ASectionIsCheckedAgainstItsOwnKeys) {
  const std::vector<std::string> host_local = {"ipam.type", "ipam.subnet", "ipam.ranges", "ipam.dataDir", "logFile"};
  json conf = {
      {"type", "bridge"}, {"whatever", 1}, {"ipam", {{"type", "host-local"}, {"subnett", "x"}, {"ranges", 1}}}};
  EXPECT_THAT(UnknownKeyWarnings(conf, host_local, "ipam"),
              ElementsAre("unknown key \"ipam.subnett\" (did you mean \"ipam.subnet\"?), ignored"));
  EXPECT_THAT(UnknownKeyWarnings(json{{"type", "x"}}, host_local, "ipam"), IsEmpty());  // no ipam at all
  EXPECT_THAT(UnknownKeyWarnings(json{{"ipam", 3}}, host_local, "ipam"), IsEmpty());
}

TEST(ConfigKeys, NearestKeyNeedsToBeClose) {
  const std::vector<std::string> known = {"isGateway", "mtu", "hairpinMode"};
  EXPECT_EQ(NearestKey("isgateway", known), "isGateway");
  EXPECT_EQ(NearestKey("mtuu", known), "mtu");
  EXPECT_EQ(NearestKey("hairpin", known), "");  // 4 edits for 7 letters: too far
  EXPECT_EQ(NearestKey("", known), "");
  EXPECT_EQ(NearestKey("x", {}), "");
}

}  // namespace
}  // namespace netiface::cni
