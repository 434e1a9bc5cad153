// The agent killed at every step of its start: the points a fresh netiface-agent reaches on its way to
// readiness (the lease written to etcd, the cluster rules, each route to a peer, subnet.env; the fault
// hook of libcni/fault.h) are traced once; then, for each, node 1 starts from nothing (no lease, no
// routes, no rules, no subnet.env), its agent is killed (SIGKILL) right after that point, and a restart
// without the fault must bring the cluster to the state of a clean start: one lease per node, subnet.env
// naming it, exactly the full mesh of host-gw routes on both nodes, and the clean start's rules.
#include <cstdlib>
#include <fstream>
#include <set>
#include <sstream>

#include <gtest/gtest.h>

#include "cluster_fixture.h"
#include "netiface/cni/ip.h"
#include "ruleset.h"

namespace netiface::testing {
namespace {

using nlohmann::json;

constexpr char kHostGw[] = R"({"Network": "10.6.0.0/16", "Backend": {"Type": "host-gw"}})";

std::string SubnetOf(const std::string& first_host) {
  auto net = cni::IpNet::Parse(first_host);
  return net ? net->Network().ToString() : "";
}

class AgentFaultNetnsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    NETIFACE_REQUIRE_ROOT();
    c_ = std::make_unique<Cluster>(2);
    c_->PutConfig(kHostGw);
  }
  void TearDown() override {
    ::unsetenv("NETIFACE_FAULT");
    ::unsetenv("NETIFACE_FAULT_TRACE");
    if (HasFailure() && c_) {
      std::string log = c_->AgentLog(1);
      if (log.size() > 8000) log = log.substr(log.size() - 8000);
      std::cerr << "---- agent log, node 1:\n" << log << "\n";
    }
    c_.reset();
  }

  // Starts node i's agent with `env` set for it alone (the fixture's process inherits the test's).
  void Start(int i, const std::map<std::string, std::string>& env = {}) {
    for (const auto& [k, v] : env) ::setenv(k.c_str(), v.c_str(), 1);
    c_->StartAgent(i, {"--ip-masq"});
    for (const auto& [k, v] : env) ::unsetenv(k.c_str());
  }

  // Both nodes route to the other's subnet through its uplink, and nothing else of ours.
  bool Converged() {
    if (c_->Subnet(1).empty() || c_->Subnet(2).empty()) return false;
    for (int i : {1, 2}) {
      const int j = 3 - i;
      const std::vector<std::string> want = {SubnetOf(c_->Subnet(j)) + " via 192.0.2." + std::to_string(j)};
      if (c_->AgentRoutes(i) != want) return false;
    }
    return true;
  }

  // What must be as after a clean start, subnets aside (a fresh start may pick another one).
  json State() {
    json leases = json::object();
    for (const auto& [key, value] : c_->LeaseRecords()) leases[value.value("PublicIP", "?")].push_back(key);
    // The rules name node 1's subnet, which a fresh start may choose anew: it reads as "<own subnet>".
    std::string rules = RulesetWithoutHandles(*c_->node(1).ns).dump();
    const std::string own = "\"" + SubnetOf(c_->Subnet(1)).substr(0, SubnetOf(c_->Subnet(1)).find('/')) + "\"";
    for (size_t at; own.size() > 2 && (at = rules.find(own)) != std::string::npos;) {
      rules.replace(at, own.size(), "\"<own subnet>\"");
    }
    const json nft = json::parse(rules);
    json lease_keys = json::object();
    for (auto& [ip, keys] : leases.items()) lease_keys[ip] = keys.size();
    // subnet.env names node 1's lease.
    bool env_names_lease = false;
    const std::string mine = SubnetOf(c_->Subnet(1));
    for (const auto& k : leases.value("192.0.2.1", json::array())) {
      std::string key = k.get<std::string>();  // "10.6.3.0-24"
      if (auto dash = key.rfind('-'); dash != std::string::npos) key[dash] = '/';
      env_names_lease = env_names_lease || key == mine;
    }
    return {{"leases per node", lease_keys}, {"subnet.env names the lease", env_names_lease}, {"nft", nft}};
  }

  // Node 1 as before its first start: no agent, no lease, no routes or rules, no subnet.env.
  void Reset() {
    c_->StopAgent(1, SIGKILL);
    EXPECT_EQ(c_->node(1).ns->Sh(Bin("netiface-agent") + " cleanup").exit_code, 0);
    for (const auto& [key, value] : c_->LeaseRecords()) {
      if (value.value("PublicIP", "") == "192.0.2.1") c_->Etcdctl({"del", "/coreos.com/network/subnets/" + key});
    }
    std::remove(c_->node(1).subnet_env().c_str());
  }

  std::unique_ptr<Cluster> c_;
};

TEST_F(AgentFaultNetnsTest, KilledAtEveryStepOfItsStartARestartConverges) {
  TempDir dir;
  Start(2);
  ASSERT_TRUE(c_->WaitSubnetEnv(2));
  Start(1, {{"NETIFACE_FAULT_TRACE", dir / "trace"}});
  ASSERT_TRUE(WaitFor([&] { return Converged(); }, std::chrono::seconds(30))) << "no clean convergence";
  const json clean = State();
  ASSERT_EQ(clean["subnet.env names the lease"], true) << clean.dump();
  c_->StopAgent(1, SIGTERM);

  // The points up to readiness (the first subnet.env); later ones are the periodic resyncs repeating them.
  struct Point {
    int index;
    std::string what;
  };
  std::vector<Point> points;
  std::istringstream trace(ReadFile(dir / "trace"));
  for (std::string line; std::getline(trace, line);) {
    std::istringstream l(line);
    std::string program;
    Point p;
    l >> program >> p.index;
    std::getline(l >> std::ws, p.what);
    points.push_back(p);
    if (p.what == "subnet.env") break;
  }
  std::set<std::string> kinds;
  for (const auto& p : points) kinds.insert(p.what.substr(0, p.what.find(' ')));
  EXPECT_EQ(kinds, (std::set<std::string>{"lease", "cluster", "route", "subnet.env"}));

  for (const Point& p : points) {
    Reset();
    const std::string fault = "netiface-agent:kill:" + std::to_string(p.index);
    Start(1, {{"NETIFACE_FAULT", fault}});
    ASSERT_TRUE(WaitFor([&] { return !c_->node(1).agent->Running(); }, std::chrono::seconds(30)))
        << fault << " (" << p.what << "): the agent was not killed";
    c_->StopAgent(1);
    Start(1);
    EXPECT_TRUE(WaitFor([&] { return Converged(); }, std::chrono::seconds(30)))
        << fault << " (" << p.what << "): no convergence after the restart";
    const json after = State();
    EXPECT_EQ(after, clean) << fault << " (" << p.what << ")";
    std::printf("covered: netiface-agent point %2d kill %s\n", p.index, p.what.c_str());
  }
  std::printf("netiface-agent: %zu points\n", points.size());
}

}  // namespace
}  // namespace netiface::testing
