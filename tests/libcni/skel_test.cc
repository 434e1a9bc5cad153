#include "netiface/cni/skel.h"

#include <map>
#include <sstream>

#include <gtest/gtest.h>

#include "netiface/cni/error.h"
#include "testutil.h"

namespace netiface::cni {
namespace {

using nlohmann::json;

class FakeEnv : public Env {
 public:
  std::map<std::string, std::string> vars;
  std::string stdin_data;
  std::ostringstream out, err;

  std::optional<std::string> Get(const std::string& name) const override {
    auto it = vars.find(name);
    if (it == vars.end()) return std::nullopt;
    return it->second;
  }
  std::string ReadStdin() override { return stdin_data; }
  void WriteOut(std::string_view s) override { out << s; }
  void WriteErr(std::string_view s) override { err << s; }
};

std::string Conf(const std::string& version, const std::string& name = "net1") {
  return json{{"cniVersion", version}, {"name", name}, {"type", "fake"}}.dump();
}

Result OneIp() {
  Result r;
  r.interfaces = {{"eth0", "0a:00:00:00:00:01", "/run/netns/x", std::nullopt, "", ""}};
  r.ips = {{0, *IpNet::Parse("10.0.0.2/24"), IpAddr::Parse("10.0.0.1")}};
  r.routes = {{*IpNet::Parse("0.0.0.0/0"), std::nullopt}};
  return r;
}

// A plugin that records what skel handed each verb.
struct Recorder {
  std::vector<std::string> calls;
  CmdArgs last;
  Result result = OneIp();

