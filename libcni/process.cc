#include "netiface/cni/process.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <tuple>
#include <utility>

#include "netiface/cni/error.h"

namespace netiface::cni {
namespace {

// A close-on-exec pipe whose ends are above 2, so that dup2 onto 0/1/2 in the child always clears
// close-on-exec on the copy.
std::pair<UniqueFd, UniqueFd> Pipe() {
  int p[2];
  if (::pipe2(p, O_CLOEXEC) != 0) throw Error(kIoFailure, "cannot create pipe", std::strerror(errno));
  for (int& fd : p) {
    if (fd <= 2) {
      int moved = ::fcntl(fd, F_DUPFD_CLOEXEC, 3);
      ::close(fd);
      fd = moved;
    }
  }
  UniqueFd r(p[0]), w(p[1]);
  if (r.get() < 0 || w.get() < 0) throw Error(kIoFailure, "cannot create pipe", std::strerror(errno));
  return {std::move(r), std::move(w)};
}

void SetNonBlocking(const UniqueFd& fd) {
  if (fd.valid()) ::fcntl(fd.get(), F_SETFL, ::fcntl(fd.get(), F_GETFL) | O_NONBLOCK);
}

// SIGPIPE blocked on this thread while it feeds a child that may exit early; a SIGPIPE raised
// meanwhile is discarded and the old mask restored.
class SigpipeBlock {
 public:
  SigpipeBlock() {
    sigset_t pipe_set;
    sigemptyset(&pipe_set);
    sigaddset(&pipe_set, SIGPIPE);
    pthread_sigmask(SIG_BLOCK, &pipe_set, &old_);
    sigset_t pending;
    sigpending(&pending);
    was_pending_ = sigismember(&pending, SIGPIPE) == 1;
  }
  ~SigpipeBlock() {
    if (!was_pending_) {
      sigset_t pipe_set;
      sigemptyset(&pipe_set);
      sigaddset(&pipe_set, SIGPIPE);
      struct timespec zero {};
      while (sigtimedwait(&pipe_set, nullptr, &zero) == SIGPIPE) {
      }
    }
    pthread_sigmask(SIG_SETMASK, &old_, nullptr);
  }
  SigpipeBlock(const SigpipeBlock&) = delete;
  SigpipeBlock& operator=(const SigpipeBlock&) = delete;
  const sigset_t& old_mask() const { return old_; }

 private:
  sigset_t old_;
  bool was_pending_ = false;
};

// Starts the child beside this process rather than behind it. posix_spawn (vfork) wakes the parent on
// the CPU the child exec'd on, so a delegate the caller overlaps with its own work (IPAM while the veth
// pair is made) shares one CPU with it until the load balancer moves one of them, milliseconds later.
// Moving the child off this CPU once, then giving it back every CPU it had, lets them run in parallel
// without pinning anything (the child's own children inherit the full set). Best effort.
void SpreadFromThisCpu(pid_t child) {
  const int me = ::sched_getcpu();
  cpu_set_t allowed;
  if (me < 0 || ::sched_getaffinity(child, sizeof(allowed), &allowed) != 0) return;
  if (!CPU_ISSET(me, &allowed) || CPU_COUNT(&allowed) < 2) return;
  cpu_set_t others = allowed;
  CPU_CLR(me, &others);
  if (::sched_setaffinity(child, sizeof(others), &others) != 0) return;
  ::sched_setaffinity(child, sizeof(allowed), &allowed);
}

// Reads what `fd` has now into `sink`; closes it at end of file or on a hard error.
void Drain(UniqueFd& fd, std::string& sink) {
  char buf[65536];
  ssize_t r = ::read(fd.get(), buf, sizeof(buf));
  if (r > 0) {
    sink.append(buf, static_cast<size_t>(r));
  } else if (r == 0 || (errno != EINTR && errno != EAGAIN)) {
    fd.Reset();
  }
}

}  // namespace

Process Process::Spawn(const SpawnSpec& spec) {
  if (spec.argv.empty()) throw Error(kInternal, "spawning a process without argv");
  auto [in_r, in_w] = Pipe();
  auto [out_r, out_w] = Pipe();
  UniqueFd err_r, err_w;
  if (spec.stderr_mode == Stderr::kCapture) std::tie(err_r, err_w) = Pipe();
  SigpipeBlock block;

  std::vector<std::string> env_strings;
  env_strings.reserve(spec.env.size());
  for (const auto& [k, v] : spec.env) env_strings.push_back(k + "=" + v);
  std::vector<char*> envp;
  for (auto& s : env_strings) envp.push_back(s.data());
  envp.push_back(nullptr);
  std::vector<std::string> argv_strings = spec.argv;
  std::vector<char*> argv;
  for (auto& s : argv_strings) argv.push_back(s.data());
  argv.push_back(nullptr);
  const std::string& path = spec.argv.front();

  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, in_r.get(), STDIN_FILENO);
  posix_spawn_file_actions_adddup2(&actions, out_w.get(), STDOUT_FILENO);
  if (spec.stderr_mode == Stderr::kCapture) {
    posix_spawn_file_actions_adddup2(&actions, err_w.get(), STDERR_FILENO);
  } else if (spec.stderr_mode == Stderr::kDiscard) {
    posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, "/dev/null", O_WRONLY, 0);
  }
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  sigset_t def;
  sigemptyset(&def);
  sigaddset(&def, SIGPIPE);
  posix_spawnattr_setsigdefault(&attr, &def);
  posix_spawnattr_setsigmask(&attr, &block.old_mask());
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK);
  pid_t pid = -1;
  int rc = posix_spawn(&pid, path.c_str(), &actions, &attr, argv.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  if (rc != 0) throw Error(kIoFailure, "failed to execute " + path, std::strerror(rc));
  if (spec.placement == Placement::kSpread) SpreadFromThisCpu(pid);
  in_r.Reset();
  out_w.Reset();
  err_w.Reset();
  // Only our ends: the child holds other open file descriptions, which stay blocking.
  SetNonBlocking(in_w);
  SetNonBlocking(out_r);
  SetNonBlocking(err_r);
  return Process(pid, std::move(in_w), std::move(out_r), std::move(err_r), spec.stdin_data, path,
                 spec.stdin_mode == Stdin::kOnRelease);
}

