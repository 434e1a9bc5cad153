#include "netiface/cni/skel.h"

#include <unistd.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <utility>

#include "netiface/cni/build_info.h"
#include "netiface/cni/config_keys.h"
#include "netiface/cni/error.h"
#include "netiface/cni/fault.h"
#include "netiface/cni/file.h"
#include "netiface/cni/ifname.h"
#include "netiface/cni/in_process.h"
#include "netiface/cni/log.h"

namespace netiface::cni {
namespace {

using nlohmann::json;

class RealEnv : public Env {
 public:
  std::optional<std::string> Get(const std::string& name) const override {
    const char* v = std::getenv(name.c_str());
    if (!v) return std::nullopt;
    return std::string(v);
  }
  std::string ReadStdin() override {
    std::string out;
    char buf[65536];
    while (true) {
      ssize_t n = ::read(STDIN_FILENO, buf, sizeof(buf));
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) break;  // EOF, or no usable stdin: treated as empty
      out.append(buf, static_cast<size_t>(n));
    }
    return out;
  }
  // Plain write(2): <iostream> would cost every plugin process its static initialisation (the locale
  // and eight streams, ~44k instructions, most of a host-local call's own work).
  void WriteOut(std::string_view s) override { WriteFd(STDOUT_FILENO, s, "stdout"); }
  void WriteErr(std::string_view s) override { WriteFd(STDERR_FILENO, s, "stderr"); }

