// Logging: spdlog behind a small interface (only log.cc includes spdlog). Never writes to stdout.
// Default: warnings and errors to stderr. Configure() reads from a plugin config "logLevel"
// (debug|info|warning|error|none), "logFile" (a path; "none": no file), "logFileMaxSize" (MiB before the
// file is rotated, 10) and "logFileMaxCount" (rotated files kept, 5); NETIFACE_LOG_LEVEL and
// NETIFACE_LOG_FILE in the environment override the two keys (a debugging session, the CLI's
// --log-level). With a file, every enabled level goes there (log_file.h) and stderr keeps warnings and
// errors. Write is thread-safe; Configure, SetLevel and SetContext are meant for start-up, before other
// threads log.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <utility>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace netiface::log {

enum class Level { kDebug = 0, kInfo = 1, kWarn = 2, kError = 3, kOff = 4 };

inline constexpr const char* kLevelEnv = "NETIFACE_LOG_LEVEL";
inline constexpr const char* kFileEnv = "NETIFACE_LOG_FILE";

// `default_file`: the file when neither the config nor the environment names one ("" = none).
void Configure(const nlohmann::json& conf, std::string_view default_file = "");
// The whole logging state (level, file, context), set aside while an in-process delegate
// (in_process.h) configures its own: SaveState() leaves the default state in its place, RestoreState()
// puts it back.
struct SavedState;
std::shared_ptr<SavedState> SaveState();
void RestoreState(const std::shared_ptr<SavedState>& saved);

// Put before every message from now on ("bridge ADD container=... ifname=eth0 network=mynet").
void SetContext(std::string context);
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
