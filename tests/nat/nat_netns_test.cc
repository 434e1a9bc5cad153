// The nat library against the kernel, always inside throw-away namespaces: the test thread enters a
// TempNetns only around each nat call (InNetns), and the ruleset is read back with the nft CLI
// inside that namespace. Never touches this machine's own ruleset.
#include "netiface/nat/nat.h"

#include <fcntl.h>
#include <sched.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <memory>

#include <gtest/gtest.h>

#include "netiface/cni/error.h"
#include "testutil.h"

namespace netiface::nat {
namespace {

using testing::TempNetns;

// Puts the calling thread into `ns` for its lifetime. Aborts if it cannot come back: every later
// test would act in the wrong namespace.
class InNetns {
 public:
  explicit InNetns(const TempNetns& ns) : original_(::open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC)) {
    if (original_ < 0) throw std::runtime_error("cannot open own netns");
    int target = ::open(ns.path().c_str(), O_RDONLY | O_CLOEXEC);
    if (target < 0 || ::setns(target, CLONE_NEWNET) != 0) {
      if (target >= 0) ::close(target);
      ::close(original_);
      throw std::runtime_error("cannot enter " + ns.path());
    }
    struct stat want {};
    struct stat now {};
    ::fstat(target, &want);
    ::close(target);
    ::stat("/proc/thread-self/ns/net", &now);
    if (want.st_ino != now.st_ino) std::abort();
  }
  ~InNetns() {
    if (::setns(original_, CLONE_NEWNET) != 0) std::abort();
    ::close(original_);
  }
  InNetns(const InNetns&) = delete;
  InNetns& operator=(const InNetns&) = delete;

 private:
  int original_;
};

cni::IpNet Net(const char* s) { return *cni::IpNet::Parse(s); }
cni::IpAddr Addr(const char* s) { return *cni::IpAddr::Parse(s); }

Spec MasqSpec(const std::string& network, const std::string& cid, const char* v4, const char* v6 = nullptr) {
  Spec s;
  s.tag = {network, cid, "eth0"};
  s.masquerade.push_back(Net(v4));
  if (v6 != nullptr) s.masquerade.push_back(Net(v6));
  return s;
}

class NatNetns : public ::testing::Test {
 protected:
  void SetUp() override {
    NETIFACE_REQUIRE_ROOT();
    host_ = std::make_unique<TempNetns>("nath");
  }

  // `nft -j list ruleset` in the host namespace, parsed (handles not included).
  nlohmann::json Ruleset() const {
    auto r = host_->Sh("nft -j list ruleset");
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return nlohmann::json::parse(r.out);
  }
  std::string RulesetText(bool handles = false) const {
    return host_->Sh(std::string("nft ") + (handles ? "-a " : "") + "list ruleset").out;
  }
  void Nft(const std::string& commands) const {
    auto r = host_->Sh("nft '" + commands + "'");
    ASSERT_EQ(r.exit_code, 0) << commands << ": " << r.err;
  }

  void Apply(const Spec& s) const {
    InNetns in(*host_);
    nat::Apply(s);
  }
  bool Remove(const Tag& t) const {
    InNetns in(*host_);
    return nat::Remove(t);
  }
  void Verify(const Spec& s) const {
    InNetns in(*host_);
    nat::Verify(s);
  }
  void Gc(const std::string& network, const std::vector<cni::Attachment>& valid) const {
    InNetns in(*host_);
    nat::Gc(network, valid);
  }
  // The message of the kNatFailure that Verify throws, "" when it passes.
  std::string VerifyError(const Spec& s) const {
    try {
      Verify(s);
      return "";
    } catch (const cni::Error& e) {
      EXPECT_EQ(e.code(), cni::kNatFailure);
      return e.msg();
    }
  }

