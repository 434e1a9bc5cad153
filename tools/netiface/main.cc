#include <iostream>
#include <string>
#include <vector>

#include "netiface/cli/cli.h"

extern char** environ;

int main(int argc, char** argv) {
  netiface::cli::CliContext ctx;
  for (char** e = environ; *e; ++e) {
    std::string kv(*e);
    if (auto eq = kv.find('='); eq != std::string::npos) ctx.env[kv.substr(0, eq)] = kv.substr(eq + 1);
  }
  ctx.out = &std::cout;
  ctx.err = &std::cerr;
  return netiface::cli::RunCli(std::vector<std::string>(argv, argv + argc), ctx);
}
