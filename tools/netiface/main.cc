#include <iostream>
#include <string>
#include <string_view>
#include <vector>

#include "netiface/cli/cli.h"

// The netiface image: the CLI, and netiface-agent when started by that name (a link to netiface; the CLI
// holds the agent's library anyway, for `netiface leases`).
namespace netiface::agent {
int Main(int argc, char** argv);
}

extern char** environ;

int main(int argc, char** argv) {
  std::string_view self = argc >= 1 && argv[0] != nullptr ? argv[0] : "";
  if (auto slash = self.rfind('/'); slash != std::string_view::npos) self.remove_prefix(slash + 1);
  if (self == "netiface-agent") return netiface::agent::Main(argc, argv);
  netiface::cli::CliContext ctx;
  for (char** e = environ; *e; ++e) {
    std::string kv(*e);
    if (auto eq = kv.find('='); eq != std::string::npos) ctx.env[kv.substr(0, eq)] = kv.substr(eq + 1);
  }
  ctx.out = &std::cout;
  ctx.err = &std::cerr;
  return netiface::cli::RunCli(std::vector<std::string>(argv, argv + argc), ctx);
}
