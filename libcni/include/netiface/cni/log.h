// Logging: spdlog behind a small interface (only log.cc includes spdlog). Never writes to stdout.
// Default: warnings and errors to stderr. Configure() reads "logFile" and "logLevel"
// (debug|info|warning|error|none) from a plugin config. Write is thread-safe; Configure and SetLevel are
// meant for start-up, before other threads log.
#pragma once

#include <string_view>
#include <utility>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace netiface::log {

enum class Level { kDebug = 0, kInfo = 1, kWarn = 2, kError = 3, kOff = 4 };

void Configure(const nlohmann::json& conf);
void SetLevel(Level l);
bool Enabled(Level l);
void Write(Level l, std::string_view msg);

template <typename... A>
void Debug(fmt::format_string<A...> f, A&&... a) {
  if (Enabled(Level::kDebug)) Write(Level::kDebug, fmt::format(f, std::forward<A>(a)...));
}
template <typename... A>
void Info(fmt::format_string<A...> f, A&&... a) {
  if (Enabled(Level::kInfo)) Write(Level::kInfo, fmt::format(f, std::forward<A>(a)...));
}
template <typename... A>
void Warn(fmt::format_string<A...> f, A&&... a) {
  if (Enabled(Level::kWarn)) Write(Level::kWarn, fmt::format(f, std::forward<A>(a)...));
}
template <typename... A>
void Error(fmt::format_string<A...> f, A&&... a) {
  if (Enabled(Level::kError)) Write(Level::kError, fmt::format(f, std::forward<A>(a)...));
}

}  // namespace netiface::log
