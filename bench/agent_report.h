// The numbers agent-bench reports, as values: order statistics of a sample, and the agent's reconcile
// log line. Pure.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace netiface::bench::agent {

// Median, 10th and 90th percentile (linear interpolation between order statistics), min and max of a
// sample; all 0 with n = 0.
struct Spread {
  size_t n = 0;
  double median = 0, p10 = 0, p90 = 0, min = 0, max = 0;
};
Spread Summarize(std::vector<double> xs);

// "| label | median | p10 | p90 | min | max | N |" with `digits` decimals; "| label | – ... | 0 |" when empty.
std::string SpreadRow(const std::string& label, const Spread& s, int digits = 1);
inline constexpr std::string_view kSpreadHeader =
    "| | median | p10 | p90 | min | max | N |\n|---|---:|---:|---:|---:|---:|---:|\n";

// The agent's debug line "reconcile: <N> peer(s) in <X> ms" anywhere in `line`; nullopt otherwise.
struct ReconcileLine {
  int peers = 0;
  double ms = 0;
};
std::optional<ReconcileLine> ParseReconcileLine(std::string_view line);

}  // namespace netiface::bench::agent