Process::Process(pid_t pid, UniqueFd in_w, UniqueFd out_r, UniqueFd err_r, std::string input, std::string path,
                 bool held)
    : pid_(pid),
      in_w_(std::move(in_w)),
      out_r_(std::move(out_r)),
      err_r_(std::move(err_r)),
      input_(std::move(input)),
      path_(std::move(path)),
      held_(held),
      waited_(false) {
  if (!held_) Feed();
}

Process::Process(Process&& other) noexcept
    : pid_(std::exchange(other.pid_, -1)),
      in_w_(std::move(other.in_w_)),
      out_r_(std::move(other.out_r_)),
      err_r_(std::move(other.err_r_)),
      input_(std::move(other.input_)),
      path_(std::move(other.path_)),
      held_(std::exchange(other.held_, false)),
      written_(std::exchange(other.written_, 0)),
      waited_(std::exchange(other.waited_, true)) {}

Process::~Process() {
  if (waited_) return;
  try {
    Wait();
  } catch (...) {
  }
}

void Process::Release() {
  if (!held_) return;
  held_ = false;
  Feed();
}

ProcessOutput Process::Wait() {
  if (waited_) throw Error(kInternal, "process " + path_ + " was already waited for");
  waited_ = true;
  if (held_) {  // never released: the child gets an empty stdin
    held_ = false;
    input_.clear();
    in_w_.Reset();
  }
  SigpipeBlock block;
  ProcessOutput out;
  Pump(out);
  int status = 0;
  rusage usage{};
  while (::wait4(pid_, &status, 0, &usage) < 0) {
    if (errno != EINTR) throw Error(kIoFailure, "waiting for " + path_, std::strerror(errno));
  }
  out.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  out.max_rss_kb = usage.ru_maxrss;
  return out;
}

// Hands over as much of stdin as the pipe takes now, so that the child can run while the caller does
// other work.
void Process::Feed() {
  SigpipeBlock block;
  while (in_w_.valid() && written_ < input_.size()) {
    ssize_t w = ::write(in_w_.get(), input_.data() + written_, input_.size() - written_);
    if (w > 0) {
      written_ += static_cast<size_t>(w);
    } else if (w < 0 && errno == EINTR) {
      continue;
    } else {
      if (w < 0 && errno != EAGAIN) in_w_.Reset();
      break;
    }
  }
  if (written_ == input_.size()) in_w_.Reset();
}

// Feeds the rest of stdin and drains stdout (and a captured stderr) at once, so that neither side
// blocks on a full pipe.
void Process::Pump(ProcessOutput& out) {
  while (out_r_.valid() || err_r_.valid()) {
    pollfd fds[3];
    int n = 0, oi = -1, ei = -1, ii = -1;
    if (out_r_.valid()) {
      oi = n;
      fds[n++] = {out_r_.get(), POLLIN, 0};
    }
    if (err_r_.valid()) {
      ei = n;
      fds[n++] = {err_r_.get(), POLLIN, 0};
    }
    if (in_w_.valid()) {
      ii = n;
      fds[n++] = {in_w_.get(), POLLOUT, 0};
    }
    if (::poll(fds, static_cast<nfds_t>(n), -1) < 0) {
      if (errno == EINTR) continue;
      throw Error(kIoFailure, "poll on plugin pipes", std::strerror(errno));
    }
    if (ii >= 0 && fds[ii].revents != 0) {
      ssize_t w = ::write(in_w_.get(), input_.data() + written_, input_.size() - written_);
      if (w > 0) written_ += static_cast<size_t>(w);
      if ((w < 0 && errno != EINTR && errno != EAGAIN) || written_ == input_.size()) in_w_.Reset();
    }
    if (oi >= 0 && fds[oi].revents != 0) Drain(out_r_, out.stdout_data);
    if (ei >= 0 && fds[ei].revents != 0) Drain(err_r_, out.stderr_data);
  }
  in_w_.Reset();
}

}  // namespace netiface::cni