  PluginFuncs Funcs() {
    PluginFuncs f;
    f.add = [this](const CmdArgs& a) {
      Record(a);
      return result;
    };
    f.del = [this](const CmdArgs& a) { Record(a); };
    f.check = [this](const CmdArgs& a) { Record(a); };
    f.status = [this](const CmdArgs& a) { Record(a); };
    f.gc = [this](const CmdArgs& a) { Record(a); };
    return f;
  }
  void Record(const CmdArgs& a) {
    calls.push_back(a.command);
    last = a;
  }
};

FakeEnv EnvFor(const std::string& command, const std::string& stdin_data) {
  FakeEnv env;
  env.vars = {{"CNI_COMMAND", command}, {"CNI_CONTAINERID", "ctr1"},  {"CNI_NETNS", "/run/netns/x"},
              {"CNI_IFNAME", "eth0"},   {"CNI_PATH", "/opt/cni/bin"}, {"CNI_ARGS", "IgnoreUnknown=1"}};
  env.stdin_data = stdin_data;
  return env;
}

// Runs PluginMain and checks the error contract: exit 1, only the error object on WriteOut().
json ExpectError(const PluginFuncs& funcs, FakeEnv& env, int code, const PluginInfo& info = PluginInfo{}) {
  int rc = PluginMain(funcs, info, env);
  EXPECT_EQ(rc, 1);
  json j = json::parse(env.out.str(), nullptr, false);
  EXPECT_TRUE(j.is_object()) << env.out.str();
  if (!j.is_object()) return j;
  EXPECT_EQ(j["code"], code) << env.out.str();
  EXPECT_TRUE(j["msg"].is_string());
  EXPECT_TRUE(!j.contains("cniVersion") || j["cniVersion"].is_string());
  for (const auto& [k, v] : j.items()) {
    EXPECT_TRUE(k == "cniVersion" || k == "code" || k == "msg" || k == "details") << k;
  }
  if (j.contains("details")) {
    EXPECT_NE(j["details"], "");
  }
  // The reference's bytes. An invalid UTF-8 byte in a message is written as the escape \ufffd (as Go does),
  // which parses back to U+FFFD itself, written as it is: none of these messages holds a real U+FFFD.
  std::string want = PrintJson(j);
  for (size_t at; (at = want.find("\xEF\xBF\xBD")) != std::string::npos;) want.replace(at, 3, "\\ufffd");
  EXPECT_EQ(env.out.str(), want);
  return j;
}

const char* kVerbs[] = {"ADD", "DEL", "CHECK", "STATUS", "GC"};

TEST(SkelTest, AddPrintsTheResultAtTheConfVersion) {
  for (const auto& v : testing::AllVersions()) {
    SCOPED_TRACE(v);
    Recorder rec;
    FakeEnv env = EnvFor("ADD", Conf(v));
    ASSERT_EQ(PluginMain(rec.Funcs(), PluginInfo{}, env), 0) << env.out.str();
    EXPECT_EQ(env.out.str(), PrintJson(ResultToJson(rec.result, v)));
    EXPECT_EQ(json::parse(env.out.str())["cniVersion"], v);
    ASSERT_EQ(rec.calls, std::vector<std::string>{"ADD"});
    EXPECT_EQ(rec.last.container_id, "ctr1");
    EXPECT_EQ(rec.last.netns, "/run/netns/x");
    EXPECT_EQ(rec.last.ifname, "eth0");
    EXPECT_EQ(rec.last.path, "/opt/cni/bin");
    EXPECT_EQ(rec.last.args, "IgnoreUnknown=1");
    EXPECT_EQ(rec.last.stdin_data, Conf(v));
    EXPECT_EQ(rec.last.conf.name, "net1");
    EXPECT_EQ(rec.last.conf.cni_version, v);
  }
}

TEST(SkelTest, OtherVerbsPrintNothing) {
  for (const char* verb : {"DEL", "CHECK", "STATUS", "GC"}) {
    Recorder rec;
    FakeEnv env = EnvFor(verb, Conf("1.1.0"));
    EXPECT_EQ(PluginMain(rec.Funcs(), PluginInfo{}, env), 0) << verb << env.out.str();
    EXPECT_EQ(env.out.str(), "") << verb;
    EXPECT_EQ(rec.calls, std::vector<std::string>{verb});
  }
}

TEST(SkelTest, VersionGates) {
  for (const auto& v : testing::AllVersions()) {
    for (const char* verb : kVerbs) {
      SCOPED_TRACE(v + " " + verb);
      std::string min = std::string(verb) == "CHECK"                                   ? "0.4.0"
                        : (std::string(verb) == "STATUS" || std::string(verb) == "GC") ? "1.1.0"
                                                                                       : "0.1.0";
      Recorder rec;
      FakeEnv env = EnvFor(verb, Conf(v));
      if (VersionAtLeast(v, min)) {
        EXPECT_EQ(PluginMain(rec.Funcs(), PluginInfo{}, env), 0) << env.out.str();
        EXPECT_EQ(rec.calls.size(), 1u);
      } else {
        json e = ExpectError(rec.Funcs(), env, kIncompatibleVersion);
        EXPECT_EQ(e["cniVersion"], v);
        EXPECT_TRUE(rec.calls.empty());
      }
    }
  }
}

TEST(SkelTest, RequiredVariablesPerVerb) {
  const std::map<std::string, std::vector<std::string>> required = {
      {"ADD", {"CNI_CONTAINERID", "CNI_NETNS", "CNI_IFNAME", "CNI_PATH"}},
      {"CHECK", {"CNI_CONTAINERID", "CNI_NETNS", "CNI_IFNAME", "CNI_PATH"}},
      {"DEL", {"CNI_CONTAINERID", "CNI_IFNAME", "CNI_PATH"}},
      {"GC", {"CNI_PATH"}},
      {"STATUS", {}},
  };
  const std::vector<std::string> all = {"CNI_CONTAINERID", "CNI_NETNS", "CNI_IFNAME", "CNI_PATH", "CNI_ARGS"};
  for (const auto& [verb, vars] : required) {
    for (const auto& var : all) {
      bool needed = std::find(vars.begin(), vars.end(), var) != vars.end();
      for (bool empty_value : {false, true}) {
        SCOPED_TRACE(verb + " without " + var + (empty_value ? " (empty)" : ""));
        Recorder rec;
        FakeEnv env = EnvFor(verb, Conf("1.1.0"));
        if (empty_value) {
          env.vars[var] = "";
        } else {
          env.vars.erase(var);
        }
        if (needed) {
          json e = ExpectError(rec.Funcs(), env, kInvalidEnv);
          EXPECT_NE(e["msg"].get<std::string>().find(var), std::string::npos) << e["msg"];
          EXPECT_TRUE(rec.calls.empty());
        } else {
          EXPECT_EQ(PluginMain(rec.Funcs(), PluginInfo{}, env), 0) << env.out.str();
          EXPECT_EQ(rec.calls.size(), 1u);
        }
      }
    }
  }
}

TEST(SkelTest, StatusNeedsOnlyTheCommand) {
  Recorder rec;
  FakeEnv env;
  env.vars = {{"CNI_COMMAND", "STATUS"}};
  env.stdin_data = Conf("1.1.0");
  EXPECT_EQ(PluginMain(rec.Funcs(), PluginInfo{}, env), 0) << env.out.str();
  EXPECT_EQ(rec.calls, std::vector<std::string>{"STATUS"});
  EXPECT_EQ(rec.last.netns, "");
}

TEST(SkelTest, BadIfnamesAndContainerIds) {
  for (const char* ifname : {"0123456789abcdef", ".", "..", "a/b", "a:b", "a b", "a\tb", "eth0\n"}) {
    for (const char* verb : {"ADD", "DEL", "CHECK"}) {
      Recorder rec;
      FakeEnv env = EnvFor(verb, Conf("1.0.0"));
      env.vars["CNI_IFNAME"] = ifname;
      json e = ExpectError(rec.Funcs(), env, kInvalidEnv);
      EXPECT_NE(e["msg"].get<std::string>().find("CNI_IFNAME"), std::string::npos) << ifname;
      EXPECT_TRUE(rec.calls.empty());
    }
  }
  for (const char* id : {"../x", "a/b", "-x", ".hidden", "..", "a b", "x;y"}) {
    Recorder rec;
    FakeEnv env = EnvFor("ADD", Conf("1.0.0"));
    env.vars["CNI_CONTAINERID"] = id;
    json e = ExpectError(rec.Funcs(), env, kInvalidEnv);
    EXPECT_NE(e["msg"].get<std::string>().find("CNI_CONTAINERID"), std::string::npos) << id;
    EXPECT_TRUE(rec.calls.empty());
  }
  Recorder rec;
  FakeEnv env = EnvFor("ADD", Conf("1.0.0"));
  env.vars["CNI_IFNAME"] = "0123456789abcde";  // 15: the longest allowed
  EXPECT_EQ(PluginMain(rec.Funcs(), PluginInfo{}, env), 0) << env.out.str();
}

TEST(SkelTest, GarbageStdin) {
  struct Case {
    std::string stdin_data;
    int code;
  } cases[] = {
      {"", kDecodeFailure},
      {" \n\t", kDecodeFailure},
      {"{", kDecodeFailure},
      {"null", kDecodeFailure},
      {"[1,2]", kDecodeFailure},
      {"\xff\xfe", kDecodeFailure},
      {Conf("1.0.0", "../x"), kInvalidConfig},
      {Conf("1.0.0", ""), kInvalidConfig},
      {R"({"cniVersion": "1.0.0", "type": "fake"})", kInvalidConfig},
      {Conf("0.5.0"), kIncompatibleVersion},
      {Conf("42"), kIncompatibleVersion},
  };
  for (const auto& c : cases) {
    for (const char* verb : kVerbs) {
      Recorder rec;
      FakeEnv env = EnvFor(verb, c.stdin_data);
      json e = ExpectError(rec.Funcs(), env, c.code);
      EXPECT_TRUE(rec.calls.empty()) << verb << " " << c.stdin_data;
    }
  }
}

TEST(SkelTest, ErrorVersionIsTheRequestsWhenKnown) {
  Recorder rec;
  FakeEnv garbage = EnvFor("ADD", "{");
  EXPECT_FALSE(ExpectError(rec.Funcs(), garbage, kDecodeFailure).contains("cniVersion"));
  FakeEnv unknown = EnvFor("ADD", Conf("9.9.9", "n"));
  EXPECT_FALSE(ExpectError(rec.Funcs(), unknown, kIncompatibleVersion).contains("cniVersion"));
  FakeEnv no_env = EnvFor("ADD", Conf("1.0.0", "n"));
  no_env.vars.erase("CNI_IFNAME");
  EXPECT_FALSE(ExpectError(rec.Funcs(), no_env, kInvalidEnv).contains("cniVersion"));
  FakeEnv no_version = EnvFor("ADD", R"({"name": "../x"})");
  EXPECT_EQ(ExpectError(rec.Funcs(), no_version, kInvalidConfig)["cniVersion"], "0.1.0");
  FakeEnv old = EnvFor("ADD", Conf("0.3.1", "../x"));
  EXPECT_EQ(ExpectError(rec.Funcs(), old, kInvalidConfig)["cniVersion"], "0.3.1");
}

TEST(SkelTest, VersionNotSupportedByThisPlugin) {
  PluginInfo info;
  info.supported_versions = {"0.4.0", "1.0.0"};
  Recorder rec;
  FakeEnv env = EnvFor("ADD", Conf("0.3.1"));
  json e = ExpectError(rec.Funcs(), env, kIncompatibleVersion, info);
  EXPECT_NE(e["details"].get<std::string>().find("\"1.0.0\""), std::string::npos);
  EXPECT_TRUE(rec.calls.empty());
}

TEST(SkelTest, UnknownOrMissingCommand) {
  Recorder rec;
  FakeEnv unknown = EnvFor("FROB", Conf("1.0.0"));
  json e = ExpectError(rec.Funcs(), unknown, kInvalidEnv);
  EXPECT_NE(e["msg"].get<std::string>().find("FROB"), std::string::npos);
  FakeEnv lower = EnvFor("add", Conf("1.0.0"));
  ExpectError(rec.Funcs(), lower, kInvalidEnv);
  EXPECT_TRUE(rec.calls.empty());

  // As the reference: the about text and versions on stderr, nothing on stdout, success.
  FakeEnv none = EnvFor("", Conf("1.0.0"));
  none.vars.erase("CNI_COMMAND");
  PluginInfo info;
  info.about = "CNI fake plugin v0";
  EXPECT_EQ(PluginMain(rec.Funcs(), info, none), 0);
  EXPECT_EQ(none.out.str(), "");
  EXPECT_NE(none.err.str().find("CNI fake plugin v0"), std::string::npos);
  EXPECT_NE(none.err.str().find("0.1.0, 0.2.0"), std::string::npos);
  // Without an about text it is an environment error.
  FakeEnv bare = EnvFor("", "");
  bare.vars.erase("CNI_COMMAND");
  json e2 = ExpectError(rec.Funcs(), bare, kInvalidEnv);
  EXPECT_NE(e2["msg"].get<std::string>().find("CNI_COMMAND"), std::string::npos);
  EXPECT_TRUE(rec.calls.empty());
}

TEST(SkelTest, VersionCommand) {
  Recorder rec;
  auto version = [&](const std::string& stdin_data, const PluginInfo& info) {
    FakeEnv env;
    env.vars = {{"CNI_COMMAND", "VERSION"}};
    env.stdin_data = stdin_data;
    EXPECT_EQ(PluginMain(rec.Funcs(), info, env), 0);
    EXPECT_EQ(env.out.str().back(), '\n');
    return json::parse(env.out.str());
  };
  PluginInfo all;
  json j = version("", all);
  EXPECT_EQ(j, (json{{"cniVersion", "1.1.0"}, {"supportedVersions", testing::AllVersions()}}));
  for (const auto& v : testing::AllVersions()) {
    EXPECT_EQ(version(R"({"cniVersion": ")" + v + R"("})", all)["cniVersion"], v);
  }
  EXPECT_EQ(version(R"({"cniVersion": "9.9.9"})", all)["cniVersion"], "1.1.0");
  EXPECT_EQ(version("garbage", all)["cniVersion"], "1.1.0");
  PluginInfo some;
  some.supported_versions = {"0.3.1", "0.4.0"};
  json s = version(R"({"cniVersion": "1.1.0"})", some);
  EXPECT_EQ(s["supportedVersions"], json({"0.3.1", "0.4.0"}));
  EXPECT_EQ(s["cniVersion"], "0.4.0");
  EXPECT_TRUE(rec.calls.empty());
}

TEST(SkelTest, MissingFuncs) {
  PluginFuncs only_add_del;
  only_add_del.add = [](const CmdArgs&) { return OneIp(); };
  only_add_del.del = [](const CmdArgs&) {};
  FakeEnv check = EnvFor("CHECK", Conf("1.1.0"));
  ExpectError(only_add_del, check, kInvalidEnv);
  for (const char* verb : {"STATUS", "GC"}) {
    FakeEnv env = EnvFor(verb, Conf("1.1.0"));
    EXPECT_EQ(PluginMain(only_add_del, PluginInfo{}, env), 0) << verb;
    EXPECT_EQ(env.out.str(), "");
  }
}

TEST(SkelTest, ExceptionsBecomeErrorJson) {
  PluginFuncs f;
  f.add = [](const CmdArgs&) -> Result { throw Error(kTryAgainLater, "busy", "lock held"); };
  FakeEnv env = EnvFor("ADD", Conf("0.4.0"));
  json e = ExpectError(f, env, kTryAgainLater);
  EXPECT_EQ(e, (json{{"cniVersion", "0.4.0"}, {"code", 11}, {"msg", "busy"}, {"details", "lock held"}}));

  f.del = [](const CmdArgs&) { throw std::runtime_error("boom"); };
  FakeEnv del = EnvFor("DEL", Conf("1.0.0"));
  EXPECT_EQ(ExpectError(f, del, kInternal)["msg"], "boom");

  f.check = [](const CmdArgs&) { throw 42; };
  FakeEnv check = EnvFor("CHECK", Conf("1.0.0"));
  ExpectError(f, check, kInternal);

  f.status = [](const CmdArgs&) { throw Error(kNotAvailable, "pool exhausted"); };
  FakeEnv status = EnvFor("STATUS", Conf("1.1.0"));
  json s = ExpectError(f, status, kNotAvailable);
  EXPECT_FALSE(s.contains("details"));
}

TEST(SkelTest, AddResultThatCannotBeConverted) {
  Recorder rec;
  rec.result = Result{};
  rec.result.interfaces = {{"eth0", "", "", std::nullopt, "", ""}};
  FakeEnv env = EnvFor("ADD", Conf("0.2.0"));
  json e = ExpectError(rec.Funcs(), env, kIncompatibleVersion);
  EXPECT_EQ(e["msg"], "cannot convert: no valid IP addresses");
}

TEST(SkelTest, GcSeesValidAttachments) {
  Recorder rec;
  FakeEnv env = EnvFor("GC", R"({"cniVersion": "1.1.0", "name": "n",
      "cni.dev/valid-attachments": [{"containerID": "a", "ifname": "eth0"}]})");
  env.vars.erase("CNI_CONTAINERID");
  env.vars.erase("CNI_IFNAME");
  env.vars.erase("CNI_NETNS");
  ASSERT_EQ(PluginMain(rec.Funcs(), PluginInfo{}, env), 0) << env.out.str();
  ASSERT_TRUE(rec.last.conf.valid_attachments);
  EXPECT_EQ(rec.last.conf.valid_attachments->at(0).container_id, "a");
}

TEST(ValidateTest, Ifname) {
  EXPECT_NO_THROW(ValidateIfname("eth0"));
  EXPECT_NO_THROW(ValidateIfname("a.b-c_d"));
  for (const char* bad : {"", ".", "..", "0123456789abcdef", "a/b", "a:b", "a b", "a\nb", "a\vb"}) {
    EXPECT_THROW(ValidateIfname(bad), Error) << bad;
  }
  EXPECT_NO_THROW(ValidateContainerId("0123abcd-ef.x_y"));
  for (const char* bad : {"", "../x", "/abs", "-x"}) EXPECT_THROW(ValidateContainerId(bad), Error) << bad;
}

}  // namespace
}  // namespace netiface::cni
