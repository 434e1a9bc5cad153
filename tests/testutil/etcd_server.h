// Real etcd for tests: a single member (EtcdServer) or a cluster of several (EtcdCluster), each member
// with its own data dir and log and, optionally, certificates from one throw-away CA. Members are started
// by fork/exec, so that a pid is etcd's own and a member is stopped by that pid.
#pragma once

#include <sys/types.h>

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "testutil.h"

namespace netiface::testing {

struct EtcdServerOptions {
  std::string netns;                         // "" = the current namespace; else a namespace name (ip netns exec)
  std::string ip = "127.0.0.1";              // listen address (client and peer)
  int client_port = 2379, peer_port = 2380;  // fixed ports are fine inside a namespace the test made
  bool tls = false;  // https with a CA, a server cert (SAN = ip) and a client cert; client certs required
};

class EtcdServer {
 public:
  explicit EtcdServer(EtcdServerOptions o);  // makes the folder (and certificates); does not start
  ~EtcdServer();                             // Stop() and remove the folder
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
  EtcdServerOptions o_;
  TempDir dir_;  // data/, tls/, etcd.log
  std::string name_;
  pid_t pid_ = -1;
};

struct EtcdClusterOptions {
  std::string netns;  // as EtcdServerOptions::netns; every member runs there
  // One address per member (their number is the cluster's size). Member i listens on client_port + 10*i
  // and peer_port + 10*i, so several members can share an address.
  std::vector<std::string> ips = {"127.0.0.1", "127.0.0.1", "127.0.0.1"};
  int client_port = 2379, peer_port = 2380;
  // https for client AND peer URLs, one CA: per member a server and a peer certificate (SAN = its ip),
  // one client certificate; client certificates are required on both sides.
  bool tls = false;
};

class EtcdCluster {
 public:
  explicit EtcdCluster(EtcdClusterOptions o);  // makes the folders (and certificates); starts nothing
  ~EtcdCluster();                              // stops every member, removes the folders
  EtcdCluster(const EtcdCluster&) = delete;
  EtcdCluster& operator=(const EtcdCluster&) = delete;

  // Starts every member at once (a new cluster needs a quorum to come up) and waits until
  // `etcdctl endpoint health --cluster` succeeds (up to 30 s); otherwise fails the test with each
  // log's tail, stops what it started and throws.
  void Start();
  // SIGTERM (StopMember) or SIGKILL (KillMember) to member i by pid and reap it; keeps its data dir.
  // No-op when it is not running.
  void StopMember(size_t i);
  void KillMember(size_t i);
  // Starts member i again on its data dir (it rejoins the cluster) and waits until it reports healthy
  // (up to 20 s); fails the test and throws otherwise.
  void StartMember(size_t i);
  bool running(size_t i) const { return members_.at(i).pid > 0; }
  size_t size() const { return members_.size(); }

  std::string endpoint(size_t i) const;  // member i's client URL
  std::string endpoints() const;         // every member's, comma-separated (flanneld's --etcd-endpoints)
  std::vector<std::string> endpoint_list() const;
  std::string ca_file() const;  // TLS client side; "" without tls
  std::string cert_file() const;
  std::string key_file() const;
  std::string log_file(size_t i) const;
  std::string LogTail(size_t i, size_t bytes = 2000) const;

  // The index of the member that is the raft leader as the running members report it; empty when none
  // of them knows one.
  std::optional<size_t> Leader() const;
  // Hands leadership to member i (etcdctl move-leader); true when it is the leader afterwards.
  bool MoveLeader(size_t i);

  // etcdctl (ETCDCTL_API=3) against every member's endpoint, or only member i's, in the namespace.
  RunResult Etcdctl(const std::vector<std::string>& args) const;
  RunResult EtcdctlMember(size_t i, const std::vector<std::string>& args) const;

 private:
  struct Member {
    std::string name, ip;
    int client_port = 0, peer_port = 0;
    pid_t pid = -1;
  };
  void Spawn(size_t i);
  void Signal(size_t i, int signal);
  std::string PeerUrl(const Member& m) const;
  std::vector<std::array<uint64_t, 3>> Statuses() const;

  EtcdClusterOptions o_;
  TempDir dir_;  // tls/, <name>/ (data), <name>.log per member
  std::string token_;
  std::vector<Member> members_;
};

// Moves the calling process into a new network namespace of its own with lo up (unshare(CLONE_NEWNET)),
// so that etcd can listen on 127.0.0.1 without touching the root namespace. Call it before any thread
// starts. False when not root (the test should skip).
bool EnterPrivateNetns();

}  // namespace netiface::testing
