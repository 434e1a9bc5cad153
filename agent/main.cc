// netiface-agent: SIGTERM/SIGINT are taken by a thread of their own (sigwait), which sets the stop flag
// that the loop looks at; no work happens in a signal handler.
#include <signal.h>

#include <atomic>
#include <iostream>
#include <thread>

#include "netiface/agent/flags.h"

extern char** environ;

int main(int argc, char** argv) {
  using namespace netiface;
  std::map<std::string, std::string> env;
  for (char** e = environ; *e; ++e) {
    std::string kv(*e);
    if (auto eq = kv.find('='); eq != std::string::npos) env[kv.substr(0, eq)] = kv.substr(eq + 1);
  }
  agent::Command cmd = agent::ParseCommandLine(std::vector<std::string>(argv, argv + argc), env, std::cout, std::cerr);
  if (cmd.kind == agent::Command::kExit) return cmd.exit_code;
  log::SetLevel(cmd.log_level);
  if (cmd.kind == agent::Command::kCleanup) return agent::RunCleanup(cmd.options.route_protocol);

  // Blocked in every thread (the watcher inherits the mask); only the waiter below takes them.
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGINT);
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
  signal(SIGPIPE, SIG_IGN);
  std::atomic<bool> stop{false};
  std::thread waiter([&] {
    int sig = 0;
    sigwait(&set, &sig);
    log::Info("signal {}: stopping", sig);
    stop = true;
  });
  int rc = agent::RunAgent(cmd.options, stop);
  if (!stop) {
    // RunAgent gave up on its own: wake the waiter so that it can be joined.
    pthread_kill(waiter.native_handle(), SIGTERM);
  }
  waiter.join();
  return rc;
}
