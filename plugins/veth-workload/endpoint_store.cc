#include "netiface/veth_workload/endpoint_store.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <system_error>

#include "netiface/cni/error.h"
#include "netiface/cni/file.h"
#include "netiface/cni/log.h"

namespace netiface::veth_workload {
namespace {

using nlohmann::json;
namespace fs = std::filesystem;

constexpr const char* kLockName = ".lock";
constexpr const char* kSuffix = ".json";
// Neither a container ID nor an interface name can contain ':', so "<containerID>:<ifname>" is one
// attachment's name and nobody else's; the folder starts with '.', which no namespace name does.
constexpr const char* kLinkFolder = ".by-attachment";

void UnlinkIfExists(const std::string& path, const char* what) {
  if (::unlink(path.c_str()) != 0 && errno != ENOENT) {
    throw cni::Error(cni::kIoFailure, std::string("cannot remove ") + what + " " + path, std::strerror(errno));
  }
}

[[noreturn]] void Bad(const std::string& what) { throw cni::Error(cni::kDecodeFailure, "endpoint record: " + what); }

std::string Str(const json& j, const char* key) {
  auto it = j.find(key);
  if (it == j.end()) Bad(std::string("missing \"") + key + "\"");
  if (!it->is_string()) Bad(std::string("\"") + key + "\" must be a string");
  return it->get<std::string>();
}

std::vector<cni::IpNet> Nets(const json& j, const char* key) {
  std::vector<cni::IpNet> out;
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return out;
  if (!it->is_array()) Bad(std::string("\"") + key + "\" must be an array");
  for (const auto& e : *it) {
    std::optional<cni::IpNet> n = e.is_string() ? cni::IpNet::Parse(e.get<std::string>()) : std::nullopt;
    if (!n) Bad(std::string("invalid entry in \"") + key + "\"");
    out.push_back(*n);
  }
  return out;
}

json NetsJson(const std::vector<cni::IpNet>& nets) {
  json a = json::array();
  for (const auto& n : nets) a.push_back(n.ToString());
  return a;
}

class StoreLock {
 public:
  explicit StoreLock(const std::string& network_dir)
      : lock_(cni::FileLock::Acquire(network_dir + "/" + kLockName, kStoreLockTimeoutMs)) {}

