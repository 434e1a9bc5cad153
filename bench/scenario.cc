#include "scenario.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <numeric>
#include <thread>

#include "spawn.h"

namespace netiface::bench {

namespace fs = std::filesystem;
using nlohmann::json;

Stats Summarize(std::vector<double> ms) {
  Stats s;
  s.n = ms.size();
  if (ms.empty()) return s;
  std::sort(ms.begin(), ms.end());
  s.median = ms.size() % 2 ? ms[ms.size() / 2] : (ms[ms.size() / 2 - 1] + ms[ms.size() / 2]) / 2;
  s.p95 = ms[std::min(ms.size() - 1, static_cast<size_t>(ms.size() * 0.95))];
  double total = std::accumulate(ms.begin(), ms.end(), 0.0);
  s.ops_per_s = total > 0 ? 1000.0 * ms.size() / total : 0;
  return s;
}

NetnsPool::NetnsPool(const std::string& prefix, int count) : prefix_(prefix), count_(count) {
  std::string cmd;
  for (int i = 0; i < count; ++i) cmd += "ip netns add " + Path(i).substr(11) + " 2>/dev/null; ";
  if (std::system(cmd.c_str()) != 0) {
  }
}

NetnsPool::~NetnsPool() {
  std::string cmd;
  for (int i = 0; i < count_; ++i) cmd += "ip netns del " + Path(i).substr(11) + " 2>/dev/null; ";
  if (std::system(cmd.c_str()) != 0) {
  }
}

std::string NetnsPool::Path(int i) const { return "/run/netns/" + prefix_ + "-" + std::to_string(i); }

static void WipeDataDir(const std::string& dir) {
  if (dir.empty()) return;
  std::error_code ec;
  fs::remove_all(dir, ec);
}

static std::string WithPrevResult(const json& conf, const std::string& result) {
  json c = conf;
  try {
    c["prevResult"] = json::parse(result);
  } catch (...) {
  }
  return c.dump();
}

SeqReport RunSequential(const Setup& s, int n, int n_check, bool with_netns) {
  WipeDataDir(s.data_dir);
  std::string tag = "nfb" + std::to_string(getpid() % 10000) + s.label.substr(0, 3);
  NetnsPool pool(tag, with_netns ? n : 0);
  SeqReport r;
  std::vector<double> add, del, check;
  std::vector<std::string> results(n);
  const std::string conf = s.conf.dump();
  auto netns = [&](int i) { return with_netns ? pool.Path(i) : std::string("/run/netns/none"); };
  for (int i = 0; i < n; ++i) {
    auto o = Spawn(CniCall(s.plugin, "ADD", "bench-" + std::to_string(i), netns(i), s.cni_path, conf));
    if (o.exit_code != 0) ++r.fails;
    add.push_back(o.ms);
    r.rss_add_kb = std::max(r.rss_add_kb, o.max_rss_kb);
    results[i] = o.out;
  }
  for (int i = 0; i < std::min(n, n_check); ++i) {
    auto o = Spawn(CniCall(s.plugin, "CHECK", "bench-" + std::to_string(i), netns(i), s.cni_path,
                           WithPrevResult(s.conf, results[i])));
    if (o.exit_code != 0) ++r.fails;
    check.push_back(o.ms);
  }
  for (int i = 0; i < n; ++i) {
    auto o = Spawn(CniCall(s.plugin, "DEL", "bench-" + std::to_string(i), netns(i), s.cni_path,
                           WithPrevResult(s.conf, results[i])));
    if (o.exit_code != 0) ++r.fails;
    del.push_back(o.ms);
    r.rss_del_kb = std::max(r.rss_del_kb, o.max_rss_kb);
  }
  r.add = Summarize(add);
  r.del = Summarize(del);
  r.check = Summarize(check);
  WipeDataDir(s.data_dir);
  return r;
}

static double NowMs() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

ParReport RunParallel(const Setup& s, int workers, int cycles) {
  WipeDataDir(s.data_dir);
  std::string tag = "nfp" + std::to_string(getpid() % 10000) + s.label.substr(0, 3);
  NetnsPool pool(tag, workers);
  std::mutex mu;
  std::vector<double> add, del;
  int fails = 0;
  const std::string conf = s.conf.dump();
  double start = NowMs();
  std::vector<std::thread> threads;
  for (int w = 0; w < workers; ++w) {
    threads.emplace_back([&, w] {
      for (int c = 0; c < cycles; ++c) {
        std::string id = "par-" + std::to_string(w) + "-" + std::to_string(c);
        auto a = Spawn(CniCall(s.plugin, "ADD", id, pool.Path(w), s.cni_path, conf));
        auto d = Spawn(CniCall(s.plugin, "DEL", id, pool.Path(w), s.cni_path, WithPrevResult(s.conf, a.out)));
        std::lock_guard<std::mutex> l(mu);
        add.push_back(a.ms);
        del.push_back(d.ms);
        fails += (a.exit_code != 0) + (d.exit_code != 0);
      }
    });
  }
  for (auto& t : threads) t.join();
  double wall = NowMs() - start;
  ParReport r;
  r.add = Summarize(add);
  r.del = Summarize(del);
  r.ops_per_s = 1000.0 * (add.size() + del.size()) / wall;
  r.fails = fails;
  WipeDataDir(s.data_dir);
  return r;
}

Stats RunVersion(const std::string& plugin, int n) {
  std::vector<double> ms;
  for (int i = 0; i < n; ++i) {
    auto o = Spawn(CniCall(plugin, "VERSION", "", "dummy", "dummy", "{\"cniVersion\":\"1.0.0\"}"));
    ms.push_back(o.ms);
  }
  return Summarize(ms);
}

ScaleReport RunHostLocalScale(const Setup& s, int existing, int n) {
  WipeDataDir(s.data_dir);
  // The reference's format: <dataDir>/<network>/<ip> = "<id>\r\n<ifname>", and last_reserved_ip.0.
  const std::string dir = s.data_dir + "/" + s.conf["name"].get<std::string>();
  fs::create_directories(dir);
  std::string last;
  for (int i = 0; i < existing; ++i) {
    int host = i + 2;  // 10.x.0.2 upwards in a /16
    std::string ip = "10.247." + std::to_string(host / 256) + "." + std::to_string(host % 256);
    std::ofstream(dir + "/" + ip) << "prefill-" << i << "\r\neth0";
    last = ip;
  }
  if (!last.empty()) std::ofstream(dir + "/last_reserved_ip.0") << last;
  ScaleReport r;
  std::vector<double> add, del, miss;
  const std::string conf = s.conf.dump();
  for (int i = 0; i < n; ++i) {
    auto o = Spawn(CniCall(s.plugin, "ADD", "scale-" + std::to_string(i), "/run/netns/none", s.cni_path, conf));
    r.fails += o.exit_code != 0;
    add.push_back(o.ms);
  }
  for (int i = 0; i < n; ++i) {
    auto o = Spawn(CniCall(s.plugin, "DEL", "scale-" + std::to_string(i), "/run/netns/none", s.cni_path, conf));
    r.fails += o.exit_code != 0;
    del.push_back(o.ms);
  }
  for (int i = 0; i < n; ++i) {
    auto o = Spawn(CniCall(s.plugin, "DEL", "unknown-" + std::to_string(i), "/run/netns/none", s.cni_path, conf));
    r.fails += o.exit_code != 0;
    miss.push_back(o.ms);
  }
  r.add = Summarize(add);
  r.del = Summarize(del);
  r.del_unknown = Summarize(miss);
  WipeDataDir(s.data_dir);
  return r;
}

}  // namespace netiface::bench
