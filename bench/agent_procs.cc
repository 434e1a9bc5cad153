#include "agent_procs.h"

#include <fcntl.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <mutex>
#include <set>
#include <stdexcept>
#include <thread>

namespace netiface::bench::agent {
namespace {

struct Tracked {
  std::mutex mu;
  std::set<pid_t> pids;
  std::vector<std::string> netns;
  std::vector<std::string> dirs;
  bool torn_down = false;
};

Tracked& T() {
  static Tracked* t = new Tracked;  // never destroyed: the signal thread may use it during exit
  return *t;
}

// Waits for `pid` up to `timeout`; true when it was reaped (or is not our child any more).
bool Reap(pid_t pid, std::chrono::milliseconds timeout, int* status) {
  auto deadline = Clock::now() + timeout;
  for (;;) {
    int st = 0;
    pid_t r = ::waitpid(pid, &st, WNOHANG);
    if (r == pid) {
      if (status) *status = st;
      return true;
    }
    if (r < 0 && errno == ECHILD) return true;
    if (Clock::now() >= deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
}

void KillAndReap(pid_t pid) {
  ::kill(pid, SIGKILL);
  Reap(pid, std::chrono::seconds(10), nullptr);
}

void TrackPid(pid_t pid) {
  bool late = false;
  {
    std::lock_guard<std::mutex> lock(T().mu);
    if (T().torn_down)
      late = true;
    else
      T().pids.insert(pid);
  }
  if (late) KillAndReap(pid);
}

void UntrackPid(pid_t pid) {
  std::lock_guard<std::mutex> lock(T().mu);
  T().pids.erase(pid);
}

}  // namespace

void InstallSignalTeardown() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
  std::thread([set] {
    int sig = 0;
    sigwait(&set, &sig);
    std::fprintf(stderr, "agent-bench: signal %d: stopping what it started and removing its namespaces\n", sig);
    TearDownAll();
    std::_Exit(128 + sig);
  }).detach();
}

void TearDownAll() {
  std::set<pid_t> pids;
  std::vector<std::string> netns, dirs;
  {
    std::lock_guard<std::mutex> lock(T().mu);
    T().torn_down = true;
    pids.swap(T().pids);
    netns.swap(T().netns);
    dirs.swap(T().dirs);
  }
  for (pid_t pid : pids) KillAndReap(pid);
  for (auto it = netns.rbegin(); it != netns.rend(); ++it) Sh("ip netns del " + *it);
  for (const std::string& d : dirs) {
    std::error_code ec;
    std::filesystem::remove_all(d, ec);
  }
}

ShResult Sh(const std::string& cmdline) {
  ShResult r;
  std::string cmd = cmdline + " 2>&1";
  FILE* p = ::popen(cmd.c_str(), "r");
  if (p == nullptr) {
    r.out = std::string("popen: ") + std::strerror(errno);
    return r;
  }
  char buf[4096];
  size_t k;
  while ((k = std::fread(buf, 1, sizeof buf, p)) > 0) r.out.append(buf, k);
  int status = ::pclose(p);
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
  return r;
}

std::string ShOrThrow(const std::string& cmdline) {
  ShResult r = Sh(cmdline);
  if (r.exit_code != 0) {
    throw std::runtime_error("`" + cmdline + "` exited " + std::to_string(r.exit_code) + ": " + r.out);
  }
  return r.out;
}

Process::Process(const std::vector<std::string>& argv, const std::string& log) {
  if (argv.empty()) throw std::invalid_argument("Process: empty argv");
  std::vector<std::string> copy = argv;
  std::vector<char*> args;
  for (auto& a : copy) args.push_back(a.data());
  args.push_back(nullptr);
  int log_fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (log_fd < 0) throw std::runtime_error("cannot open " + log + ": " + std::strerror(errno));
  int null_fd = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  if (null_fd < 0) {
    ::close(log_fd);
    throw std::runtime_error(std::string("cannot open /dev/null: ") + std::strerror(errno));
  }
  sigset_t none;
  sigemptyset(&none);
  const pid_t parent = ::getpid();
  pid_t pid = ::fork();
  if (pid == 0) {
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != parent) ::_exit(127);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);  // the bench blocks SIGTERM/SIGINT; its children must not
    ::dup2(null_fd, 0);
    ::dup2(log_fd, 1);
    ::dup2(log_fd, 2);
    ::execv(args[0], args.data());
    ::_exit(127);
  }
  int fork_errno = errno;
  ::close(log_fd);
  ::close(null_fd);
  if (pid < 0) throw std::runtime_error(std::string("fork: ") + std::strerror(fork_errno));
  pid_ = pid;
  TrackPid(pid_);
}

Process::~Process() {
  if (pid_ > 0) Stop(SIGKILL);
}

int Process::Stop(int sig, std::chrono::milliseconds timeout) {
  if (pid_ <= 0) return status_;
  Clock::time_point start = Clock::now();
  ::kill(pid_, sig);
  int st = -1;
  if (!Reap(pid_, timeout, &st)) {
    ::kill(pid_, SIGKILL);
    Reap(pid_, std::chrono::seconds(10), &st);
  }
  last_stop_ = Clock::now() - start;
  UntrackPid(pid_);
  pid_ = -1;
  status_ = st;
  return status_;
}

bool Process::Running() {
  if (pid_ <= 0) return false;
  int st = 0;
  pid_t r = ::waitpid(pid_, &st, WNOHANG);
  if (r == 0) return true;
  UntrackPid(pid_);
  pid_ = -1;
  status_ = r == -1 ? -1 : st;
  return false;
}

Netns::Netns(std::string name) : name_(std::move(name)) {
  Sh("ip netns del " + name_);  // left over by a run that was killed with SIGKILL
  ShOrThrow("ip netns add " + name_);
  {
    std::lock_guard<std::mutex> lock(T().mu);
    T().netns.push_back(name_);
  }
  ShOrThrow("ip -n " + name_ + " link set lo up");
}

Netns::~Netns() {
  Sh("ip netns del " + name_);
  std::lock_guard<std::mutex> lock(T().mu);
  std::erase(T().netns, name_);
}

TempDir::TempDir() {
  char tmpl[] = "/tmp/netiface-agent-bench-XXXXXX";
  if (::mkdtemp(tmpl) == nullptr) throw std::runtime_error(std::string("mkdtemp: ") + std::strerror(errno));
  path_ = tmpl;
  std::lock_guard<std::mutex> lock(T().mu);
  T().dirs.push_back(path_);
}

TempDir::~TempDir() {
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
  std::lock_guard<std::mutex> lock(T().mu);
  std::erase(T().dirs, path_);
}

}  // namespace netiface::bench::agent
