#include "fake_plugins.h"

#include <sys/stat.h>

#include <algorithm>
#include <filesystem>
#include <sstream>

#include "netiface/cni/result.h"

namespace netiface::testing {

namespace fs = std::filesystem;

FakePlugins::FakePlugins() {
  fs::create_directories(dir_ / "bin");
  fs::create_directories(dir_ / "net.d");
  fs::create_directories(dir_ / "calls");
}

void FakePlugins::Add(const std::string& type) {
  const std::string d = dir_.path();
  std::string script =
      "#!/bin/sh\n"
      "D=" +
      d +
      "\n"
      "T=$(basename \"$0\")\n"
      "n=$(cat \"$D/seq\" 2>/dev/null || echo 0); n=$((n+1)); echo \"$n\" > \"$D/seq\"\n"
      "f=$(printf '%s/calls/%04d-%s-%s' \"$D\" \"$n\" \"$T\" \"$CNI_COMMAND\")\n"
      "cat > \"$f.stdin\"\n"
      "env | grep '^CNI_' > \"$f.env\"\n"
      "if [ -f \"$D/$T.fail-$CNI_COMMAND\" ]; then cat \"$D/$T.fail-$CNI_COMMAND\"; exit 1; fi\n"
      "if [ \"$CNI_COMMAND\" = ADD ] && [ -f \"$D/$T.result\" ]; then cat \"$D/$T.result\"; fi\n"
      "exit 0\n";
  std::string path = bin_dir() + "/" + type;
  WriteFile(path, script);
  chmod(path.c_str(), 0755);
}

void FakePlugins::SetResult(const std::string& type, const nlohmann::json& result) {
  WriteFile(dir_ / (type + ".result"), result.dump());
}

void FakePlugins::Fail(const std::string& type, const std::string& command, int code, const std::string& msg) {
  nlohmann::json err = {{"cniVersion", "1.0.0"}, {"code", code}, {"msg", msg}};
  WriteFile(dir_ / (type + ".fail-" + command), err.dump());
}

void FakePlugins::Unfail(const std::string& type, const std::string& command) {
  fs::remove(dir_ / (type + ".fail-" + command));
}

std::vector<FakeCall> FakePlugins::Calls() const {
  std::vector<std::string> names;
  for (const auto& n : ListDir(dir_ / "calls")) {
    if (n.size() > 6 && n.compare(n.size() - 6, 6, ".stdin") == 0) names.push_back(n.substr(0, n.size() - 6));
  }
  std::sort(names.begin(), names.end());
  std::vector<FakeCall> calls;
  for (const auto& base : names) {
    FakeCall c;
    // <seq>-<type>-<COMMAND>; types may contain '-', commands do not.
    auto first = base.find('-');
    auto last = base.rfind('-');
    c.type = base.substr(first + 1, last - first - 1);
    c.command = base.substr(last + 1);
    std::string in = ReadFile(dir_ / ("calls/" + base + ".stdin"));
    c.stdin_json = nlohmann::json::parse(in, nullptr, false);
    if (c.stdin_json.is_discarded()) c.stdin_json = nullptr;
    std::istringstream env(ReadFile(dir_ / ("calls/" + base + ".env")));
    for (std::string line; std::getline(env, line);) {
      auto eq = line.find('=');
      if (eq != std::string::npos) c.env[line.substr(0, eq)] = line.substr(eq + 1);
    }
    calls.push_back(std::move(c));
  }
  return calls;
}

void FakePlugins::ClearCalls() {
  fs::remove_all(dir_ / "calls");
  fs::create_directories(dir_ / "calls");
  fs::remove(dir_ / "seq");
}

std::string FakePlugins::WriteConf(const std::string& file, const std::string& bytes) const {
  std::string path = conf_dir() + "/" + file;
  WriteFile(path, bytes);
  return path;
}

nlohmann::json SampleResult(const std::string& version, const std::string& cidr, const std::string& ifname) {
  cni::Result r;
  r.interfaces.push_back({ifname, "0a:58:0a:00:00:02", "/run/netns/x", std::nullopt, "", ""});
  cni::IpConfig ip;
  ip.interface = 0;
  ip.address = *cni::IpNet::Parse(cidr);
  r.ips.push_back(ip);
  cni::Route route;
  route.dst = *cni::IpNet::Parse("0.0.0.0/0");
  r.routes.push_back(route);
  return cni::ResultToJson(r, version);
}

}  // namespace netiface::testing
