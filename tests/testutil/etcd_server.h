// A real single-member etcd for tests: its own data dir, log and (optionally) a CA, server and
// client certificates, started by fork/exec so that its pid is etcd's own and it is stopped by that pid.
#pragma once

#include <sys/types.h>

#include <memory>
#include <string>
#include <vector>

#include "testutil.h"

namespace netiface::testing {

struct EtcdServerOptions {
  std::string netns;             // "" = the current namespace; else a namespace name (ip netns exec)
  std::string ip = "127.0.0.1";  // listen address (client and peer)
  int client_port = 2379, peer_port = 2380;  // fixed ports are fine inside a namespace the test made
  bool tls = false;  // https with a CA, a server cert (SAN = ip) and a client cert; client certs required
};

class EtcdServer {
 public:
  explicit EtcdServer(EtcdServerOptions o);  // makes the folder (and certificates); does not start
  ~EtcdServer();                              // Stop() and remove the folder
  EtcdServer(const EtcdServer&) = delete;
  EtcdServer& operator=(const EtcdServer&) = delete;

  // Starts etcd and waits until `etcdctl endpoint health` succeeds (up to 20 s); otherwise fails the
  // test with the log's tail and throws.
  void Start();
  // SIGTERM by pid, waits (SIGKILL after 10 s); keeps the data dir. No-op when not running.
  void Stop();
  void Restart();  // Stop + Start on the same data dir
  bool running() const { return pid_ > 0; }

  std::string endpoint() const;  // "http://ip:port" or "https://ip:port"
  std::string ca_file() const;   // TLS client side; "" without tls
  std::string cert_file() const;
  std::string key_file() const;
  std::string log_file() const { return dir_ / "etcd.log"; }
  std::string LogTail(size_t bytes = 2000) const;

  // etcdctl (ETCDCTL_API=3) against this member, in its namespace.
  RunResult Etcdctl(const std::vector<std::string>& args) const;

 private:
  void MakeCertificates();
  std::vector<std::string> InNetns(std::vector<std::string> argv) const;

  EtcdServerOptions o_;
  TempDir dir_;  // data/, tls/, etcd.log
  std::string name_;
  pid_t pid_ = -1;
};

// Moves the calling process into a new network namespace of its own with lo up (unshare(CLONE_NEWNET)),
// so that etcd can listen on 127.0.0.1 without touching the root namespace. Call it before any thread
// starts. False when not root (the test should skip).
bool EnterPrivateNetns();

}  // namespace netiface::testing