 private:
  cni::FileLock lock_;
};

}  // namespace

json RecordToJson(const EndpointRecord& r) {
  json nats = json::array();
  for (const auto& [ext, in] : r.ip_nats)
    nats.push_back({{"externalIp", ext.ToString()}, {"internalIp", in.ToString()}});
  return json{{"name", r.name},
              {"network", r.network},
              {"node", r.node},
              {"orchestrator", r.orchestrator},
              {"namespace", r.pod_namespace},
              {"pod", r.pod},
              {"containerID", r.container_id},
              {"ifname", r.ifname},
              {"netns", r.netns},
              {"hostVeth", r.host_veth},
              {"containerMac", r.container_mac},
              {"ipNetworks", NetsJson(r.ip_networks)},
              {"masquerade", NetsJson(r.masquerade)},
              {"ipNats", nats}};
}

EndpointRecord RecordFromJson(const json& j) {
  if (!j.is_object()) Bad("not a JSON object");
  EndpointRecord r;
  r.name = Str(j, "name");
  r.network = Str(j, "network");
  r.node = Str(j, "node");
  r.orchestrator = Str(j, "orchestrator");
  r.pod_namespace = Str(j, "namespace");
  r.pod = Str(j, "pod");
  r.container_id = Str(j, "containerID");
  r.ifname = Str(j, "ifname");
  r.netns = Str(j, "netns");
  r.host_veth = Str(j, "hostVeth");
  r.container_mac = Str(j, "containerMac");
  r.ip_networks = Nets(j, "ipNetworks");
  r.masquerade = Nets(j, "masquerade");
  if (auto it = j.find("ipNats"); it != j.end() && !it->is_null()) {
    if (!it->is_array()) Bad("\"ipNats\" must be an array");
    for (const auto& e : *it) {
      if (!e.is_object()) Bad("invalid entry in \"ipNats\"");
      auto ext = cni::IpAddr::Parse(Str(e, "externalIp"));
      auto in = cni::IpAddr::Parse(Str(e, "internalIp"));
      if (!ext || !in) Bad("invalid address in \"ipNats\"");
      r.ip_nats.emplace_back(*ext, *in);
    }
  }
  return r;
}

namespace {

// The record in the file at `path`; nullopt when there is none. Throws kDecodeFailure for a file that
// is not a record.
std::optional<EndpointRecord> ReadRecordFile(const std::string& path) {
  auto data = cni::ReadFileIfExists(path);
  if (!data) return std::nullopt;
  json j = json::parse(*data, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) Bad("invalid JSON in " + path);
  return RecordFromJson(j);
}

}  // namespace

EndpointStore::EndpointStore(std::string data_dir, std::string network)
    : data_dir_(std::move(data_dir)), network_(std::move(network)) {}

std::string EndpointStore::PathFor(const std::string& folder, const std::string& name) const {
  return NetworkDir() + "/" + folder + "/" + name + kSuffix;
}

std::string EndpointStore::LinkPath(const std::string& container_id, const std::string& ifname) const {
  return NetworkDir() + "/" + kLinkFolder + "/" + container_id + ":" + ifname;
}

void EndpointStore::Prepare() const { cni::MakeDirs(NetworkDir(), 0700); }

std::unique_ptr<cni::AtomicFile> EndpointStore::Draft(const std::string& folder, const std::string& name) const {
  Prepare();
  cni::MakeDirs(NetworkDir() + "/" + folder, 0700);
  return std::make_unique<cni::AtomicFile>(PathFor(folder, name), 0600);
}

void EndpointStore::Write(const EndpointRecord& r, std::unique_ptr<cni::AtomicFile> draft) const {
  if (!draft || draft->path() != PathFor(r.Folder(), r.name)) draft = Draft(r.Folder(), r.name);
  cni::MakeDirs(NetworkDir() + "/" + kLinkFolder, 0700);
  StoreLock lock(NetworkDir());
  // Atomic against a killed process, not fsynced: after a power loss the pods are gone with the
  // namespaces, and DEL/GC treat a missing or unreadable record as already gone.
  draft->Commit(RecordToJson(r).dump(2) + "\n", cni::Sync::kProcessCrash);
  // The second name: a directory entry, no new file. A link left by an earlier ADD of the same
  // attachment (a crash before its DEL) is replaced.
  const std::string link = LinkPath(r.container_id, r.ifname), path = PathFor(r.Folder(), r.name);
  int rc = ::link(path.c_str(), link.c_str());
  if (rc != 0 && errno == EEXIST) {
    UnlinkIfExists(link, "endpoint record link");
    rc = ::link(path.c_str(), link.c_str());
  }
  if (rc != 0) {
    throw cni::Error(cni::kIoFailure, "cannot link endpoint record " + path + " to " + link, std::strerror(errno));
  }
}

std::optional<EndpointRecord> EndpointStore::Read(const std::string& folder, const std::string& name) const {
  return ReadRecordFile(PathFor(folder, name));
}

bool EndpointStore::RemoveIfOwned(const std::string& folder, const std::string& name, const std::string& container_id,
                                  const std::string& ifname) const {
  std::error_code ec;
  if (!fs::exists(NetworkDir(), ec)) return false;
  StoreLock lock(NetworkDir());
  UnlinkIfExists(LinkPath(container_id, ifname), "endpoint record link");
  // What an ADD killed while it drafted this record left (a draft being written is not touched).
  if (int n = cni::RemoveAbandonedTemporaries(PathFor(folder, name))) {
    log::Info("removed {} abandoned draft(s) of endpoint record {}", n, PathFor(folder, name));
  }
  std::optional<EndpointRecord> r;
  try {
    r = Read(folder, name);
  } catch (const cni::Error& e) {
    if (e.code() != cni::kDecodeFailure) throw;
    log::Warn("removing unreadable endpoint record {}: {}", PathFor(folder, name), e.what());
  }
  if (r && r->container_id != container_id) return false;
  std::string path = PathFor(folder, name);
  if (::unlink(path.c_str()) != 0) {
    if (errno == ENOENT) return false;
    throw cni::Error(cni::kIoFailure, "cannot remove endpoint record " + path, std::strerror(errno));
  }
  return true;
}

std::vector<std::pair<std::string, EndpointRecord>> EndpointStore::ListUnlocked() const {
  std::vector<std::pair<std::string, EndpointRecord>> out;
  std::error_code ec;
  fs::directory_iterator folders(NetworkDir(), ec);
  if (ec) return out;
  std::vector<std::string> paths;
  for (const auto& folder : folders) {
    if (!folder.is_directory(ec) || folder.path().filename().string().starts_with(".")) continue;
    for (const auto& f : fs::directory_iterator(folder.path(), ec)) {
      std::string p = f.path().string();
      if (p.size() > 5 && p.ends_with(kSuffix) && f.is_regular_file(ec)) paths.push_back(p);
    }
  }
  std::sort(paths.begin(), paths.end());
  for (const auto& p : paths) {
    try {
      if (auto r = ReadRecordFile(p)) out.emplace_back(p, std::move(*r));
    } catch (const cni::Error& e) {
      log::Warn("skipping endpoint record {}: {}", p, e.what());
    }
  }
  return out;
}

std::optional<EndpointRecord> EndpointStore::FindByAttachment(const std::string& container_id,
                                                              const std::string& ifname) const {
  // No lock: records and links are replaced and removed atomically.
  const std::string link = LinkPath(container_id, ifname);
  auto r = ReadRecordFile(link);
  if (r && (r->container_id != container_id || r->ifname != ifname)) Bad(link + " is the record of another attachment");
  return r;
}

std::vector<EndpointRecord> EndpointStore::List() const {
  std::error_code ec;
  if (!fs::exists(NetworkDir(), ec)) return {};
  StoreLock lock(NetworkDir());
  std::vector<EndpointRecord> out;
  for (auto& [path, r] : ListUnlocked()) out.push_back(std::move(r));
  return out;
}

std::vector<EndpointRecord> EndpointStore::RemoveStale(const std::vector<cni::Attachment>& valid,
                                                       std::vector<std::string>& errors) const {
  std::error_code ec;
  if (!fs::exists(NetworkDir(), ec)) return {};
  StoreLock lock(NetworkDir());
  // Drafts of ADDs that were killed: nobody's record.
  for (const auto& folder : fs::directory_iterator(NetworkDir(), ec)) {
    if (!folder.is_directory(ec) || folder.path().filename().string().starts_with(".")) continue;
    if (int n = cni::RemoveAbandonedTemporariesIn(folder.path().string())) {
      log::Info("removed {} abandoned endpoint record draft(s) in {}", n, folder.path().string());
    }
  }
  std::vector<EndpointRecord> removed;
  for (auto& [path, r] : ListUnlocked()) {
    cni::Attachment a{r.container_id, r.ifname};
    if (std::find(valid.begin(), valid.end(), a) != valid.end()) continue;
    if (::unlink(path.c_str()) != 0 && errno != ENOENT) {
      errors.push_back("cannot remove endpoint record " + path + ": " + std::strerror(errno));
      continue;
    }
    removed.push_back(std::move(r));
  }
  // Links: of the records just removed, and of older sandboxes whose record a newer one replaced.
  for (const auto& f : fs::directory_iterator(NetworkDir() + "/" + kLinkFolder, ec)) {
    const std::string name = f.path().filename().string();
    const size_t colon = name.find(':');
    if (colon == std::string::npos) continue;
    cni::Attachment a{name.substr(0, colon), name.substr(colon + 1)};
    if (std::find(valid.begin(), valid.end(), a) != valid.end()) continue;
    if (::unlink(f.path().c_str()) != 0 && errno != ENOENT) {
      errors.push_back("cannot remove endpoint record link " + f.path().string() + ": " + std::strerror(errno));
    }
  }
  return removed;
}

}  // namespace netiface::veth_workload
