#include "netiface/cni/exec.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <optional>
#include <utility>

#include "netiface/cni/error.h"
#include "netiface/cni/log.h"
#include "netiface/cni/unique_fd.h"

extern char** environ;

namespace netiface::cni {
namespace {

using nlohmann::json;

// A close-on-exec pipe whose ends are above 2, so that dup2 onto 0/1 in the child always clears
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
  const sigset_t& old_mask() const { return old_; }

 private:
  sigset_t old_;
  bool was_pending_ = false;
};

// A spawned child: our ends of its stdin and stdout pipes, and what is left to write.
class PosixRunning : public Exec::Running {
 public:
  PosixRunning(pid_t pid, UniqueFd in_w, UniqueFd out_r, std::string input, std::string path, bool hold)
      : pid_(pid),
        in_w_(std::move(in_w)),
        out_r_(std::move(out_r)),
        input_(std::move(input)),
        path_(std::move(path)),
        held_(hold) {
    if (!held_) Feed();
  }
  ~PosixRunning() override {
    if (!waited_) {
      try {
        Wait();
      } catch (...) {
      }
    }
  }

  void Release() override {
    if (!held_) return;
    held_ = false;
    Feed();
  }

  ExecOutput Wait() override {
    waited_ = true;
    if (held_) {  // never released: the child gets an empty stdin
      held_ = false;
      input_.clear();
      in_w_.Reset();
    }
    SigpipeBlock block;
    ExecOutput out;
    Pump(out.stdout_data);
    int status = 0;
    while (::waitpid(pid_, &status, 0) < 0) {
      if (errno != EINTR) throw Error(kIoFailure, "waiting for " + path_, std::strerror(errno));
    }
    out.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    return out;
  }

 private:
  // Hands over as much of stdin as the pipe takes now (all of any plugin config), so that the child
  // can run while the caller does other work.
  void Feed() {
    SigpipeBlock block;
    while (in_w_.get() >= 0 && written_ < input_.size()) {
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

  // Feeds the rest of stdin and drains stdout at once, so that neither side blocks on a full pipe.
  void Pump(std::string& output) {
    char buf[65536];
    while (out_r_.get() >= 0) {
      pollfd fds[2];
      int n = 0;
      fds[n++] = {out_r_.get(), POLLIN, 0};
      if (in_w_.get() >= 0) fds[n++] = {in_w_.get(), POLLOUT, 0};
      if (::poll(fds, static_cast<nfds_t>(n), -1) < 0) {
        if (errno == EINTR) continue;
        throw Error(kIoFailure, "poll on plugin pipes", std::strerror(errno));
      }
      if (n == 2 && fds[1].revents != 0) {
        ssize_t w = ::write(in_w_.get(), input_.data() + written_, input_.size() - written_);
        if (w > 0) written_ += static_cast<size_t>(w);
        if ((w < 0 && errno != EINTR && errno != EAGAIN) || written_ == input_.size()) in_w_.Reset();
      }
      if (fds[0].revents != 0) {
        ssize_t r = ::read(out_r_.get(), buf, sizeof(buf));
        if (r > 0) {
          output.append(buf, static_cast<size_t>(r));
        } else if (r == 0 || (errno != EINTR && errno != EAGAIN)) {
          out_r_.Reset();
        }
      }
    }
    in_w_.Reset();
  }

  pid_t pid_;
  UniqueFd in_w_, out_r_;
  std::string input_;
  std::string path_;
  bool held_;
  size_t written_ = 0;
  bool waited_ = false;
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

class PosixExec : public Exec {
 public:
  ExecOutput Run(const ExecRequest& req) override { return Start(req)->Wait(); }

  std::unique_ptr<Running> Start(const ExecRequest& req) override {
    auto [in_r, in_w] = Pipe();
    auto [out_r, out_w] = Pipe();
    SigpipeBlock block;

    std::vector<std::string> env_strings;
    for (const auto& [k, v] : req.env) env_strings.push_back(k + "=" + v);
    std::vector<char*> envp;
    for (auto& s : env_strings) envp.push_back(s.data());
    envp.push_back(nullptr);
    std::string path = req.path;
    char* argv[] = {path.data(), nullptr};

    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, in_r.get(), STDIN_FILENO);
    posix_spawn_file_actions_adddup2(&actions, out_w.get(), STDOUT_FILENO);
    posix_spawnattr_t attr;
    posix_spawnattr_init(&attr);
    sigset_t def;
    sigemptyset(&def);
    sigaddset(&def, SIGPIPE);
    posix_spawnattr_setsigdefault(&attr, &def);
    posix_spawnattr_setsigmask(&attr, &block.old_mask());
    posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK);
    pid_t pid = -1;
    int rc = posix_spawn(&pid, path.c_str(), &actions, &attr, argv, envp.data());
    posix_spawn_file_actions_destroy(&actions);
    posix_spawnattr_destroy(&attr);
    if (rc != 0) throw Error(kIoFailure, "failed to execute " + req.path, std::strerror(rc));
    SpreadFromThisCpu(pid);
    in_r.Reset();
    out_w.Reset();
    // Only our ends: the child holds other open file descriptions, which stay blocking.
    ::fcntl(in_w.get(), F_SETFL, ::fcntl(in_w.get(), F_GETFL) | O_NONBLOCK);
    ::fcntl(out_r.get(), F_SETFL, ::fcntl(out_r.get(), F_GETFL) | O_NONBLOCK);
    return std::make_unique<PosixRunning>(pid, std::move(in_w), std::move(out_r), req.stdin_data, req.path,
                                          req.hold_stdin);
  }
};

// What Exec::Start does for an Exec that only knows Run: the child runs at once, or at Release() when
// its stdin is held; one never released never runs (as a real child fed an empty stdin would fail).
class RunOnRelease : public Exec::Running {
 public:
  RunOnRelease(Exec& exec, ExecRequest req) : exec_(exec), req_(std::move(req)) {
    if (!req_.hold_stdin) Release();
  }
  void Release() override {
    if (!out_) out_ = exec_.Run(req_);
  }
  ExecOutput Wait() override { return out_ ? *out_ : ExecOutput{1, ""}; }