  std::unique_ptr<TempNetns> host_;
};

TEST_F(NatNetns, ApplyInstallsTaggedRulesAndTwiceIsTheSame) {
  Spec s = MasqSpec("net1", "ctr1", "10.22.0.5/24", "fd00:22::5/64");
  s.floating_ips = {{Addr("203.0.113.7"), Addr("10.22.0.5")}, {Addr("2001:db8:7::7"), Addr("fd00:22::5")}};
  Apply(s);
  std::string text = RulesetText();
  const std::string c = "comment \"netiface:net1:ctr1:eth0\"";
  for (const std::string& rule : {
           "ip saddr 10.22.0.5 ip daddr != 10.22.0.0/24 ip daddr != 224.0.0.0/4 masquerade " + c,
           "ip6 saddr fd00:22::5 ip6 daddr != fd00:22::/64 ip6 daddr != ff00::/8 masquerade " + c,
           "ip daddr 203.0.113.7 dnat ip to 10.22.0.5 " + c,
           "ip6 daddr 2001:db8:7::7 dnat ip6 to fd00:22::5 " + c,
           "ip saddr 10.22.0.5 snat ip to 203.0.113.7 " + c,
       }) {
    EXPECT_NE(text.find(rule), std::string::npos) << rule << "\nin\n" << text;
  }
  EXPECT_NE(text.find("table inet netiface"), std::string::npos);
  EXPECT_NE(text.find("type nat hook postrouting priority srcnat; policy accept;"), std::string::npos);
  EXPECT_NE(text.find("type nat hook prerouting priority dstnat; policy accept;"), std::string::npos);
  std::string with_handles = RulesetText(true);
  Apply(s);
  EXPECT_EQ(RulesetText(true), with_handles) << "second Apply changed the ruleset";
  EXPECT_EQ(VerifyError(s), "");
}

TEST_F(NatNetns, ReapplyReplacesTheAttachmentsRulesInPlace) {
  Apply(MasqSpec("net1", "a", "10.22.0.5/24"));
  Apply(MasqSpec("net1", "b", "10.22.0.6/24"));
  Apply(MasqSpec("net1", "a", "10.22.0.7/24"));
  std::string text = RulesetText();
  EXPECT_EQ(text.find("10.22.0.5"), std::string::npos) << text;
  auto a = text.find("ip saddr 10.22.0.7");
  auto b = text.find("ip saddr 10.22.0.6");
  ASSERT_NE(a, std::string::npos) << text;
  ASSERT_NE(b, std::string::npos) << text;
  EXPECT_LT(a, b) << "the replaced rules moved:\n" << text;
}

TEST_F(NatNetns, RemoveDeletesExactlyTheAttachmentAndRestoresTheRuleset) {
  // Somebody else's table must survive everything we do.
  Nft("add table inet guest; add chain inet guest forward_guest { type filter hook forward priority 0; policy accept; }; "
      "add rule inet guest forward_guest ip saddr 10.9.9.9 counter comment \"netiface:net1:a:eth0\"");
  auto before = Ruleset();
  Spec b = MasqSpec("net1", "b", "10.22.0.6/24");
  Apply(b);
  auto only_b = Ruleset();
  Spec a = MasqSpec("net1", "a", "10.22.0.5/24", "fd00:22::5/64");
  a.floating_ips = {{Addr("203.0.113.7"), Addr("10.22.0.5")}};
  Apply(a);
  EXPECT_TRUE(Remove(a.tag));
  EXPECT_EQ(Ruleset(), only_b) << RulesetText();
  EXPECT_FALSE(Remove(a.tag));
  EXPECT_EQ(Ruleset(), only_b);
  EXPECT_TRUE(Remove(b.tag));
  EXPECT_EQ(Ruleset(), before) << RulesetText();
  EXPECT_FALSE(Remove(b.tag));
}

TEST_F(NatNetns, RemoveOnAPristineRulesetIsFalseAndChangesNothing) {
  auto before = Ruleset();
  EXPECT_FALSE(Remove({"net1", "ctr1", "eth0"}));
  EXPECT_EQ(Ruleset(), before);
}

TEST_F(NatNetns, TwoNetworksNeverTouchEachOther) {
  auto before = Ruleset();
  Spec n1 = MasqSpec("net1", "ctr1", "10.22.0.5/24");
  Spec n2 = MasqSpec("net2", "ctr1", "10.33.0.5/24");
  Spec n10 = MasqSpec("net10", "ctr1", "10.44.0.5/24");
  Apply(n1);
  Apply(n2);
  Apply(n10);
  EXPECT_TRUE(Remove(n1.tag));
  EXPECT_NE(VerifyError(n1), "");
  EXPECT_EQ(VerifyError(n2), "");
  EXPECT_EQ(VerifyError(n10), "");
  Apply(n1);
  Gc("net2", {});
  EXPECT_EQ(VerifyError(n1), "");
  EXPECT_NE(VerifyError(n2), "");
  EXPECT_EQ(VerifyError(n10), "");
  Gc("net1", {});
  Gc("net10", {});
  EXPECT_EQ(Ruleset(), before) << RulesetText();
}

TEST_F(NatNetns, GcRemovesOnlyStaleAttachmentsOfItsNetwork) {
  auto before = Ruleset();
  Spec c1 = MasqSpec("net1", "c1", "10.22.0.1/24");
  Spec c2 = MasqSpec("net1", "c2", "10.22.0.2/24");
  Spec c3 = MasqSpec("net1", "c3", "10.22.0.3/24");
  c3.floating_ips = {{Addr("203.0.113.3"), Addr("10.22.0.3")}};
  Spec other = MasqSpec("net2", "c2", "10.33.0.2/24");
  for (const Spec* s : {&c1, &c2, &c3, &other}) Apply(*s);
  Gc("net1", {{"c1", "eth0"}, {"c3", "eth0"}, {"c2", "eth1"}});
  EXPECT_EQ(VerifyError(c1), "");
  EXPECT_NE(VerifyError(c2), "");
  EXPECT_EQ(VerifyError(c3), "");
  EXPECT_EQ(VerifyError(other), "");
  auto after_first = Ruleset();
  Gc("net1", {{"c1", "eth0"}, {"c3", "eth0"}});
  EXPECT_EQ(Ruleset(), after_first) << "GC with nothing stale changed the ruleset";
  Gc("net1", {});
  EXPECT_NE(VerifyError(c1), "");
  EXPECT_NE(VerifyError(c3), "");
  EXPECT_EQ(VerifyError(other), "");
  Gc("net2", {});
  EXPECT_EQ(Ruleset(), before) << RulesetText();
}

TEST_F(NatNetns, VerifyNamesWhatIsMissingAndApplyRepairsIt) {
  Spec s = MasqSpec("net1", "ctr1", "10.22.0.5/24", "fd00:22::5/64");
  s.floating_ips = {{Addr("203.0.113.7"), Addr("10.22.0.5")}};
  EXPECT_NE(VerifyError(s).find("10.22.0.5"), std::string::npos);
  Apply(s);
  ASSERT_EQ(VerifyError(s), "");
  // Delete the IPv6 masquerade rule behind the library's back.
  auto listed = host_->Sh("nft -a list chain inet netiface postrouting | grep 'fd00:22::5' | sed 's/.*# handle //'");
  ASSERT_FALSE(listed.out.empty()) << RulesetText(true);
  Nft("delete rule inet netiface postrouting handle " + listed.out.substr(0, listed.out.find('\n')));
  std::string msg = VerifyError(s);
  EXPECT_NE(msg.find("fd00:22::5"), std::string::npos) << msg;
  EXPECT_NE(msg.find("postrouting"), std::string::npos) << msg;
  EXPECT_EQ(msg.find("203.0.113.7"), std::string::npos) << "names a rule that is there: " << msg;
  // A rule changed in place is missing too.
  Nft("flush chain inet netiface output; add rule inet netiface output ip daddr 203.0.113.7 dnat ip to 10.22.0.9 "
      "comment \"netiface:net1:ctr1:eth0\"");
  msg = VerifyError(s);
  EXPECT_NE(msg.find("output: ip daddr 203.0.113.7 dnat ip to 10.22.0.5"), std::string::npos) << msg;
  Apply(s);
  EXPECT_EQ(VerifyError(s), "");
  EXPECT_EQ(RulesetText().find("10.22.0.9"), std::string::npos) << RulesetText();
}

TEST_F(NatNetns, InvalidInputChangesNothing) {
  Apply(MasqSpec("net1", "ok", "10.22.0.5/24"));
  auto before = Ruleset();
  Spec bad_tag = MasqSpec("net1", "bad id\"", "10.22.0.6/24");
  EXPECT_THROW(Apply(bad_tag), cni::Error);
  Spec mixed = MasqSpec("net1", "mixed", "10.22.0.7/24");
  mixed.floating_ips = {{Addr("203.0.113.7"), Addr("fd00::7")}};
  try {
    Apply(mixed);
    ADD_FAILURE() << "mixed families accepted";
  } catch (const cni::Error& e) {
    EXPECT_EQ(e.code(), cni::kNatFailure);
  }
  EXPECT_EQ(Ruleset(), before);
}

// Runs `body` in `n` forked children at once (each in the host namespace); true when all exit 0.
template <typename F>
bool InChildren(const TempNetns& ns, int n, F body) {
  std::vector<pid_t> pids;
  for (int i = 0; i < n; ++i) {
    pid_t pid = ::fork();
    if (pid == 0) {
      int code = 1;
      try {
        InNetns in(ns);
        code = body(i) ? 0 : 1;
      } catch (const std::exception& e) {
        std::fprintf(stderr, "child %d: %s\n", i, e.what());
      }
      ::_exit(code);
    }
    if (pid > 0) pids.push_back(pid);
  }
  bool ok = static_cast<int>(pids.size()) == n;
  for (pid_t pid : pids) {
    int status = 0;
    ::waitpid(pid, &status, 0);
    ok = ok && WIFEXITED(status) && WEXITSTATUS(status) == 0;
  }
  return ok;
}

TEST_F(NatNetns, ConcurrentProcessesNeverLoseEachOthersRules) {
  auto before = Ruleset();
  auto spec = [](int i) {
    Spec s = MasqSpec("net1", "p" + std::to_string(i), ("10.22.0." + std::to_string(10 + i) + "/24").c_str());
    if (i % 2 == 0) s.floating_ips = {{Addr(("203.0.113." + std::to_string(10 + i)).c_str()), s.masquerade[0].addr()}};
    return s;
  };
  // Each process adds and removes its attachment repeatedly (the table comes and goes), ending added.
  ASSERT_TRUE(InChildren(*host_, 4, [&](int i) {
    for (int round = 0; round < 5; ++round) {
      nat::Apply(spec(i));
      nat::Verify(spec(i));
      if (!nat::Remove(spec(i).tag)) return false;
    }
    nat::Apply(spec(i));
    return true;
  }));
  for (int i = 0; i < 4; ++i) EXPECT_EQ(VerifyError(spec(i)), "") << i;
  ASSERT_TRUE(InChildren(*host_, 4, [&](int i) { return nat::Remove(spec(i).tag); }));
  EXPECT_EQ(Ruleset(), before) << RulesetText();
}

TEST_F(NatNetns, LongNamesAreTaggedAndRemovedExactly) {
  auto before = Ruleset();
  std::string net(60, 'n');
  std::string id(120, 'c');
  Spec a = MasqSpec(net, id, "10.22.0.5/24");
  Spec b = MasqSpec(net, id + "d", "10.22.0.6/24");
  Apply(a);
  Apply(b);
  Gc(net, {{id + "d", "eth0"}});
  EXPECT_NE(VerifyError(a), "");
  EXPECT_EQ(VerifyError(b), "");
  EXPECT_TRUE(Remove(b.tag));
  EXPECT_EQ(Ruleset(), before) << RulesetText();
}

}  // namespace
}  // namespace netiface::nat
