// The flannel verbs with the delegate replaced by a fake Exec: what is saved, what is delegated, when
// files go away. No root needed.
#include "netiface/flannel/flannel.h"

#include <sys/stat.h>

#include <filesystem>
#include <functional>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "cni_helpers.h"
#include "netiface/cni/error.h"
#include "testutil.h"

namespace netiface::flannel {
namespace {

using nlohmann::json;
using ::testing::ElementsAre;

const char* kAddResult = R"({"cniVersion":"1.0.0",
  "interfaces":[{"name":"cni0","mac":"02:00:00:00:00:01"},{"name":"veth1234abcd","mac":"02:00:00:00:00:02"},
                {"name":"eth0","mac":"02:00:00:00:00:03","sandbox":"/run/netns/pod"}],
  "ips":[{"interface":2,"address":"10.244.1.2/24","gateway":"10.244.1.1"}],
  "routes":[{"dst":"10.244.0.0/16"}],"dns":{}})";

class FakeExec : public cni::Exec {
 public:
  struct Call {
    std::string command;
    std::string plugin;
    json conf;
  };
  std::vector<Call> calls;
  // Answers a request; the default answers ADD with kAddResult and everything else with nothing.
  std::function<cni::ExecOutput(const Call&)> respond;

  cni::ExecOutput Run(const cni::ExecRequest& req) override {
    Call c{req.env.at("CNI_COMMAND"), std::filesystem::path(req.path).filename().string(), json::parse(req.stdin_data)};
    calls.push_back(c);
    if (respond) return respond(c);
    return {0, c.command == "ADD" ? kAddResult : ""};
  }
  std::vector<std::string> Commands() const {
    std::vector<std::string> out;
    for (const auto& c : calls) out.push_back(c.command);
    return out;
  }
};

cni::ExecOutput Failure(int code, const std::string& msg) {
  return {1, json{{"cniVersion", "1.0.0"}, {"code", code}, {"msg", msg}}.dump()};
}

class FlannelTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::filesystem::create_directories(dir_ / "bin");
    testing::WriteFile(dir_ / "bin/bridge", "#!/bin/sh\nexit 1\n");
    std::filesystem::permissions(dir_ / "bin/bridge", std::filesystem::perms::owner_all);
    WriteEnv("10.244.1.1/24");
  }
  void WriteEnv(const std::string& subnet) {
    testing::WriteFile(dir_ / "subnet.env", "FLANNEL_NETWORK=10.244.0.0/16\nFLANNEL_SUBNET=" + subnet +
                                                "\nFLANNEL_MTU=1450\nFLANNEL_IPMASQ=true\n");
  }
  json Conf(const std::string& version = "1.0.0") const {
    return {{"cniVersion", version}, {"name", "cbr0"},
            {"type", "flannel"},     {"subnetFile", dir_ / "subnet.env"},
            {"dataDir", data()},     {"delegate", {{"hairpinMode", true}, {"isDefaultGateway", true}}}};
  }
  cni::CmdArgs Args(const std::string& command, const json& conf, const std::string& cid = "ctr1") const {
    return testing::MakeCmdArgs(conf, {.command = command, .container_id = cid, .path = dir_ / "bin"});
  }
  std::string data() const { return dir_ / "data"; }
  std::string saved(const std::string& cid = "ctr1") const { return data() + "/" + cid + "-eth0"; }
  static bool Exists(const std::string& p) { return std::filesystem::exists(p); }

  testing::TempDir dir_;
  FakeExec exec_;
};

