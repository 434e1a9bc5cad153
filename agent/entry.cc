// netiface-agent's main, in the netiface image (tools/netiface/main.cc runs it when started as
// netiface-agent, a link to netiface). SIGTERM/SIGINT are taken by a thread of their own (sigwait), which sets the stop
// flag that the loop looks at; no work happens in a signal handler.
#include <signal.h>

#include <atomic>
#include <cstdlib>
#include <ctime>
#include <iostream>
#include <thread>

#include "netiface/agent/flags.h"
#include "netiface/cni/log.h"

extern char** environ;

namespace netiface::agent {

int Main(int argc, char** argv) {
  std::map<std::string, std::string> env;
  for (char** e = environ; *e; ++e) {
    std::string kv(*e);
    if (auto eq = kv.find('='); eq != std::string::npos) env[kv.substr(0, eq)] = kv.substr(eq + 1);
  }
  agent::Command cmd = agent::ParseCommandLine(std::vector<std::string>(argv, argv + argc), env, std::cout, std::cerr);
  if (cmd.kind == agent::Command::kExit) return cmd.exit_code;
  log::SetLevel(cmd.log_level);
  if (cmd.kind == agent::Command::kCleanup) return agent::RunCleanup(cmd.options.route_protocol);

  // Blocked in every thread (the watcher inherits the mask); only the waiter below takes them. The first
  // SIGTERM/SIGINT asks the loop to stop; a second one, while the loop is still busy (a slow etcd call),
  // ends the process at once.
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGINT);
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
  signal(SIGPIPE, SIG_IGN);
  std::atomic<bool> stop{false};
  std::atomic<bool> done{false};
  std::thread waiter([&] {
    const timespec tick{0, 200 * 1000 * 1000};
    while (!done) {
      int sig = sigtimedwait(&set, nullptr, &tick);
      if (sig <= 0) continue;
      if (stop) {
        log::Warn("signal {} again: exiting at once", sig);
        std::_Exit(128 + sig);
      }
      log::Info("signal {}: stopping", sig);
      stop = true;
    }
  });
  int rc = agent::RunAgent(cmd.options, stop);
  done = true;
  waiter.join();
  return rc;
}

}  // namespace netiface::agent