 private:
  static void WriteFd(int fd, std::string_view s, const std::string& what) {
    try {
      WriteAll(fd, s, what);
    } catch (const Error&) {
      // A closed stdout or stderr has no reader to tell.
    }
  }
};

struct VerbSpec {
  std::string_view name;
  bool container_id, netns, ifname, path;
  std::string_view min_version;  // the oldest config version that allows the verb
};

constexpr std::array<VerbSpec, 5> kVerbs = {{
    {"ADD", true, true, true, true, "0.1.0"},
    {"DEL", true, false, true, true, "0.1.0"},
    {"CHECK", true, true, true, true, "0.4.0"},
    {"STATUS", false, false, false, false, "1.1.0"},
    {"GC", false, false, false, true, "1.1.0"},
}};

std::string Nonempty(const Env& env, const char* name) { return env.Get(name).value_or(""); }

bool Contains(const std::vector<std::string>& v, std::string_view s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

std::string Join(const std::vector<std::string>& v, std::string_view sep, bool quote) {
  std::string out;
  for (const auto& s : v) {
    if (!out.empty()) out += sep;
    out += quote ? "\"" + s + "\"" : s;
  }
  return out;
}

// The requested version of a VERSION call: stdin's cniVersion when the plugin speaks it.
std::string VersionReply(const std::string& stdin_data, const PluginInfo& info) {
  std::string fallback = Contains(info.supported_versions, kCurrentVersion) || info.supported_versions.empty()
                             ? std::string(kCurrentVersion)
                             : info.supported_versions.back();
  json j = json::parse(stdin_data, nullptr, /*allow_exceptions=*/false);
  if (j.is_object() && j.contains("cniVersion") && j["cniVersion"].is_string()) {
    std::string v = j["cniVersion"].get<std::string>();
    if (Contains(info.supported_versions, v)) return v;
  }
  return fallback;
}

// The version to put in an error object: the request's own when it is one we speak, none (the key is
// left out, as the reference always does) when the request has not been read or names no version we know.
std::string ErrorVersion(const std::string& stdin_data) {
  json j = json::parse(stdin_data, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object()) return "";
  auto it = j.find("cniVersion");
  if (it == j.end() || it->is_null()) return "0.1.0";
  if (it->is_string() && IsSupportedVersion(it->get<std::string>())) return it->get<std::string>();
  return "";
}

// The program's name (argv[0]'s last component) for the log lines; "plugin" when not run from a main.
std::string& ProgramName() {
  static std::string* name = new std::string("plugin");
  return *name;
}

// What every log line of the call names; the network once the config is read.
void SetLogContext(const CmdArgs& args, const std::string& network) {
  std::string c = ProgramName() + " " + args.command;
  if (!args.container_id.empty()) c += " container=" + args.container_id;
  if (!args.ifname.empty()) c += " ifname=" + args.ifname;
  if (!network.empty()) c += " network=" + network;
  log::SetContext(std::move(c));
}

int Dispatch(const PluginFuncs& funcs, const PluginInfo& info, Env& env, std::string& stdin_data) {
  std::string command = Nonempty(env, "CNI_COMMAND");
  log::SetContext(command.empty() ? ProgramName() : ProgramName() + " " + command);  // nothing of an earlier call
  if (command.empty()) {
    if (info.about.empty()) throw Error(kInvalidEnv, "required env variables [CNI_COMMAND] missing");
    env.WriteErr(info.about + "\nversion " + std::string(ProjectVersion()) + " (" + std::string(SourceRevision()) +
                 ")\nCNI protocol versions supported: " + Join(info.supported_versions, ", ", false) + "\n");
    return 0;
  }
  if (command == "VERSION") {
    stdin_data = env.ReadStdin();
    json reply = {{"cniVersion", VersionReply(stdin_data, info)}, {"supportedVersions", info.supported_versions}};
    env.WriteOut(reply.dump() + "\n");
    return 0;
  }
  auto verb = std::find_if(kVerbs.begin(), kVerbs.end(), [&](const VerbSpec& v) { return v.name == command; });
  if (verb == kVerbs.end()) throw Error(kInvalidEnv, "unknown CNI_COMMAND: " + command);

  CmdArgs args;
  args.command = command;
  args.container_id = Nonempty(env, "CNI_CONTAINERID");
  args.netns = Nonempty(env, "CNI_NETNS");
  args.ifname = Nonempty(env, "CNI_IFNAME");
  args.args = Nonempty(env, "CNI_ARGS");
  args.path = Nonempty(env, "CNI_PATH");
  // Until the config is read (and names its own), the default file and level: an ADD failing on its
  // environment or its JSON is in the log file too.
  log::Configure(json(), DefaultLogFile());
  SetLogContext(args, "");
  std::vector<std::string> missing;
  if (verb->container_id && args.container_id.empty()) missing.push_back("CNI_CONTAINERID");
  if (verb->netns && args.netns.empty()) missing.push_back("CNI_NETNS");
  if (verb->ifname && args.ifname.empty()) missing.push_back("CNI_IFNAME");
  if (verb->path && args.path.empty()) missing.push_back("CNI_PATH");
  if (!missing.empty()) throw Error(kInvalidEnv, "required env variables [" + Join(missing, ",", false) + "] missing");
  if (verb->container_id) ValidateContainerId(args.container_id);
  if (verb->ifname) ValidateIfname(args.ifname);

  stdin_data = env.ReadStdin();
  args.stdin_data = stdin_data;
  if (stdin_data.find_first_not_of(" \t\r\n") == std::string::npos) {
    throw Error(kDecodeFailure, "error decoding network config", "empty stdin");
  }
  args.conf = ParseNetConf(stdin_data);
  const std::string& version = args.conf.cni_version;
  if (!Contains(info.supported_versions, version)) {
    throw Error(kIncompatibleVersion, "incompatible CNI versions",
                "config is \"" + version + "\", plugin supports [" + Join(info.supported_versions, " ", true) + "]");
  }
  if (CompareVersions(version, verb->min_version) < 0) {
    throw Error(kIncompatibleVersion, "config version does not allow " + command);
  }
  log::Configure(args.conf.raw, DefaultLogFile());
  SetLogContext(args, args.conf.name);
  if (command == "ADD" && !info.documented_keys.empty()) {
    for (const auto& w : UnknownKeyWarnings(args.conf.raw, info.documented_keys, info.keys_section)) log::Warn("{}", w);
  }

  if (command == "ADD") {
    if (!funcs.add) throw Error(kInvalidEnv, "plugin does not support ADD");
    Result result = funcs.add(args);
    env.WriteOut(PrintJson(ResultToJson(result, version)));
  } else if (command == "DEL") {
    if (!funcs.del) throw Error(kInvalidEnv, "plugin does not support DEL");
    funcs.del(args);
  } else if (command == "CHECK") {
    if (!funcs.check) throw Error(kInvalidEnv, "plugin does not support CHECK");
    funcs.check(args);
  } else if (command == "STATUS") {
    if (funcs.status) funcs.status(args);
  } else if (funcs.gc) {
    funcs.gc(args);
  }
  return 0;
}

int Fail(const Error& e, const std::string& stdin_data, Env& env) {
  std::string command = env.Get("CNI_COMMAND").value_or("");
  log::Error("{} failed: code {}: {}", command.empty() ? "call" : command, e.code(), e.what());
  env.WriteOut(PrintJson(e.ToJson(ErrorVersion(stdin_data))));
  return 1;
}

}  // namespace

Env& ProcessEnv() {
  static RealEnv env;
  return env;
}

int PluginMain(const PluginFuncs& funcs, const PluginInfo& info, int argc, char** argv) {
  if (argc >= 2 && std::string_view(argv[1]) == "--version") {
    std::string_view program = argv[0];
    if (auto slash = program.rfind('/'); slash != std::string_view::npos) program.remove_prefix(slash + 1);
    std::printf("%s\n", VersionLine(program).c_str());
    return 0;
  }
  if (argc >= 1 && argv[0] && *argv[0]) {
    std::string_view program = argv[0];
    if (auto slash = program.rfind('/'); slash != std::string_view::npos) program.remove_prefix(slash + 1);
    ProgramName() = std::string(program);
  }
  return PluginMain(funcs, info);
}

int RunPluginInProcess(std::string_view program, const PluginEntry& entry, Env& env) {
  std::string caller = std::exchange(ProgramName(), std::string(program));
  std::shared_ptr<log::SavedState> caller_log = log::SaveState();
  int code = 1;
  {
    fault::ScopedProgram points(program);
    code = PluginMain(entry.funcs, entry.info, env);
  }
  log::RestoreState(caller_log);
  ProgramName() = std::move(caller);
  return code;
}

std::vector<std::string> PluginInfo::AllVersions() {
  return std::vector<std::string>(kSupportedVersions.begin(), kSupportedVersions.end());
}

void ValidateContainerId(const std::string& id) {
  if (id.empty()) throw Error(kInvalidEnv, "CNI_CONTAINERID is empty");
  if (!IsValidName(id)) throw Error(kInvalidEnv, "invalid characters in CNI_CONTAINERID", id);
}

void ValidateIfname(const std::string& ifname) {
  switch (CheckIfname(ifname)) {
    case IfnameProblem::kNone:
      return;
    case IfnameProblem::kEmpty:
      throw Error(kInvalidEnv, "CNI_IFNAME: interface name is empty");
    case IfnameProblem::kTooLong:
      throw Error(kInvalidEnv, "CNI_IFNAME: interface name is too long", ifname);
    case IfnameProblem::kDotName:
      throw Error(kInvalidEnv, "CNI_IFNAME: interface name cannot be . or ..");
    case IfnameProblem::kBadCharacter:
      throw Error(kInvalidEnv, "CNI_IFNAME: interface name contains / or : or whitespace characters", ifname);
  }
}

int PluginMain(const PluginFuncs& funcs, const PluginInfo& info, Env& env) {
  std::string stdin_data;
  try {
    return Dispatch(funcs, info, env, stdin_data);
  } catch (const Error& e) {
    return Fail(e, stdin_data, env);
  } catch (const std::exception& e) {
    return Fail(Error(kInternal, e.what()), stdin_data, env);
  } catch (...) {
    return Fail(Error(kInternal, "unknown error"), stdin_data, env);
  }
}

}  // namespace netiface::cni
