#include "netiface/cli/cap_flags.h"

#include <gtest/gtest.h>

#include "netiface/cni/error.h"

namespace netiface::cli {
namespace {

using nlohmann::json;

TEST(ParsePublish, PodmanForms) {
  EXPECT_EQ(ParsePublish("8080:80"), json({{"hostPort", 8080}, {"containerPort", 80}, {"protocol", "tcp"}}));
  EXPECT_EQ(ParsePublish("5353:53/udp"), json({{"hostPort", 5353}, {"containerPort", 53}, {"protocol", "udp"}}));
  EXPECT_EQ(ParsePublish("127.0.0.1:8080:80/sctp"),
            json({{"hostPort", 8080}, {"containerPort", 80}, {"protocol", "sctp"}, {"hostIP", "127.0.0.1"}}));
  EXPECT_EQ(ParsePublish("[fd00::1]:8443:443"),
            json({{"hostPort", 8443}, {"containerPort", 443}, {"protocol", "tcp"}, {"hostIP", "fd00::1"}}));
}

TEST(ParsePublish, RefusesWhatIsNotAMapping) {
  for (const char* bad : {"", "80", ":80", "8080:", "0:80", "8080:65536", "8080:80/icmp", "8080:80/", "x:80", "8080:8x",
                          "fd00::1:8080:80", "[10.0.0.1]:8080:80", "[fd00::1]8080:80", "[fd00::1", "10.0.0.300:8080:80",
                          "8080:-1", "+80:80"}) {
    EXPECT_THROW(ParsePublish(bad), cni::Error) << bad;
  }
  try {
    ParsePublish("8080:80/icmp");
  } catch (const cni::Error& e) {
    EXPECT_EQ(e.code(), cni::kInvalidEnv);
    EXPECT_NE(std::string(e.what()).find("8080:80/icmp"), std::string::npos) << e.what();
  }
}

TEST(MergeCapFlags, NoFlagsKeepsTheObject) {
  EXPECT_EQ(MergeCapFlags(json::object(), {}), json::object());
  EXPECT_EQ(MergeCapFlags(json(nullptr), {}), json::object());
  EXPECT_EQ(MergeCapFlags(json({{"mac", "0a:00:00:00:00:01"}}), {}), json({{"mac", "0a:00:00:00:00:01"}}));
}

TEST(MergeCapFlags, EachFlagSetsItsKey) {
  CapFlags f;
  f.publish = {"8080:80", "5353:53/udp"};
  f.ingress_rate = 8000000;
  f.ingress_burst = 16000000;
  f.mac = "0a:00:00:00:00:07";
  f.ips = {"10.1.0.9/24", "fd00::9"};
  json want = {{"portMappings", json::array({ParsePublish("8080:80"), ParsePublish("5353:53/udp")})},
               {"bandwidth", {{"ingressRate", 8000000}, {"ingressBurst", 16000000}}},
               {"mac", "0a:00:00:00:00:07"},
               {"ips", {"10.1.0.9/24", "fd00::9"}},
               {"aliases", {"x"}}};
  EXPECT_EQ(MergeCapFlags(json({{"aliases", {"x"}}}), f), want);
}

TEST(MergeCapFlags, AKeySetTwiceIsAUsageError) {
  CapFlags f;
  f.egress_rate = 1000;
  EXPECT_THROW(MergeCapFlags(json({{"bandwidth", json::object()}}), f), cni::Error);
  CapFlags m;
  m.mac = "0a:00:00:00:00:07";
  EXPECT_THROW(MergeCapFlags(json({{"mac", "0a:00:00:00:00:08"}}), m), cni::Error);
}

TEST(MergeCapFlags, RefusesABadMacOrAddress) {
  CapFlags m;
  m.mac = "0a:00:00:00:07";
  EXPECT_THROW(MergeCapFlags(json::object(), m), cni::Error);
  CapFlags i;
  i.ips = {"10.1.0.300"};
  EXPECT_THROW(MergeCapFlags(json::object(), i), cni::Error);
}

}  // namespace
}  // namespace netiface::cli
