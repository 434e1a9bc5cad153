// Spawning a child process and talking to it through pipes: the one place in the tree that does it.
// Delegation (exec.h), the runtime, the benchmark and the tests' helpers all run children through
// Process. A child gets exactly the argv and environment it is given, its stdin from a pipe fed by
// us, its stdout into a string, and its stderr passed through, captured or discarded.
#pragma once

#include <sys/types.h>

#include <map>
#include <string>
#include <vector>

#include "netiface/cni/unique_fd.h"

namespace netiface::cni {

// When the child gets its stdin. kOnRelease: the child's process starts at once, its stdin goes
// over at Process::Release(), so that the caller can finish what must come before anything the child
// does (flannel makes its saved config durable) while the child starts. Waiting without Release()
// closes the stdin unfed: the child reads nothing.
enum class Stdin { kNow, kOnRelease };
// What the child's stderr is: ours (kInherit), a string in ProcessOutput (kCapture) or /dev/null.
enum class Stderr { kInherit, kCapture, kDiscard };
// kSpread: the child is moved off the caller's CPU once and then given back its whole CPU set, so
// that a child the caller overlaps with its own work runs beside it (docs/architecture.md, step 5).
// kAsSpawned: left where the kernel put it (a benchmark that measures process start as runtimes see it).
enum class Placement { kSpread, kAsSpawned };

struct SpawnSpec {
  std::vector<std::string> argv;           // argv[0] is the executable's path; never empty
  std::map<std::string, std::string> env;  // the complete environment of the child
  std::string stdin_data;
  Stdin stdin_mode = Stdin::kNow;
  Stderr stderr_mode = Stderr::kInherit;
  Placement placement = Placement::kSpread;
};

struct ProcessOutput {
  int exit_code = 0;  // the exit status, or 128 + the signal that killed the child
  std::string stdout_data;
  std::string stderr_data;  // Stderr::kCapture only
  long max_rss_kb = 0;      // peak RSS of the child and the descendants it reaped (wait4)
};

// A running child. Move-only; destroying one that was not waited for waits for it (its stdin closed
// unfed if it was held), so that a child is reaped also when the caller unwinds from an exception.
class Process {
 public:
  // Starts the child and, with Stdin::kNow, hands it as much of its stdin as the pipe takes (all of
  // any plugin config). Throws Error(kIoFailure, "failed to execute <argv[0]>") when it cannot start
  // (missing, not executable), and Error(kIoFailure) when a pipe cannot be made.
  static Process Spawn(const SpawnSpec& spec);

  Process(Process&& other) noexcept;
  Process& operator=(Process&&) = delete;
  Process(const Process&) = delete;
  ~Process();

  pid_t pid() const { return pid_; }
  // Hands a held stdin over (Stdin::kOnRelease); nothing otherwise or when already released.
  void Release();
  // Feeds the rest of stdin, drains stdout (and a captured stderr) until the child closes them, and
  // reaps it. Once; throws Error(kIoFailure) when poll or waitpid fail.
  ProcessOutput Wait();

 private:
  Process(pid_t pid, UniqueFd in_w, UniqueFd out_r, UniqueFd err_r, std::string input, std::string path, bool held);
  void Feed();
  void Pump(ProcessOutput& out);

  pid_t pid_ = -1;
  UniqueFd in_w_, out_r_, err_r_;
  std::string input_;
  std::string path_;
  bool held_ = false;
  size_t written_ = 0;
  bool waited_ = true;  // a moved-from Process has nothing to wait for
};

}  // namespace netiface::cni
