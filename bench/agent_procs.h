// What agent-bench starts and makes, and how all of it is undone however the run ends: child processes
// (stopped by their pid), throw-away network namespaces and folders. Every object registers itself with
// one process-wide teardown list; a normal exit undoes it through the destructors, SIGINT/SIGTERM and a
// fatal error through TearDownAll().
#pragma once

#include <signal.h>
#include <sys/types.h>

#include <chrono>
#include <string>
#include <vector>

namespace netiface::bench::agent {

using Clock = std::chrono::steady_clock;

// Blocks SIGINT and SIGTERM in the calling thread (every thread started later inherits the mask) and
// starts a thread that, on either, runs TearDownAll() and exits with 128 + the signal.
// REQUIRES: called first in main, before any other thread exists.
void InstallSignalTeardown();
// SIGKILL to every tracked pid (and reaps it), `ip netns del` of every tracked namespace, rm -rf of every
// tracked folder. Thread-safe and idempotent; afterwards a new pid is killed as soon as it is tracked.
void TearDownAll();

// A command line run by /bin/sh in the bench's current namespace; its exit code, stdout and stderr.
struct ShResult {
  int exit_code = -1;
  std::string out;
};
ShResult Sh(const std::string& cmdline);  // stderr is merged into out
// Sh(), throwing std::runtime_error naming the command and its output when it exits non-zero.
std::string ShOrThrow(const std::string& cmdline);

// A child started by fork/exec with stdin from /dev/null and stdout+stderr appended to `log`. It gets
// SIGKILL if the bench dies first (PR_SET_PDEATHSIG). `argv[0]` is a path. With `ip netns exec` in
// front the pid is still the program's own, as ip execs it.
class Process {
 public:
  Process(const std::vector<std::string>& argv, const std::string& log);
  ~Process();  // Stop(SIGKILL) if still running
  Process(const Process&) = delete;
  Process& operator=(const Process&) = delete;

  // Sends `sig` by pid and waits up to `timeout` (then SIGKILL). Returns waitpid's status, or the status
  // already collected. The time the exit took is in last_stop().
  int Stop(int sig = SIGTERM, std::chrono::milliseconds timeout = std::chrono::seconds(10));
  // True while it has not exited (reaps it when it has).
  bool Running();
  pid_t pid() const { return pid_; }
  Clock::duration last_stop() const { return last_stop_; }

 private:
  pid_t pid_ = -1;
  int status_ = -1;
  Clock::duration last_stop_{};
};

// A network namespace made by `ip netns add <name>` (lo up), deleted by the destructor.
class Netns {
 public:
  explicit Netns(std::string name);  // throws std::runtime_error when ip fails
  ~Netns();
  Netns(const Netns&) = delete;
  Netns& operator=(const Netns&) = delete;
  const std::string& name() const { return name_; }
  std::string path() const { return "/run/netns/" + name_; }

 private:
  std::string name_;
};

// A fresh folder under /tmp, removed recursively by the destructor.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::string& path() const { return path_; }
  std::string operator/(const std::string& rel) const { return path_ + "/" + rel; }

 private:
  std::string path_;
};

}  // namespace netiface::bench::agent
