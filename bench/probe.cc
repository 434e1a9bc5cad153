// cni-bench-probe: starts one program for cni-bench and reports what it cost, from a process too small to
// distort the figures.
//   cni-bench-probe REPORT PROGRAM [ARG...]
// Linux charges an exec'd process's peak RSS (ru_maxrss) with the high-water mark of the image it replaced,
// which for a posix_spawn (vfork) child is its parent's: spawned straight from cni-bench, every plugin would
// seem to weigh at least as much as the bench. This probe is a static executable that uses libc only; it
// spawns PROGRAM with its own stdin, stdout, stderr and environment, reaps it and writes one line to REPORT:
//   EXIT MS MAXRSS_KB FLOOR_KB
// the exit code (128 + the signal when killed), the wall milliseconds from spawn to reap, the peak RSS of
// PROGRAM and of the descendants it reaped, and the probe's own peak RSS: no MAXRSS can be below it.
// Exits with PROGRAM's exit code; 127 when it cannot run it, 126 when it cannot write REPORT.
#include <fcntl.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

extern char** environ;

namespace {

// VmHWM of this process, in kB (0 when /proc cannot tell).
long OwnPeakRssKb() {
  const int fd = ::open("/proc/self/status", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return 0;
  char buf[4096];
  const ssize_t n = ::read(fd, buf, sizeof(buf) - 1);
  ::close(fd);
  if (n <= 0) return 0;
  buf[n] = '\0';
  const char* line = std::strstr(buf, "VmHWM:");
  return line != nullptr ? std::strtol(line + 6, nullptr, 10) : 0;
}

double NowMs() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<double>(ts.tv_sec) * 1e3 + static_cast<double>(ts.tv_nsec) / 1e6;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fputs("usage: cni-bench-probe REPORT PROGRAM [ARG...]\n", stderr);
    return 2;
  }
  const long floor_kb = OwnPeakRssKb();
  const double start = NowMs();
  pid_t child = 0;
  const int rc = ::posix_spawn(&child, argv[2], nullptr, nullptr, argv + 2, environ);
  if (rc != 0) {
    std::fprintf(stderr, "cni-bench-probe: cannot run %s: %s\n", argv[2], std::strerror(rc));
    return 127;
  }
  int status = 0;
  rusage usage{};
  while (::wait4(child, &status, 0, &usage) < 0) {
    if (errno != EINTR) return 127;
  }
  const double ms = NowMs() - start;
  const int exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  char line[128];
  const int len = std::snprintf(line, sizeof(line), "%d %.4f %ld %ld\n", exit_code, ms, usage.ru_maxrss, floor_kb);
  const int fd = ::open(argv[1], O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (fd < 0 || ::write(fd, line, static_cast<size_t>(len)) != len) return 126;
  ::close(fd);
  return exit_code;
}
