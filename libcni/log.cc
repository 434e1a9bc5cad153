// The only file that includes spdlog. One process-wide logger with sinks we create (spdlog's default
// logger writes to stdout, which belongs to the result).
#include "netiface/cni/log.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <memory>
#include <mutex>
#include <string>

#include <spdlog/logger.h>
#include <spdlog/sinks/basic_file_sink.h>
#include <spdlog/sinks/stdout_sinks.h>

#include "netiface/cni/error.h"
#include "netiface/cni/file.h"

namespace netiface::log {
namespace {

constexpr const char* kPattern = "%Y-%m-%dT%H:%M:%S.%f%z [%P] %l: %v";

spdlog::level::level_enum ToSpd(Level l) {
  switch (l) {
    case Level::kDebug:
      return spdlog::level::debug;
    case Level::kInfo:
      return spdlog::level::info;
    case Level::kWarn:
      return spdlog::level::warn;
    case Level::kError:
      return spdlog::level::err;
    case Level::kOff:
      break;
  }
  return spdlog::level::off;
}

struct State {
  Level level = Level::kWarn;
  std::shared_ptr<spdlog::sinks::basic_file_sink_st> file_sink;
  std::unique_ptr<spdlog::logger> logger;  // built at the first message: most calls log none

  spdlog::logger& Logger() {
    if (!logger) Build();
    return *logger;
  }

  // Without a file every enabled level goes to stderr; with one, stderr keeps warnings and errors.
  void Build() {
    auto stderr_sink = std::make_shared<spdlog::sinks::stderr_sink_st>();
    std::vector<spdlog::sink_ptr> sinks{stderr_sink};
    stderr_sink->set_level(file_sink ? ToSpd(std::max(level, Level::kWarn)) : ToSpd(level));
    if (file_sink) {
      file_sink->set_level(ToSpd(level));
      sinks.push_back(file_sink);
    }
    logger = std::make_unique<spdlog::logger>("netiface", sinks.begin(), sinks.end());
    logger->set_pattern(kPattern);
    logger->set_level(ToSpd(level));
    logger->flush_on(spdlog::level::trace);
  }
};

State& GetState() {
  static State* state = new State();  // never destroyed: usable from static destructors
  return *state;
}

std::optional<Level> ParseLevel(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  if (s == "debug") return Level::kDebug;
  if (s == "info") return Level::kInfo;
  if (s == "warning" || s == "warn") return Level::kWarn;
  if (s == "error" || s == "panic" || s == "fatal") return Level::kError;
  if (s == "none" || s == "off") return Level::kOff;
  return std::nullopt;
}

// Opens (creating 0600, parents too) the log file for appending.
std::shared_ptr<spdlog::sinks::basic_file_sink_st> OpenFileSink(const std::string& path) {
  size_t slash = path.rfind('/');
  if (slash != std::string::npos && slash > 0) cni::MakeDirs(path.substr(0, slash), 0755);
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
  if (fd < 0) throw cni::Error(cni::kIoFailure, "cannot open log file " + path);
  ::close(fd);
  return std::make_shared<spdlog::sinks::basic_file_sink_st>(path, /*truncate=*/false);
}

}  // namespace

void Configure(const nlohmann::json& conf) {
  State& s = GetState();
  std::string warning;
  s.level = Level::kWarn;
  s.file_sink.reset();
  s.logger.reset();
  if (!conf.is_object()) return;
  if (auto it = conf.find("logLevel"); it != conf.end() && it->is_string()) {
    if (auto l = ParseLevel(it->get<std::string>())) {
      s.level = *l;
    } else {
      warning = "unknown logLevel \"" + it->get<std::string>() + "\", using warning";
    }
  }
  if (auto it = conf.find("logFile"); it != conf.end() && it->is_string() && !it->get<std::string>().empty()) {
    try {
      s.file_sink = OpenFileSink(it->get<std::string>());
    } catch (const std::exception& e) {
      warning = std::string("logging to stderr: ") + e.what();
    }
  }
  if (!warning.empty()) Write(Level::kWarn, warning);
}

void SetLevel(Level l) {
  State& s = GetState();
  s.level = l;
  s.logger.reset();
}

bool Enabled(Level l) { return l != Level::kOff && l >= GetState().level; }

void Write(Level l, std::string_view msg) {
  if (!Enabled(l)) return;
  // The agent logs from more than one thread; the sinks are spdlog's single-threaded ones.
  static std::mutex* mu = new std::mutex();
  std::lock_guard<std::mutex> lock(*mu);
  try {
    GetState().Logger().log(ToSpd(l), "{}", msg);
  } catch (...) {
    // Logging never fails the caller.
  }
}

}  // namespace netiface::log
