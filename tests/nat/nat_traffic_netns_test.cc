// Real traffic through the rules: pod ns --veth-- host ns --veth-- outside ns. The outside has no
// route back to the pod subnet, so a pod reaches it only when the host masquerades (or SNATs to a
// floating IP the outside routes via the host). A counter in the outside namespace shows the source
// address it saw. Every namespace is a TempNetns; nat runs inside the host one.
#include <fcntl.h>
#include <sched.h>
#include <unistd.h>

#include <cstdlib>
#include <memory>

#include <gtest/gtest.h>

#include "netiface/nat/nat.h"
#include "testutil.h"

namespace netiface::nat {
namespace {

using testing::TempNetns;

// Runs `f` with the calling thread inside `ns`; aborts if it cannot return.
template <typename F>
void InNs(const TempNetns& ns, F f) {
  int original = ::open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC);
  int target = ::open(ns.path().c_str(), O_RDONLY | O_CLOEXEC);
  ASSERT_GE(original, 0);
  ASSERT_GE(target, 0);
  ASSERT_EQ(::setns(target, CLONE_NEWNET), 0);
  ::close(target);
  struct Back {
    int fd;
    ~Back() {
      if (::setns(fd, CLONE_NEWNET) != 0) std::abort();
      ::close(fd);
    }
  } back{original};
  f();
}

cni::IpNet Net(const char* s) { return *cni::IpNet::Parse(s); }
cni::IpAddr Addr(const char* s) { return *cni::IpAddr::Parse(s); }

class NatTraffic : public ::testing::Test {
 protected:
  void SetUp() override {
    NETIFACE_REQUIRE_ROOT();
    pod_ = std::make_unique<TempNetns>("natp");
    host_ = std::make_unique<TempNetns>("nath");
    out_ = std::make_unique<TempNetns>("nato");
    Sh(*host_, "ip link add vpod type veth peer name eth0 netns " + pod_->name() +
                   " && ip link add vout type veth peer name eth0 netns " + out_->name() +
                   " && ip addr add 10.66.0.1/24 dev vpod && ip addr add fd66::1/64 dev vpod nodad"
                   " && ip addr add 198.51.100.1/24 dev vout && ip addr add 2001:db8:66::1/64 dev vout nodad"
                   " && ip link set vpod up && ip link set vout up"
                   " && ip route add default via 198.51.100.2 && ip -6 route add default via 2001:db8:66::2"
                   " && sysctl -qw net.ipv4.ip_forward=1 && sysctl -qw net.ipv6.conf.all.forwarding=1");
    Sh(*pod_,
       "ip addr add 10.66.0.2/24 dev eth0 && ip addr add fd66::2/64 dev eth0 nodad && ip link set eth0 up"
       " && ip route add default via 10.66.0.1 && ip -6 route add default via fd66::1");
    // The outside knows nothing of 10.66.0.0/24 or fd66::/64; it routes the floating IPs via the host
    // and counts the echo requests it receives by source address.
    Sh(*out_,
       "ip addr add 198.51.100.2/24 dev eth0 && ip addr add 2001:db8:66::2/64 dev eth0 nodad"
       " && ip link set eth0 up"
       " && ip route add 203.0.113.10/32 via 198.51.100.1 && ip -6 route add 2001:db8:77::10/128 via 2001:db8:66::1"
       " && nft 'add table inet probe; add chain inet probe in { type filter hook input priority 0; }'");
    for (const char* src : {"198.51.100.1", "10.66.0.2", "203.0.113.10"}) {
      Sh(*out_, std::string("nft add rule inet probe in ip saddr ") + src + " icmp type echo-request counter");
    }
    for (const char* src : {"2001:db8:66::1", "fd66::2", "2001:db8:77::10"}) {
      Sh(*out_, std::string("nft add rule inet probe in ip6 saddr ") + src + " icmpv6 type echo-request counter");
    }
  }

  void Sh(const TempNetns& ns, const std::string& cmd) {
    auto r = ns.Sh(cmd);
    ASSERT_EQ(r.exit_code, 0) << cmd << ": " << r.err;
  }
  static bool Ping(const TempNetns& from, const std::string& to) {
    return from.Sh("ping -n -q -c 1 -W 1 " + to + " >/dev/null 2>&1 || ping -n -q -c 2 -i 0.3 -W 1 " + to +
                   " >/dev/null 2>&1")
               .exit_code == 0;
  }
  // Echo requests the outside counted from `src`.
  uint64_t SeenFrom(const std::string& src) {
    auto doc = nlohmann::json::parse(out_->Sh("nft -j list chain inet probe in").out);
    for (const auto& item : doc["nftables"]) {
      if (!item.contains("rule")) continue;
      std::string dump = item["rule"]["expr"].dump();
      if (dump.find("\"" + src + "\"") == std::string::npos) continue;
      for (const auto& e : item["rule"]["expr"]) {
        if (e.contains("counter")) return e["counter"]["packets"].get<uint64_t>();
      }
    }
    ADD_FAILURE() << "no counter for " << src;
    return 0;
  }

