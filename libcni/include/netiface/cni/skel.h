// The plugin entry point: reads the CNI environment and stdin, validates them, dispatches one verb and
// turns every failure into the spec's error JSON. This is the suite's only error boundary.
#pragma once

#include <functional>
#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

#include "netiface/cni/config.h"
#include "netiface/cni/result.h"
#include "netiface/cni/version.h"

namespace netiface::cni {

// What skel hands a verb: validated environment plus the parsed config.
struct CmdArgs {
  std::string command;  // ADD, DEL, CHECK, STATUS, GC
  std::string container_id;
  std::string netns;  // may be empty for DEL, STATUS, GC
  std::string ifname;
  std::string args;        // raw CNI_ARGS
  std::string path;        // CNI_PATH
  std::string stdin_data;  // the exact bytes read
  NetConf conf;
};

// Seam at the OS edge: the environment, stdin and the two output streams.
class Env {
 public:
  virtual ~Env() = default;
  virtual std::optional<std::string> Get(const std::string& name) const = 0;
  virtual std::string ReadStdin() = 0;
  virtual void WriteOut(std::string_view s) = 0;  // the result's alone
  virtual void WriteErr(std::string_view s) = 0;  // logs
};
// The process's real environment, stdin, stdout and stderr.
Env& ProcessEnv();

struct PluginFuncs {
  std::function<Result(const CmdArgs&)> add;
  std::function<void(const CmdArgs&)> del;
  std::function<void(const CmdArgs&)> check;   // may be empty: CHECK is then an error
  std::function<void(const CmdArgs&)> status;  // may be empty: STATUS then succeeds
  std::function<void(const CmdArgs&)> gc;      // may be empty: GC then succeeds
};

struct PluginInfo {
  std::string about;  // printed for a call without CNI_COMMAND
  std::vector<std::string> supported_versions = AllVersions();
  // The config keys the plugin's README documents (config_keys.h), in `keys_section` of the config
  // ("" the top level; host-local's are in "ipam"): an ADD logs a warning for every other key.
  std::vector<std::string> documented_keys = {};
  std::string keys_section = "";
  static std::vector<std::string> AllVersions();  // kSupportedVersions as strings
};

// Runs one verb. Returns the process exit code (0 on success, 1 on error). On success ADD prints
// the Result in conf.cni_version's shape, other verbs print nothing; VERSION prints
// {cniVersion, supportedVersions}. On failure prints the error JSON on WriteOut().
// Checks: required variables per verb; CNI_CONTAINERID and the network name are valid names;
// CNI_IFNAME <= 15 chars, not "."/"..", no '/', ':' or whitespace; the config's version is supported
// by the plugin and new enough for the verb (CHECK >= 0.4.0, STATUS and GC >= 1.1.0).
int PluginMain(const PluginFuncs& funcs, const PluginInfo& info, Env& env);
inline int PluginMain(const PluginFuncs& funcs, const PluginInfo& info) {
  return PluginMain(funcs, info, ProcessEnv());
}
// A plugin's main: `<plugin> --version` prints VersionLine (build_info.h) and exits 0; anything else is
// the CNI protocol (arguments are ignored, as runtimes pass none).
int PluginMain(const PluginFuncs& funcs, const PluginInfo& info, int argc, char** argv);

// Validation used by skel, exposed for the runtime and the tests. Throw Error(kInvalidEnv) naming
// the variable.
void ValidateContainerId(const std::string& id);
void ValidateIfname(const std::string& ifname);

}  // namespace netiface::cni
