#include "agent_report.h"

#include <algorithm>
#include <charconv>
#include <cstdlib>

#include <fmt/format.h>

namespace netiface::bench::agent {
namespace {

double Quantile(const std::vector<double>& sorted, double q) {
  double pos = q * static_cast<double>(sorted.size() - 1);
  size_t lo = static_cast<size_t>(pos);
  size_t hi = std::min(lo + 1, sorted.size() - 1);
  double frac = pos - static_cast<double>(lo);
  return sorted[lo] + (sorted[hi] - sorted[lo]) * frac;
}

}  // namespace

Spread Summarize(std::vector<double> xs) {
  Spread s;
  s.n = xs.size();
  if (xs.empty()) return s;
  std::sort(xs.begin(), xs.end());
  s.median = Quantile(xs, 0.5);
  s.p10 = Quantile(xs, 0.1);
  s.p90 = Quantile(xs, 0.9);
  s.min = xs.front();
  s.max = xs.back();
  return s;
}

std::string SpreadRow(const std::string& label, const Spread& s, int digits) {
  if (s.n == 0) return fmt::format("| {} | – | – | – | – | – | 0 |\n", label);
  return fmt::format("| {} | {:.{}f} | {:.{}f} | {:.{}f} | {:.{}f} | {:.{}f} | {} |\n", label, s.median, digits, s.p10,
                     digits, s.p90, digits, s.min, digits, s.max, digits, s.n);
}

std::optional<ReconcileLine> ParseReconcileLine(std::string_view line) {
  constexpr std::string_view kHead = "reconcile: ", kMid = " peer(s) in ", kTail = " ms";
  size_t at = line.find(kHead);
  if (at == std::string_view::npos) return std::nullopt;
  std::string_view rest = line.substr(at + kHead.size());
  ReconcileLine r;
  auto [p, ec] = std::from_chars(rest.data(), rest.data() + rest.size(), r.peers);
  if (ec != std::errc() || r.peers < 0) return std::nullopt;
  rest.remove_prefix(static_cast<size_t>(p - rest.data()));
  if (!rest.starts_with(kMid)) return std::nullopt;
  rest.remove_prefix(kMid.size());
  size_t end = rest.find(kTail);
  if (end == std::string_view::npos || end == 0) return std::nullopt;
  std::string number(rest.substr(0, end));
  char* stop = nullptr;
  r.ms = std::strtod(number.c_str(), &stop);
  if (stop != number.c_str() + number.size() || !(r.ms >= 0)) return std::nullopt;
  return r;
}

}  // namespace netiface::bench::agent