 private:
  Exec& exec_;
  ExecRequest req_;
  std::optional<ExecOutput> out_;
};

std::string BaseName(const std::string& path) {
  size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

std::map<std::string, std::string> ChildEnv(const std::string& command, const CmdArgs& args) {
  std::map<std::string, std::string> env;
  for (char** e = environ; e && *e; ++e) {
    std::string kv(*e);
    size_t eq = kv.find('=');
    if (eq == std::string::npos) continue;
    env[kv.substr(0, eq)] = kv.substr(eq + 1);
  }
  auto set = [&env](const char* key, const std::string& value) {
    if (value.empty()) {
      env.erase(key);
    } else {
      env[key] = value;
    }
  };
  env["CNI_COMMAND"] = command;
  set("CNI_CONTAINERID", args.container_id);
  set("CNI_NETNS", args.netns);
  set("CNI_IFNAME", args.ifname);
  set("CNI_ARGS", args.args);
  set("CNI_PATH", args.path);
  return env;
}

ExecRequest DelegateRequest(const std::string& command, const std::string& type, const DelegateConf& conf,
                            const CmdArgs& args) {
  ExecRequest req;
  req.path = FindPlugin(type, args.path);
  req.env = ChildEnv(command, args);
  req.stdin_data = conf.bytes;
  return req;
}

}  // namespace

Exec& DefaultExec() {
  static PosixExec exec;
  return exec;
}

std::string FindPlugin(std::string_view type, std::string_view cni_path) {
  std::string name(type);
  if (name.empty() || name == "." || name == ".." || name.find('/') != std::string::npos ||
      name.find('\0') != std::string::npos) {
    throw Error(kInvalidConfig, "invalid plugin type \"" + name + "\"", "a plugin type is a plain file name");
  }
  std::string dirs;
  std::string_view rest = cni_path;
  while (true) {
    size_t colon = rest.find(':');
    std::string dir(rest.substr(0, colon));
    if (!dir.empty()) {
      dirs += (dirs.empty() ? "" : " ") + dir;
      std::string candidate = dir + "/" + name;
      struct stat st {};
      if (::stat(candidate.c_str(), &st) == 0 && S_ISREG(st.st_mode) && ::access(candidate.c_str(), X_OK) == 0) {
        return candidate;
      }
    }
    if (colon == std::string_view::npos) break;
    rest.remove_prefix(colon + 1);
  }
  throw Error(kInvalidConfig, "failed to find plugin \"" + name + "\" in path [" + dirs + "]");
}

std::unique_ptr<Exec::Running> Exec::Start(const ExecRequest& req) { return std::make_unique<RunOnRelease>(*this, req); }

namespace {

// A plugin's output as the spec reads it: its result (null when empty), or its error thrown.
json Interpret(const ExecOutput& out, const std::string& path) {
  std::string name = BaseName(path);
  json j = json::parse(out.stdout_data, nullptr, /*allow_exceptions=*/false);
  bool blank = out.stdout_data.find_first_not_of(" \t\r\n") == std::string::npos;
  if (out.exit_code != 0) {
    std::string fallback = "plugin " + name + " failed with exit code " + std::to_string(out.exit_code);
    if (blank) throw Error(kDelegateFailed, fallback);
    if (j.is_discarded()) throw Error(kDelegateFailed, fallback, out.stdout_data.substr(0, 1024));
    throw Error::FromJson(j, fallback);
  }
  if (blank) return nullptr;
  if (j.is_discarded()) {
    throw Error(kDelegateFailed, "plugin " + name + " printed invalid JSON", out.stdout_data.substr(0, 1024));
  }
  return j;
}

void CheckDelegable(const std::string& command) {
  if (command != "DEL" && command != "CHECK" && command != "STATUS" && command != "GC") {
    throw Error(kInternal, "cannot delegate command \"" + command + "\"");
  }
}

}  // namespace

json ExecPlugin(Exec& exec, const ExecRequest& req) { return Interpret(exec.Run(req), req.path); }

DelegateConf::DelegateConf(const json& conf) : bytes(conf.dump()), version("0.1.0") {
  if (auto it = conf.find("cniVersion"); it != conf.end() && it->is_string() && !it->get<std::string>().empty()) {
    version = it->get<std::string>();
  }
}

DelegateConf DelegateConf::Own(const CmdArgs& args) {
  DelegateConf c;
  c.bytes = args.stdin_data;
  c.version = args.conf.cni_version;
  return c;
}

Result DelegateAdd(const std::string& type, const DelegateConf& conf, const CmdArgs& args, Exec& exec) {
  return StartDelegateAdd(type, conf, args, exec).Wait();
}

void Delegate(const std::string& command, const std::string& type, const DelegateConf& conf, const CmdArgs& args,
              Exec& exec) {
  CheckDelegable(command);
  ExecRequest req = DelegateRequest(command, type, conf, args);
  log::Debug("delegating {} to {}", command, req.path);
  ExecPlugin(exec, req);
}

PendingDelegate::PendingDelegate(std::unique_ptr<Exec::Running> running, std::string path)
    : running_(std::move(running)), path_(std::move(path)) {}

PendingDelegate::~PendingDelegate() {
  if (!running_) return;
  try {
    Wait();
  } catch (const std::exception& e) {
    log::Error("{}: {}", path_, e.what());
  }
}

void PendingDelegate::Release() {
  if (running_) running_->Release();
}

json PendingDelegate::Wait() {
  if (!running_) return nullptr;
  auto running = std::move(running_);
  return Interpret(running->Wait(), path_);
}

PendingDelegate StartDelegate(const std::string& command, const std::string& type, const DelegateConf& conf,
                              const CmdArgs& args, Exec& exec) {
  CheckDelegable(command);
  ExecRequest req = DelegateRequest(command, type, conf, args);
  log::Debug("starting {} of {}", command, req.path);
  return PendingDelegate(exec.Start(req), req.path);
}

PendingAdd::PendingAdd(PendingDelegate pending, std::string type, std::string version)
    : pending_(std::move(pending)), type_(std::move(type)), version_(std::move(version)) {}

Result PendingAdd::Wait() {
  if (waited_) throw Error(kInternal, "the result of " + type_ + " was already taken");
  waited_ = true;
  json out = pending_.Wait();
  if (out.is_null()) throw Error(kDelegateFailed, "plugin " + type_ + " printed no result");
  return ParseResult(out, version_);
}

void PendingAdd::Finish() noexcept {
  if (waited_) return;
  waited_ = true;
  try {
    pending_.Wait();
  } catch (const std::exception& e) {
    log::Debug("{} ADD failed before its rollback: {}", type_, e.what());
  }
}

PendingAdd StartDelegateAdd(const std::string& type, const DelegateConf& conf, const CmdArgs& args, Exec& exec,
                            Stdin stdin_mode) {
  ExecRequest req = DelegateRequest("ADD", type, conf, args);
  req.hold_stdin = stdin_mode == Stdin::kOnRelease;
  log::Debug("starting ADD of {}", req.path);
  return PendingAdd(PendingDelegate(exec.Start(req), req.path), type, conf.version);
}

}  // namespace netiface::cni
