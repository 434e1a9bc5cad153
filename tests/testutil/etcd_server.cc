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

#include <array>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
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

// True when `pid` has exited (and reaps it).
bool Exited(pid_t pid) {
  int status = 0;
  return ::waitpid(pid, &status, WNOHANG) == pid;
}

// Sends `signal` to *pid, reaps it (SIGKILL after 10 s) and sets *pid to -1. No-op for -1.
void StopPid(pid_t* pid, int signal) {
  if (*pid <= 0) return;
  ::kill(*pid, signal);
  if (!WaitFor(*pid, std::chrono::seconds(10))) {
    ::kill(*pid, SIGKILL);
    WaitFor(*pid, std::chrono::seconds(10));
  }
  *pid = -1;
}

std::vector<std::string> InNetns(const std::string& netns, std::vector<std::string> argv) {
  if (netns.empty()) return argv;
  argv.insert(argv.begin(), {kIp, "netns", "exec", netns});
  return argv;
}

// Forks and execs `argv` with stdout and stderr appended to `log`; returns the child's pid. The child
// is SIGKILLed when this process dies, so that etcd never outlives a test binary that crashed.
pid_t Spawn(std::vector<std::string> argv, const std::string& log_path) {
  std::vector<char*> args;
  for (auto& a : argv) args.push_back(a.data());
  args.push_back(nullptr);
  int log = ::open(log_path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  int null = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  if (log < 0 || null < 0) {
    int err = errno;
    if (log >= 0) ::close(log);
    if (null >= 0) ::close(null);
    throw std::runtime_error("cannot open " + log_path + ": " + std::strerror(err));
  }
  pid_t parent = ::getpid();
  pid_t pid = ::fork();
  if (pid == 0) {
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
  return pid;
}

// In `tls_dir`: ca.crt/key, client.crt/key (clientAuth) and, per address i, server<i>.crt/key and
// peer<i>.crt/key, both with SAN = that address and for serverAuth + clientAuth (etcd's JSON gateway
// dials its own client URL with the server certificate).
void MakeCertificates(const std::string& tls_dir, const std::vector<std::string>& ips) {
  const std::string key = "-newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes";
  std::string script = "set -e; mkdir -p " + tls_dir + "; cd " + tls_dir + "\n" + "openssl req -x509 " + key +
                       " -keyout ca.key -out ca.crt -days 2 -subj /CN=netiface-test-ca\n" +
                       "printf 'extendedKeyUsage=clientAuth\\n' > client.ext\n";
  std::string names = "client";
  for (size_t i = 0; i < ips.size(); ++i) {
    std::string n = std::to_string(i);
    script += "printf 'subjectAltName=IP:" + ips[i] + "\\nextendedKeyUsage=serverAuth,clientAuth\\n' > server" + n +
              ".ext\n" + "printf 'subjectAltName=IP:" + ips[i] +
              "\\nextendedKeyUsage=serverAuth,clientAuth\\n' > peer" + n + ".ext\n";
    names += " server" + n + " peer" + n;
  }
  script += "for n in " + names +
            "; do\n"
            "  openssl req " +
            key + " -keyout $n.key -out $n.csr -subj /CN=netiface-test-$n\n" +
            "  openssl x509 -req -in $n.csr -CA ca.crt -CAkey ca.key -CAcreateserial -days 2 "
            "-extfile $n.ext -out $n.crt\n"
            "done\n";
  RunResult r = Sh(script + " 2>&1");
  if (r.exit_code != 0) throw std::runtime_error("cannot make test certificates with openssl: " + r.out + r.err);
}

// etcdctl (ETCDCTL_API=3) against `endpoints` (comma list), with the client certificate of `tls_dir`
// unless it is "".
RunResult Etcdctl(const std::string& netns, const std::string& endpoints, const std::string& tls_dir,
                  const std::vector<std::string>& args) {
  std::vector<std::string> argv = {kEtcdctl, "--endpoints=" + endpoints};
  if (!tls_dir.empty()) {
    argv.insert(argv.end(), {"--cacert=" + tls_dir + "/ca.crt", "--cert=" + tls_dir + "/client.crt",
                             "--key=" + tls_dir + "/client.key"});
  }
  argv.insert(argv.end(), args.begin(), args.end());
  return Run(InNetns(netns, std::move(argv)), EnvWith("ETCDCTL_API", "3"));
}

std::string Tail(const std::string& path, size_t bytes) {
  std::string log = ReadFile(path);
  return log.size() > bytes ? "..." + log.substr(log.size() - bytes) : log;
}

std::string Url(bool tls, const std::string& ip, int port) {
  return std::string(tls ? "https://" : "http://") + ip + ":" + std::to_string(port);
}

// A listening port inside the kernel's ephemeral range can be lost while its member is stopped: the
// other members keep dialling it, and a dial whose source port happens to equal the destination port
// connects to itself (TCP simultaneous open) and holds the port, so the restart fails with "address
// already in use". Ports below the range are never picked as source ports.
void RequireBelowEphemeralRange(int port) {
  int low = 32768;
  std::ifstream range("/proc/sys/net/ipv4/ip_local_port_range");
  range >> low;
  if (port >= low) {
    throw std::invalid_argument("etcd test port " + std::to_string(port) + " lies in the ephemeral range (from " +
                                std::to_string(low) + "); pick one below it");
  }
}

}  // namespace

EtcdServer::EtcdServer(EtcdServerOptions o) : o_(std::move(o)), name_(UniqueName("etcd")) {
  RequireBelowEphemeralRange(o_.client_port);
  RequireBelowEphemeralRange(o_.peer_port);
  if (o_.tls) MakeCertificates(dir_ / "tls", {o_.ip});
}

EtcdServer::~EtcdServer() { Stop(); }

std::string EtcdServer::endpoint() const { return Url(o_.tls, o_.ip, o_.client_port); }
std::string EtcdServer::ca_file() const { return o_.tls ? dir_ / "tls/ca.crt" : ""; }
std::string EtcdServer::cert_file() const { return o_.tls ? dir_ / "tls/client.crt" : ""; }
std::string EtcdServer::key_file() const { return o_.tls ? dir_ / "tls/client.key" : ""; }
std::string EtcdServer::LogTail(size_t bytes) const { return Tail(log_file(), bytes); }

void EtcdServer::Start() {
  if (running()) return;
  const std::string client_url = endpoint();
  const std::string peer_url = Url(false, o_.ip, o_.peer_port);
  std::vector<std::string> argv = {kEtcd,
                                   "--name",
                                   name_,
                                   "--data-dir",
                                   dir_ / "data",
                                   "--listen-client-urls",
                                   client_url,
                                   "--advertise-client-urls",
                                   client_url,
                                   "--listen-peer-urls",
                                   peer_url,
                                   "--initial-advertise-peer-urls",
                                   peer_url,
                                   "--initial-cluster",
                                   name_ + "=" + peer_url,
                                   "--initial-cluster-state",
                                   "new",
                                   "--log-level",
                                   "warn",
                                   "--logger",
                                   "zap"};
  if (o_.tls) {
    argv.insert(argv.end(), {"--cert-file", dir_ / "tls/server0.crt", "--key-file", dir_ / "tls/server0.key",
                             "--trusted-ca-file", dir_ / "tls/ca.crt", "--client-cert-auth"});
  }
  pid_ = Spawn(InNetns(o_.netns, std::move(argv)), log_file());

  auto deadline = Clock::now() + std::chrono::seconds(20);
  while (Clock::now() < deadline) {
    if (Exited(pid_)) {
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

void EtcdServer::Stop() { StopPid(&pid_, SIGTERM); }

void EtcdServer::Restart() {
  Stop();
  Start();
}

RunResult EtcdServer::Etcdctl(const std::vector<std::string>& args) const {
  return testing::Etcdctl(o_.netns, endpoint(), o_.tls ? dir_ / "tls" : "", args);
}

EtcdCluster::EtcdCluster(EtcdClusterOptions o) : o_(std::move(o)), token_(UniqueName("cluster")) {
  if (o_.ips.empty()) throw std::invalid_argument("EtcdCluster: no member addresses");
  for (size_t i = 0; i < o_.ips.size(); ++i) {
    int offset = 10 * static_cast<int>(i);
    members_.push_back({UniqueName("etcd"), o_.ips[i], o_.client_port + offset, o_.peer_port + offset});
    RequireBelowEphemeralRange(members_.back().client_port);
    RequireBelowEphemeralRange(members_.back().peer_port);
  }
  if (o_.tls) MakeCertificates(dir_ / "tls", o_.ips);
}

EtcdCluster::~EtcdCluster() {
  for (auto& m : members_) StopPid(&m.pid, SIGTERM);
}

std::string EtcdCluster::endpoint(size_t i) const {
  const Member& m = members_.at(i);
  return Url(o_.tls, m.ip, m.client_port);
}
std::vector<std::string> EtcdCluster::endpoint_list() const {
  std::vector<std::string> out;
  for (size_t i = 0; i < members_.size(); ++i) out.push_back(endpoint(i));
  return out;
}
std::string EtcdCluster::endpoints() const {
  std::string out;
  for (const auto& ep : endpoint_list()) out += (out.empty() ? "" : ",") + ep;
  return out;
}
std::string EtcdCluster::ca_file() const { return o_.tls ? dir_ / "tls/ca.crt" : ""; }
std::string EtcdCluster::cert_file() const { return o_.tls ? dir_ / "tls/client.crt" : ""; }
std::string EtcdCluster::key_file() const { return o_.tls ? dir_ / "tls/client.key" : ""; }
std::string EtcdCluster::log_file(size_t i) const { return dir_ / (members_.at(i).name + ".log"); }
std::string EtcdCluster::LogTail(size_t i, size_t bytes) const { return Tail(log_file(i), bytes); }
std::string EtcdCluster::PeerUrl(const Member& m) const { return Url(o_.tls, m.ip, m.peer_port); }

void EtcdCluster::Spawn(size_t i) {
  Member& m = members_.at(i);
  std::string initial_cluster;
  for (const auto& other : members_) {
    initial_cluster += (initial_cluster.empty() ? "" : ",") + other.name + "=" + PeerUrl(other);
  }
  const std::string client_url = endpoint(i);
  // A restarted member's data dir holds its membership: the --initial-* flags are then ignored.
  std::vector<std::string> argv = {kEtcd,
                                   "--name",
                                   m.name,
                                   "--data-dir",
                                   dir_ / m.name,
                                   "--listen-client-urls",
                                   client_url,
                                   "--advertise-client-urls",
                                   client_url,
                                   "--listen-peer-urls",
                                   PeerUrl(m),
                                   "--initial-advertise-peer-urls",
                                   PeerUrl(m),
                                   "--initial-cluster",
                                   initial_cluster,
                                   "--initial-cluster-token",
                                   token_,
                                   "--initial-cluster-state",
                                   "new",
                                   "--log-level",
                                   "warn",
                                   "--logger",
                                   "zap"};
  if (o_.tls) {
    const std::string tls = dir_ / "tls/", n = std::to_string(i);
    argv.insert(argv.end(), {"--cert-file", tls + "server" + n + ".crt", "--key-file", tls + "server" + n + ".key",
                             "--trusted-ca-file", tls + "ca.crt", "--client-cert-auth", "--peer-cert-file",
                             tls + "peer" + n + ".crt", "--peer-key-file", tls + "peer" + n + ".key",
                             "--peer-trusted-ca-file", tls + "ca.crt", "--peer-client-cert-auth"});
  }
  m.pid = testing::Spawn(InNetns(o_.netns, std::move(argv)), log_file(i));
}

void EtcdCluster::Start() {
  for (size_t i = 0; i < members_.size(); ++i) {
    if (!running(i)) Spawn(i);
  }
  std::string why, exited;
  auto deadline = Clock::now() + std::chrono::seconds(30);
  while (Clock::now() < deadline) {
    for (size_t i = 0; i < members_.size(); ++i) {
      if (Exited(members_[i].pid)) {
        members_[i].pid = -1;
        exited = why = "member " + std::to_string(i) + " exited during start-up";
      }
    }
    if (!exited.empty()) break;
    RunResult r = Etcdctl({"endpoint", "health", "--cluster", "--dial-timeout=1s", "--command-timeout=1s"});
    if (r.exit_code == 0) return;
    why = "not healthy after 30 s: " + r.out + r.err;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  std::ostringstream logs;
  for (size_t i = 0; i < members_.size(); ++i) logs << "member " << i << " log:\n" << LogTail(i) << "\n";
  for (auto& m : members_) StopPid(&m.pid, SIGTERM);
  ADD_FAILURE() << "etcd cluster " << why << "\n" << logs.str();
  throw std::runtime_error("etcd cluster " + why);
}

void EtcdCluster::Signal(size_t i, int signal) { StopPid(&members_.at(i).pid, signal); }
void EtcdCluster::StopMember(size_t i) { Signal(i, SIGTERM); }
void EtcdCluster::KillMember(size_t i) { Signal(i, SIGKILL); }

void EtcdCluster::StartMember(size_t i) {
  if (running(i)) return;
  Spawn(i);
  auto deadline = Clock::now() + std::chrono::seconds(20);
  while (Clock::now() < deadline) {
    if (Exited(members_[i].pid)) {
      members_[i].pid = -1;
      ADD_FAILURE() << "etcd member " << i << " exited on restart; log:\n" << LogTail(i);
      throw std::runtime_error("etcd member exited on restart");
    }
    if (EtcdctlMember(i, {"endpoint", "health", "--dial-timeout=1s", "--command-timeout=1s"}).exit_code == 0) return;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  std::string tail = LogTail(i);
  StopMember(i);
  ADD_FAILURE() << "etcd member " << i << " not healthy 20 s after its restart; log:\n" << tail;
  throw std::runtime_error("etcd member not healthy after restart");
}

// Each running member's (index, member id, leader id) as `etcdctl endpoint status` reports them.
std::vector<std::array<uint64_t, 3>> EtcdCluster::Statuses() const {
  std::vector<std::array<uint64_t, 3>> out;
  for (size_t i = 0; i < members_.size(); ++i) {
    if (!running(i)) continue;
    RunResult r = EtcdctlMember(i, {"endpoint", "status", "-w", "json", "--command-timeout=2s"});
    nlohmann::json j = nlohmann::json::parse(r.out, nullptr, false);
    if (r.exit_code != 0 || !j.is_array() || j.empty() || !j[0].is_object()) continue;
    const nlohmann::json& status = j[0].value("Status", nlohmann::json::object());
    uint64_t id = status.value("header", nlohmann::json::object()).value("member_id", uint64_t{0});
    out.push_back({i, id, status.value("leader", uint64_t{0})});
  }
  return out;
}

std::optional<size_t> EtcdCluster::Leader() const {
  auto statuses = Statuses();
  for (const auto& s : statuses) {
    for (const auto& t : statuses) {
      if (s[2] != 0 && t[1] == s[2]) return t[0];
    }
  }
  return std::nullopt;
}

bool EtcdCluster::MoveLeader(size_t i) {
  auto statuses = Statuses();
  std::optional<size_t> now = Leader();
  if (!now) return false;
  if (*now == i) return true;
  for (const auto& s : statuses) {
    if (s[0] != i) continue;
    std::ostringstream hex;
    hex << std::hex << s[1];
    // move-leader must reach the current leader.
    if (EtcdctlMember(*now, {"move-leader", hex.str()}).exit_code != 0) return false;
    return Leader() == i;
  }
  return false;
}

RunResult EtcdCluster::Etcdctl(const std::vector<std::string>& args) const {
  return testing::Etcdctl(o_.netns, endpoints(), o_.tls ? dir_ / "tls" : "", args);
}

RunResult EtcdCluster::EtcdctlMember(size_t i, const std::vector<std::string>& args) const {
  return testing::Etcdctl(o_.netns, endpoint(i), o_.tls ? dir_ / "tls" : "", args);
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