TEST_F(FlannelTest, AddSavesTheRenderedConfigBeforeDelegating) {
  bool saved_before = false;
  exec_.respond = [&](const FakeExec::Call& c) -> cni::ExecOutput {
    saved_before = Exists(saved()) && json::parse(testing::ReadFile(saved())) == c.conf;
    return {0, kAddResult};
  };
  cni::Result r = Add(Args("ADD", Conf()), exec_);
  EXPECT_TRUE(saved_before);
  EXPECT_EQ(r, cni::ParseResult(json::parse(kAddResult)));
  ASSERT_EQ(exec_.calls.size(), 1u);
  EXPECT_EQ(exec_.calls[0].plugin, "bridge");
  EXPECT_EQ(exec_.calls[0].conf["ipam"]["ranges"], json::parse(R"([[{"subnet":"10.244.1.0/24"}]])"));
  struct stat st {};
  ASSERT_EQ(::stat(saved().c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  ASSERT_EQ(::stat(data().c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0700u);
}

TEST_F(FlannelTest, FailedAddDelegatesDelAndRemovesTheSavedConfig) {
  exec_.respond = [](const FakeExec::Call& c) -> cni::ExecOutput {
    return c.command == "ADD" ? Failure(11, "no addresses left") : cni::ExecOutput{0, ""};
  };
  try {
    Add(Args("ADD", Conf()), exec_);
    FAIL() << "ADD succeeded";
  } catch (const cni::Error& e) {
    EXPECT_EQ(e.code(), 11);
    EXPECT_EQ(e.msg(), "no addresses left");
  }
  EXPECT_THAT(exec_.Commands(), ElementsAre("ADD", "DEL"));
  EXPECT_EQ(exec_.calls[1].conf, exec_.calls[0].conf);
  EXPECT_FALSE(Exists(saved()));
}

// The delegate's process starts before the save, but gets its config only after it: when the save
// fails, the delegate never acts and nothing needs undoing.
TEST_F(FlannelTest, AddWhoseSaveFailsNeverRunsTheDelegate) {
  testing::WriteFile(data(), "a file where the folder should be");
  EXPECT_THROW(Add(Args("ADD", Conf()), exec_), cni::Error);
  EXPECT_TRUE(exec_.calls.empty());
}

TEST_F(FlannelTest, AddWithoutSubnetEnvChangesNothing) {
  std::filesystem::remove(dir_ / "subnet.env");
  EXPECT_THROW(Add(Args("ADD", Conf()), exec_), cni::Error);
  EXPECT_TRUE(exec_.calls.empty());
  EXPECT_FALSE(Exists(saved()));
}

TEST_F(FlannelTest, DelUsesTheSavedConfigNotTodaysSubnetEnv) {
  Add(Args("ADD", Conf()), exec_);
  json added = exec_.calls[0].conf;
  WriteEnv("10.244.7.1/24");  // the node got another lease
  Del(Args("DEL", Conf()), exec_);
  ASSERT_EQ(exec_.calls.size(), 2u);
  EXPECT_EQ(exec_.calls[1].command, "DEL");
  EXPECT_EQ(exec_.calls[1].conf, added);
  EXPECT_FALSE(Exists(saved()));
}

TEST_F(FlannelTest, DelKeepsTheSavedConfigWhenTheDelegateFails) {
  Add(Args("ADD", Conf()), exec_);
  exec_.respond = [](const FakeExec::Call&) { return Failure(5, "disk on fire"); };
  EXPECT_THROW(Del(Args("DEL", Conf()), exec_), cni::Error);
  EXPECT_TRUE(Exists(saved()));
  exec_.respond = nullptr;
  Del(Args("DEL", Conf()), exec_);  // the retry still has the config
  EXPECT_EQ(exec_.calls.back().conf, exec_.calls.front().conf);
  EXPECT_FALSE(Exists(saved()));
}

TEST_F(FlannelTest, DelWithoutSavedConfigRendersFromTheCurrentConfig) {
  Del(Args("DEL", Conf()), exec_);
  ASSERT_EQ(exec_.calls.size(), 1u);
  EXPECT_EQ(exec_.calls[0].command, "DEL");
  EXPECT_EQ(exec_.calls[0].conf["name"], "cbr0");
  EXPECT_EQ(exec_.calls[0].conf["ipam"]["type"], "host-local");
}

TEST_F(FlannelTest, DelWithNothingToGoOnSucceeds) {
  std::filesystem::remove(dir_ / "subnet.env");
  EXPECT_NO_THROW(Del(Args("DEL", Conf()), exec_));
  EXPECT_TRUE(exec_.calls.empty());
}

TEST_F(FlannelTest, DelReadsTheReferencePluginsScratchFile) {
  json legacy = {{"cniVersion", "0.3.1"},
                 {"name", "cbr0"},
                 {"type", "bridge"},
                 {"ipam", {{"type", "host-local"}, {"ranges", {{{{"subnet", "10.99.0.0/24"}}}}}}}};
  std::filesystem::create_directories(data());
  testing::WriteFile(data() + "/ctr1", legacy.dump());
  Del(Args("DEL", Conf()), exec_);
  ASSERT_EQ(exec_.calls.size(), 1u);
  EXPECT_EQ(exec_.calls[0].conf, legacy);
  EXPECT_FALSE(Exists(data() + "/ctr1"));
}

TEST_F(FlannelTest, DelWithADamagedSavedConfigRendersAndRemovesIt) {
  std::filesystem::create_directories(data());
  testing::WriteFile(saved(), "{not json");
  Del(Args("DEL", Conf()), exec_);
  ASSERT_EQ(exec_.calls.size(), 1u);
  EXPECT_EQ(exec_.calls[0].conf["name"], "cbr0");
  EXPECT_FALSE(Exists(saved()));
}

TEST_F(FlannelTest, CheckDelegatesTheSavedConfigWithPrevResult) {
  Add(Args("ADD", Conf()), exec_);
  WriteEnv("10.244.7.1/24");
  json conf = Conf();
  conf["prevResult"] = json::parse(kAddResult);
  Check(Args("CHECK", conf), exec_);
  ASSERT_EQ(exec_.calls.size(), 2u);
  json sent = exec_.calls[1].conf;
  EXPECT_EQ(exec_.calls[1].command, "CHECK");
  EXPECT_EQ(sent["ipam"], exec_.calls[0].conf["ipam"]);
  EXPECT_EQ(cni::ParseResult(sent["prevResult"], "1.0.0"), cni::ParseResult(json::parse(kAddResult)));
}

TEST_F(FlannelTest, CheckWithoutSavedConfigFails) {
  json conf = Conf();
  conf["prevResult"] = json::parse(kAddResult);
  EXPECT_THROW(Check(Args("CHECK", conf), exec_), cni::Error);
  EXPECT_TRUE(exec_.calls.empty());
}

TEST_F(FlannelTest, StatusIsNotAvailableWithoutAValidSubnetEnv) {
  for (const char* content : {"", "FLANNEL_NETWORK=10.244.0.0/16\n"}) {
    if (*content) {
      testing::WriteFile(dir_ / "subnet.env", content);
    } else {
      std::filesystem::remove(dir_ / "subnet.env");
    }
    try {
      Status(Args("STATUS", Conf("1.1.0")), exec_);
      ADD_FAILURE() << "STATUS succeeded with subnet.env = \"" << content << "\"";
    } catch (const cni::Error& e) {
      EXPECT_EQ(e.code(), cni::kNotAvailable);
    }
  }
  EXPECT_TRUE(exec_.calls.empty());
}

TEST_F(FlannelTest, StatusForwardsToTheDelegate) {
  Status(Args("STATUS", Conf("1.1.0")), exec_);
  ASSERT_EQ(exec_.calls.size(), 1u);
  EXPECT_EQ(exec_.calls[0].command, "STATUS");
  exec_.respond = [](const FakeExec::Call&) { return Failure(50, "pool exhausted"); };
  try {
    Status(Args("STATUS", Conf("1.1.0")), exec_);
    ADD_FAILURE() << "STATUS succeeded";
  } catch (const cni::Error& e) {
    EXPECT_EQ(e.code(), 50);
  }
}

class FlannelGcTest : public FlannelTest {
 protected:
  void SetUp() override {
    FlannelTest::SetUp();
    for (const char* cid : {"ctr1", "ctr2"}) Add(Args("ADD", Conf(), cid), exec_);
    testing::WriteFile(data() + "/ctr4", json{{"name", "cbr0"}, {"type", "bridge"}}.dump());  // reference's
    testing::WriteFile(data() + "/ctr3-eth0", json{{"name", "othernet"}, {"type", "bridge"}}.dump());
    exec_.calls.clear();
  }
  json GcConf() const {
    json conf = Conf("1.1.0");
    conf["cni.dev/valid-attachments"] = {{{"containerID", "ctr1"}, {"ifname", "eth0"}}};
    return conf;
  }
};

TEST_F(FlannelGcTest, RemovesSavedConfigsOfThisNetworkThatAreNotValid) {
  Gc(Args("GC", GcConf(), ""), exec_);
  ASSERT_EQ(exec_.calls.size(), 1u);
  EXPECT_EQ(exec_.calls[0].command, "GC");
  EXPECT_EQ(exec_.calls[0].conf["cni.dev/valid-attachments"], GcConf()["cni.dev/valid-attachments"]);
  EXPECT_THAT(testing::ListDir(data()), ElementsAre("ctr1-eth0", "ctr3-eth0"));
}

TEST_F(FlannelGcTest, KeepsEverythingWhenTheDelegateFails) {
  exec_.respond = [](const FakeExec::Call&) { return Failure(5, "no"); };
  EXPECT_THROW(Gc(Args("GC", GcConf(), ""), exec_), cni::Error);
  EXPECT_THAT(testing::ListDir(data()), ElementsAre("ctr1-eth0", "ctr2-eth0", "ctr3-eth0", "ctr4"));
}

TEST_F(FlannelGcTest, KeepsEverythingWithoutAValidList) {
  Gc(Args("GC", Conf("1.1.0"), ""), exec_);
  EXPECT_EQ(exec_.calls.size(), 1u);
  EXPECT_THAT(testing::ListDir(data()), ElementsAre("ctr1-eth0", "ctr2-eth0", "ctr3-eth0", "ctr4"));
}

}  // namespace
}  // namespace netiface::flannel
