#include "etcd_server.h"

#include <fcntl.h>
#include <net/if.h>
#include <sched.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <thread>

#include <gtest/gtest.h>

extern char** environ;

namespace netiface::testing {
namespace {

using Clock = std::chrono::steady_clock;

constexpr char kEtcd[] = "/usr/bin/etcd";
constexpr char kEtcdctl[] = "/usr/bin/etcdctl";
constexpr char kIp[] = "/bin/ip";

std::map<std::string, std::string> EnvWith(const std::string& key, const std::string& value) {
  std::map<std::string, std::string> env;
  for (char** e = environ; *e != nullptr; ++e) {
    std::string kv(*e);
    if (auto eq = kv.find('='); eq != std::string::npos) env[kv.substr(0, eq)] = kv.substr(eq + 1);
  }
  env[key] = value;
  return env;
}

// Waits for `pid` up to `timeout`; true when it was reaped.
bool WaitFor(pid_t pid, std::chrono::milliseconds timeout) {
  auto deadline = Clock::now() + timeout;
  for (;;) {
    int status = 0;
    pid_t r = ::waitpid(pid, &status, WNOHANG);
    if (r == pid || (r < 0 && errno == ECHILD)) return true;
    if (Clock::now() >= deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

}  // namespace

EtcdServer::EtcdServer(EtcdServerOptions o) : o_(std::move(o)), name_(UniqueName("etcd")) {
  if (o_.tls) MakeCertificates();
}

EtcdServer::~EtcdServer() { Stop(); }

std::string EtcdServer::endpoint() const {
  return std::string(o_.tls ? "https://" : "http://") + o_.ip + ":" + std::to_string(o_.client_port);
}
std::string EtcdServer::ca_file() const { return o_.tls ? dir_ / "tls/ca.crt" : ""; }
std::string EtcdServer::cert_file() const { return o_.tls ? dir_ / "tls/client.crt" : ""; }
std::string EtcdServer::key_file() const { return o_.tls ? dir_ / "tls/client.key" : ""; }

std::string EtcdServer::LogTail(size_t bytes) const {
  std::string log = ReadFile(log_file());
  return log.size() > bytes ? "..." + log.substr(log.size() - bytes) : log;
}

void EtcdServer::MakeCertificates() {
  const std::string tls = dir_ / "tls";
  const std::string key = "-newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes";
  std::string script = "set -e; mkdir -p " + tls + "; cd " + tls + "\n" +
                       "printf 'subjectAltName=IP:" + o_.ip + "\\nextendedKeyUsage=serverAuth,clientAuth\\n' > server.ext\n" +
                       "printf 'extendedKeyUsage=clientAuth\\n' > client.ext\n" +
                       "openssl req -x509 " + key + " -keyout ca.key -out ca.crt -days 2 -subj /CN=netiface-test-ca\n" +
                       "for n in server client; do\n"
                       "  openssl req " + key + " -keyout $n.key -out $n.csr -subj /CN=netiface-test-$n\n" +
                       "  openssl x509 -req -in $n.csr -CA ca.crt -CAkey ca.key -CAcreateserial -days 2 "
                       "-extfile $n.ext -out $n.crt\n"
                       "done\n";
  RunResult r = Sh(script + " 2>&1");
  if (r.exit_code != 0) throw std::runtime_error("cannot make test certificates with openssl: " + r.out + r.err);
}

std::vector<std::string> EtcdServer::InNetns(std::vector<std::string> argv) const {
  if (o_.netns.empty()) return argv;
  argv.insert(argv.begin(), {kIp, "netns", "exec", o_.netns});
  return argv;
}

void EtcdServer::Start() {
  if (running()) return;
  const std::string scheme = o_.tls ? "https://" : "http://";
  const std::string client_url = scheme + o_.ip + ":" + std::to_string(o_.client_port);
  const std::string peer_url = "http://" + o_.ip + ":" + std::to_string(o_.peer_port);
  std::vector<std::string> argv = {kEtcd,
                                   "--name", name_,
                                   "--data-dir", dir_ / "data",
                                   "--listen-client-urls", client_url,
                                   "--advertise-client-urls", client_url,
                                   "--listen-peer-urls", peer_url,
                                   "--initial-advertise-peer-urls", peer_url,
                                   "--initial-cluster", name_ + "=" + peer_url,
                                   "--initial-cluster-state", "new",
                                   "--log-level", "warn",
                                   "--logger", "zap"};
  if (o_.tls) {
    argv.insert(argv.end(), {"--cert-file", dir_ / "tls/server.crt", "--key-file", dir_ / "tls/server.key",
                             "--trusted-ca-file", dir_ / "tls/ca.crt", "--client-cert-auth"});
  }
  argv = InNetns(std::move(argv));
  std::vector<char*> args;
  for (auto& a : argv) args.push_back(a.data());
  args.push_back(nullptr);

  int log = ::open(log_file().c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  int null = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  if (log < 0 || null < 0) throw std::runtime_error("cannot open " + log_file() + ": " + std::strerror(errno));
  pid_t parent = ::getpid();
  pid_t pid = ::fork();
  if (pid == 0) {
    // etcd must not outlive a test binary that crashed.
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != parent) ::_exit(127);
    ::dup2(null, 0);
    ::dup2(log, 1);
    ::dup2(log, 2);
    ::execve(args[0], args.data(), environ);
    ::_exit(127);
  }
  ::close(log);
  ::close(null);
  if (pid < 0) throw std::runtime_error(std::string("fork: ") + std::strerror(errno));
  pid_ = pid;

  auto deadline = Clock::now() + std::chrono::seconds(20);
  while (Clock::now() < deadline) {
    int status = 0;
    if (::waitpid(pid_, &status, WNOHANG) == pid_) {
      pid_ = -1;
      ADD_FAILURE() << "etcd exited during start-up; log:\n" << LogTail();
      throw std::runtime_error("etcd exited during start-up");
    }
    if (Etcdctl({"endpoint", "health", "--dial-timeout=1s", "--command-timeout=1s"}).exit_code == 0) return;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  std::string tail = LogTail();
  Stop();
  ADD_FAILURE() << "etcd not healthy after 20 s; log:\n" << tail;
  throw std::runtime_error("etcd not healthy after 20 s");
}

void EtcdServer::Stop() {
  if (!running()) return;
  ::kill(pid_, SIGTERM);
  if (!WaitFor(pid_, std::chrono::seconds(10))) {
    ::kill(pid_, SIGKILL);
    WaitFor(pid_, std::chrono::seconds(10));
  }
  pid_ = -1;
}

void EtcdServer::Restart() {
  Stop();
  Start();
}

RunResult EtcdServer::Etcdctl(const std::vector<std::string>& args) const {
  std::vector<std::string> argv = {kEtcdctl, "--endpoints=" + endpoint()};
  if (o_.tls) {
    argv.insert(argv.end(), {"--cacert=" + ca_file(), "--cert=" + cert_file(), "--key=" + key_file()});
  }
  argv.insert(argv.end(), args.begin(), args.end());
  return Run(InNetns(std::move(argv)), EnvWith("ETCDCTL_API", "3"));
}

bool EnterPrivateNetns() {
  if (!IsRoot()) return false;
  if (::unshare(CLONE_NEWNET) != 0) {
    ADD_FAILURE() << "unshare(CLONE_NEWNET): " << std::strerror(errno);
    return false;
  }
  int fd = ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  ifreq ifr{};
  std::strncpy(ifr.ifr_name, "lo", IFNAMSIZ - 1);
  bool up = fd >= 0 && ::ioctl(fd, SIOCGIFFLAGS, &ifr) == 0 && (ifr.ifr_flags |= IFF_UP, true) &&
            ::ioctl(fd, SIOCSIFFLAGS, &ifr) == 0;
  int err = errno;
  if (fd >= 0) ::close(fd);
  if (!up) throw std::runtime_error(std::string("cannot bring lo up in the private namespace: ") + std::strerror(err));
  return true;
}

}  // namespace netiface::testing
