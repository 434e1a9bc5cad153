// Endpoint records (Calico's WorkloadEndpoint in spirit, without a datastore): one JSON file per
// attachment, replaced atomically under a per-network flock, and a second name for the same file by
// attachment, so that DEL finds a record in one open whatever CNI_ARGS it gets:
//   <dataDir>/<network>/.lock
//   <dataDir>/<network>/<pod namespace | "_cni">/<endpoint name>.json
//   <dataDir>/<network>/.by-attachment/<containerID>:<ifname>      (a hard link: no file of its own)
// The namespace folder keeps same-named pods of different namespaces apart; "_cni" and ".lock" can
// never be a (valid) namespace name.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "netiface/cni/config.h"
#include "netiface/cni/file.h"
#include "netiface/cni/ip.h"

namespace netiface::veth_workload {

inline constexpr int kStoreLockTimeoutMs = 10000;

struct EndpointRecord {
  std::string name;  // EndpointName()
  std::string network;
  std::string node;
  std::string orchestrator;   // "k8s" or "cni"
  std::string pod_namespace;  // "" for cni
  std::string pod;            // "" for cni
  std::string container_id;
  std::string ifname;
  std::string netns;
  std::string host_veth;
  std::string container_mac;
  std::vector<cni::IpNet> ip_networks;  // as configured in the container: /32 and /128
  std::vector<cni::IpNet> masquerade;   // ipMasq: the addresses with their IPAM prefix; [] otherwise
  std::vector<std::pair<cni::IpAddr, cni::IpAddr>> ip_nats;  // floating IPs: external -> internal
  bool operator==(const EndpointRecord&) const = default;

  // NAT rules exist for this attachment.
  bool HasNat() const { return !masquerade.empty() || !ip_nats.empty(); }
  // The folder below <dataDir>/<network>: the pod namespace, or "_cni".
  std::string Folder() const { return pod_namespace.empty() ? "_cni" : pod_namespace; }
};

nlohmann::json RecordToJson(const EndpointRecord& r);
// Throws cni::Error(kDecodeFailure) when a field is missing or has the wrong type.
EndpointRecord RecordFromJson(const nlohmann::json& j);

class EndpointStore {
 public:
  EndpointStore(std::string data_dir, std::string network);

  // <dataDir>/<network>/<folder>/<name>.json
  std::string PathFor(const std::string& folder, const std::string& name) const;
  // Creates <dataDir>/<network> (0700) when missing. Throws cni::Error(kIoFailure).
  void Prepare() const;

  // Creates the file of the record <folder>/<name> ahead of its content (ADD does it while IPAM runs:
  // creating a file is the slow part of writing one). Throws cni::Error(kIoFailure).
  std::unique_ptr<cni::AtomicFile> Draft(const std::string& folder, const std::string& name) const;
  // Replaces the record (0600), through `draft` when it is this record's. Throws cni::Error(kIoFailure),
  // cni::Error(kTryAgainLater) when the lock is not free within kStoreLockTimeoutMs.
  void Write(const EndpointRecord& r, std::unique_ptr<cni::AtomicFile> draft = nullptr) const;
  // nullopt when there is none. Throws cni::Error(kDecodeFailure / kIoFailure).
  std::optional<EndpointRecord> Read(const std::string& folder, const std::string& name) const;
  // Removes the attachment's link, and the record when it exists and belongs to `container_id`;
  // returns whether the record was removed. An unreadable record is removed too (it cannot be
  // anybody's), and so are the record's drafts whose writer is gone (an ADD killed while it drafted
  // the record), whoever's they were. Throws cni::Error(kIoFailure).
  bool RemoveIfOwned(const std::string& folder, const std::string& name, const std::string& container_id,
                     const std::string& ifname) const;
  // The record of an attachment, through its link (one open), or nullopt. A record replaced by a newer
  // sandbox of the same pod stays readable through the older attachment's link until that is removed.
  std::optional<EndpointRecord> FindByAttachment(const std::string& container_id, const std::string& ifname) const;
  // Every readable record, sorted by path; unreadable ones are skipped with a warning.
  std::vector<EndpointRecord> List() const;
  // Removes the records and links whose (containerID, ifname) is not in `valid` and returns the
  // records; a file that cannot be removed is named in `errors` and the others are still removed.
  // Every draft whose writer is gone (a killed ADD's) is removed too.
  std::vector<EndpointRecord> RemoveStale(const std::vector<cni::Attachment>& valid,
                                          std::vector<std::string>& errors) const;

 private:
  std::string NetworkDir() const { return data_dir_ + "/" + network_; }
  std::string LinkPath(const std::string& container_id, const std::string& ifname) const;
  std::vector<std::pair<std::string, EndpointRecord>> ListUnlocked() const;

  std::string data_dir_;
  std::string network_;
};

}  // namespace netiface::veth_workload
