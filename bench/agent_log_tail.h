// What agent-bench reads from files the agent writes: the moment subnet.env is renamed into place
// (inotify), and the agent's "reconcile:" debug lines as they are appended to its log.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "agent_procs.h"
#include "agent_report.h"

namespace netiface::bench::agent {

// The first event (IN_MOVED_TO or IN_CLOSE_WRITE) on `name` in `dir` after construction.
class FileWatch {
 public:
  // Throws std::runtime_error when inotify cannot watch `dir`.
  FileWatch(const std::string& dir, std::string name);
  ~FileWatch();
  FileWatch(const FileWatch&) = delete;
  FileWatch& operator=(const FileWatch&) = delete;

  // Waits at most `slice`; the time of the event once it happened (also on a later call).
  std::optional<Clock::time_point> Poll(std::chrono::milliseconds slice);

 private:
  int fd_ = -1;
  std::string name_;
  std::optional<Clock::time_point> seen_;
};

// New "reconcile:" lines of a log file that is being appended to, each with when the bench read it.
class ReconcileTail {
 public:
  explicit ReconcileTail(std::string path) : path_(std::move(path)) {}
  struct Line {
    ReconcileLine reconcile;
    Clock::time_point read_at;  // at most one poll (2 ms) after the agent wrote it
  };
  // Skips everything written so far.
  void SkipToEnd();
  // The next reconcile line, polling every 2 ms up to `timeout`; nullopt when none came.
  std::optional<Line> Next(std::chrono::milliseconds timeout);

 private:
  void Read();
  std::string path_;
  size_t offset_ = 0;
  std::string partial_;
  std::vector<Line> lines_;
};

}  // namespace netiface::bench::agent
