// The netiface command line: cnitool's workflow (add, check, del, gc, status) on top of the libcni
// runtime, plus inspection of host-local IPAM stores (ipam ls). All logic lives here so that tests run
// it in-process; main.cc only hands over the process's arguments, environment and streams.
#pragma once

#include <iosfwd>
#include <map>
#include <string>
#include <vector>

#include "netiface/cni/exec.h"

namespace netiface::cli {

// Exit codes, stable for scripts.
enum ExitCode : int {
  kExitOk = 0,
  kExitPluginError = 1,  // a plugin of the list failed or could not be run (code and msg on stderr)
  kExitUsage = 2,        // bad command line, CNI_ARGS, CAP_ARGS, container ID or interface name
  kExitConfig = 3,       // network not found or unusable: invalid conflist, plugin missing from the
                         // CNI path, verb not supported by the list's version, CHECK before ADD
  kExitLocal = 4,        // anything else on this side: cache or data dir I/O, internal errors
};

// Seam at the OS edge.
struct CliContext {
  std::map<std::string, std::string> env;  // the process environment (also inherited by plugins)
  std::ostream* out = nullptr;             // results and listings only
  std::ostream* err = nullptr;             // errors, logs and help on misuse
  cni::Exec* exec = nullptr;               // nullptr: cni::DefaultExec()
};

// Runs one command line (argv[0] is the program name). Returns an ExitCode.
int RunCli(const std::vector<std::string>& argv, CliContext& ctx);

// cnitool's container ID for a namespace path: "cnitool-" + the first 10 bytes of SHA-512(path) in
// hex (28 characters). REQUIRES: `netns_path` is already absolute (AbsolutePath).
std::string ContainerIdFromNetns(const std::string& netns_path);
// Go's filepath.Abs: joined with the working directory when relative, then cleaned lexically
// ("." and ".." resolved, repeated and trailing '/' removed); symlinks are not followed.
std::string AbsolutePath(const std::string& path);

}  // namespace netiface::cli
