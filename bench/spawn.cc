#include "spawn.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <stdexcept>

namespace netiface::bench {

static double NowMs() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

Outcome Spawn(const Call& call) {
  int in[2], out[2];
  if (pipe2(in, O_CLOEXEC) != 0 || pipe2(out, O_CLOEXEC) != 0) throw std::runtime_error("pipe");
  std::vector<std::string> env_strs;
  for (const auto& [k, v] : call.env) env_strs.push_back(k + "=" + v);
  std::vector<char*> envp;
  for (auto& s : env_strs) envp.push_back(s.data());
  envp.push_back(nullptr);
  std::string path = call.path;
  char* argv[] = {path.data(), nullptr};

  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, in[0], 0);
  posix_spawn_file_actions_adddup2(&fa, out[1], 1);
  posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);

  Outcome o;
  double start = NowMs();
  pid_t pid;
  int rc = posix_spawn(&pid, path.c_str(), &fa, nullptr, argv, envp.data());
  posix_spawn_file_actions_destroy(&fa);
  close(in[0]);
  close(out[1]);
  if (rc != 0) {
    close(in[1]);
    close(out[0]);
    return o;
  }
  // Configs are small (< pipe buffer), so writing all of stdin before reading stdout cannot deadlock.
  size_t off = 0;
  while (off < call.stdin_data.size()) {
    ssize_t k = write(in[1], call.stdin_data.data() + off, call.stdin_data.size() - off);
    if (k <= 0) break;
    off += k;
  }
  close(in[1]);
  char buf[16384];
  ssize_t k;
  while ((k = read(out[0], buf, sizeof buf)) > 0) o.out.append(buf, k);
  close(out[0]);
  int status = 0;
  rusage ru{};
  wait4(pid, &status, 0, &ru);
  o.ms = NowMs() - start;
  o.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  o.max_rss_kb = ru.ru_maxrss;
  return o;
}

Call CniCall(const std::string& plugin, const std::string& command, const std::string& container_id,
             const std::string& netns, const std::string& cni_path, const std::string& conf) {
  Call c;
  c.path = plugin;
  c.env = {{"PATH", "/usr/sbin:/usr/bin:/sbin:/bin"},
           {"CNI_COMMAND", command},
           {"CNI_CONTAINERID", container_id},
           {"CNI_NETNS", netns},
           {"CNI_IFNAME", "eth0"},
           {"CNI_PATH", cni_path}};
  c.stdin_data = conf;
  return c;
}

}  // namespace netiface::bench