  std::unique_ptr<TempNetns> pod_;
  std::unique_ptr<TempNetns> host_;
  std::unique_ptr<TempNetns> out_;
};

TEST_F(NatTraffic, MasqueradedPodReachesOutsideAsTheHost) {
  ASSERT_TRUE(Ping(*host_, "198.51.100.2"));
  ASSERT_TRUE(Ping(*pod_, "10.66.0.1"));
  EXPECT_FALSE(Ping(*pod_, "198.51.100.2")) << "reached the outside without NAT: the test proves nothing";
  EXPECT_FALSE(Ping(*pod_, "2001:db8:66::2"));
  uint64_t from_host = SeenFrom("198.51.100.1");
  uint64_t from_host6 = SeenFrom("2001:db8:66::1");

  Spec s{{"net1", "ctr1", "eth0"}, {Net("10.66.0.2/24"), Net("fd66::2/64")}, {}};
  InNs(*host_, [&] { Apply(s); });
  EXPECT_TRUE(Ping(*pod_, "198.51.100.2"));
  EXPECT_TRUE(Ping(*pod_, "2001:db8:66::2"));
  EXPECT_GT(SeenFrom("198.51.100.1"), from_host) << "the outside did not see the host's address";
  EXPECT_GT(SeenFrom("2001:db8:66::1"), from_host6);
  // Traffic inside the pod subnet is not masqueraded: the host sees the pod's own address.
  EXPECT_TRUE(Ping(*pod_, "10.66.0.1"));

  InNs(*host_, [&] { EXPECT_TRUE(Remove(s.tag)); });
  EXPECT_FALSE(Ping(*pod_, "198.51.100.2"));
  EXPECT_FALSE(Ping(*pod_, "2001:db8:66::2"));
}

TEST_F(NatTraffic, FloatingIpReachesThePodBothWays) {
  EXPECT_FALSE(Ping(*out_, "203.0.113.10"));
  EXPECT_FALSE(Ping(*out_, "2001:db8:77::10"));
  Spec s{{"net1", "ctr1", "eth0"},
         {},
         {{Addr("203.0.113.10"), Addr("10.66.0.2")}, {Addr("2001:db8:77::10"), Addr("fd66::2")}}};
  InNs(*host_, [&] { Apply(s); });
  // In: prerouting DNAT.
  EXPECT_TRUE(Ping(*out_, "203.0.113.10"));
  EXPECT_TRUE(Ping(*out_, "2001:db8:77::10"));
  // From the host itself: output DNAT.
  EXPECT_TRUE(Ping(*host_, "203.0.113.10"));
  EXPECT_TRUE(Ping(*host_, "2001:db8:77::10"));
  // Out: SNAT to the floating IP (there is no masquerade rule, and no route back to the pod subnet).
  EXPECT_TRUE(Ping(*pod_, "198.51.100.2"));
  EXPECT_TRUE(Ping(*pod_, "2001:db8:66::2"));
  EXPECT_GT(SeenFrom("203.0.113.10"), 0u);
  EXPECT_GT(SeenFrom("2001:db8:77::10"), 0u);
  EXPECT_EQ(SeenFrom("10.66.0.2"), 0u);

  InNs(*host_, [&] { EXPECT_TRUE(Remove(s.tag)); });
  EXPECT_FALSE(Ping(*out_, "203.0.113.10"));
  EXPECT_FALSE(Ping(*pod_, "198.51.100.2"));
}

TEST_F(NatTraffic, FloatingIpWinsOverMasquerade) {
  Spec s{{"net1", "ctr1", "eth0"}, {Net("10.66.0.2/24")}, {{Addr("203.0.113.10"), Addr("10.66.0.2")}}};
  InNs(*host_, [&] { Apply(s); });
  uint64_t from_host = SeenFrom("198.51.100.1");
  EXPECT_TRUE(Ping(*pod_, "198.51.100.2"));
  EXPECT_GT(SeenFrom("203.0.113.10"), 0u);
  EXPECT_EQ(SeenFrom("198.51.100.1"), from_host) << "masqueraded although a floating IP is set";
}

}  // namespace
}  // namespace netiface::nat
