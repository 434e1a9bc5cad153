// Fake CNI plugins for the runtime and CLI unit tests: /bin/sh scripts in a TempDir that record every
// call (stdin and CNI_* environment, in call order) and answer from files the test writes.
#pragma once

#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "testutil.h"

namespace netiface::testing {

struct FakeCall {
  std::string type;
  std::string command;
  nlohmann::json stdin_json;               // null when stdin was not JSON
  std::map<std::string, std::string> env;  // the CNI_* variables only
};

class FakePlugins {
 public:
  FakePlugins();
  // Installs a plugin named `type` in bin_dir().
  void Add(const std::string& type);
  // What `type` prints on ADD (a result object); without one ADD prints nothing.
  void SetResult(const std::string& type, const nlohmann::json& result);
  // Makes `type` fail `command` with the spec's error object and exit 1.
  void Fail(const std::string& type, const std::string& command, int code, const std::string& msg);
  void Unfail(const std::string& type, const std::string& command);
  // Every call so far, oldest first.
  std::vector<FakeCall> Calls() const;
  void ClearCalls();

  std::string bin_dir() const { return dir_ / "bin"; }
  std::string conf_dir() const { return dir_ / "net.d"; }
  std::string cache_dir() const { return dir_ / "cache"; }
  // Writes <conf_dir>/<file> and returns its path.
  std::string WriteConf(const std::string& file, const std::string& bytes) const;

 private:
  TempDir dir_;
};

// A result in the canonical 1.1 shape with one container interface and address `cidr`.
nlohmann::json SampleResult(const std::string& version, const std::string& cidr, const std::string& ifname = "eth0");

}  // namespace netiface::testing
