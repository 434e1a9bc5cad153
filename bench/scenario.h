// Benchmark scenarios: each runs one plugin setup on the same work and summarizes the timings.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace netiface::bench {

struct Stats {
  size_t n = 0;
  double median = 0, p95 = 0, ops_per_s = 0;
};
Stats Summarize(std::vector<double> ms);

// A plugin as the runtime would call it.
struct Setup {
  std::string label;
  std::string plugin;    // path of the executable
  std::string cni_path;  // where its delegates are found
  nlohmann::json conf;   // network config (name, cniVersion, type, ...)
  std::string data_dir;  // host-local dataDir to wipe between runs ("" = none)
};

struct SeqReport {
  Stats add, del, check;
  long rss_add_kb = 0, rss_del_kb = 0;
  int fails = 0;
};

// Throw-away network namespaces named <prefix>-<i>, created on construction and deleted on destruction.
class NetnsPool {
 public:
  NetnsPool(const std::string& prefix, int count);
  ~NetnsPool();
  std::string Path(int i) const;

 private:
  std::string prefix_;
  int count_;
};

// N ADDs, then CHECK of the first n_check (prevResult = their ADD result), then N DELs.
SeqReport RunSequential(const Setup& s, int n, int n_check, bool with_netns);
// `workers` threads, each doing `cycles` ADD+DEL pairs on its own containers.
struct ParReport {
  Stats add, del;
  double ops_per_s = 0;  // (ADD+DEL) completed per second of wall time
  int fails = 0;
};
ParReport RunParallel(const Setup& s, int workers, int cycles);
// VERSION calls: the cost of process start plus JSON.
Stats RunVersion(const std::string& plugin, int n);
// host-local with `existing` reservations written in the reference's on-disk format, then `n` ADDs,
// `n` DELs and `n` DELs of unknown IDs.
struct ScaleReport {
  Stats add, del, del_unknown;
  int fails = 0;
};
ScaleReport RunHostLocalScale(const Setup& s, int existing, int n);

}  // namespace netiface::bench
