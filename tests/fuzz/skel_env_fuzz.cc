// A whole plugin call as skel reads it: "NAME=value" lines (the environment) up to a NUL, then stdin.
// The verbs do nothing; what is fuzzed is skel's validation, version negotiation, config parse and
// error output.
#include <sstream>

#include "fuzz_util.h"
#include "netiface/cni/skel.h"

namespace {

class FuzzEnv : public netiface::cni::Env {
 public:
  FuzzEnv(std::string_view vars, std::string_view in) : stdin_(in) {
    std::istringstream lines{std::string(vars)};
    for (std::string l; std::getline(lines, l);) {
      if (auto eq = l.find('='); eq != std::string::npos) vars_[l.substr(0, eq)] = l.substr(eq + 1);
    }
  }
  std::optional<std::string> Get(const std::string& name) const override {
    auto it = vars_.find(name);
    if (it == vars_.end()) return std::nullopt;
    return it->second;
  }
  std::string ReadStdin() override { return stdin_; }
  void WriteOut(std::string_view s) override { out_ += s; }
  void WriteErr(std::string_view s) override { err_ += s; }

 private:
  std::map<std::string, std::string> vars_;
  std::string stdin_, out_, err_;
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace netiface;
  auto [vars, in] = fuzz::Split(fuzz::Bytes(data, size));
  // skel hands the config to log::Configure, which opens the "logFile" it names: a harness must not
  // write where an input says, so those keys go (the rest of the bytes are unchanged).
  std::string stdin_data(in);
  if (nlohmann::json j = fuzz::Json(in); j.is_object() && (j.contains("logFile") || j.contains("logLevel"))) {
    j.erase("logFile");
    j.erase("logLevel");
    stdin_data = j.dump();
  }
  FuzzEnv env(vars, stdin_data);
  cni::PluginFuncs funcs;
  funcs.add = [](const cni::CmdArgs& a) { return a.conf.prev_result ? *a.conf.prev_result : cni::Result{}; };
  funcs.del = [](const cni::CmdArgs&) {};
  funcs.check = [](const cni::CmdArgs&) {};
  cni::PluginMain(funcs, cni::PluginInfo{}, env);
  return 0;
}
