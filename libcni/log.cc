// The only file that includes spdlog. One process-wide logger with sinks we create (spdlog's default
// logger writes to stdout, which belongs to the result).
#include "netiface/cni/log.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <string>

#include <spdlog/details/null_mutex.h>
#include <spdlog/logger.h>
#include <spdlog/sinks/base_sink.h>
#include <spdlog/sinks/stdout_sinks.h>

#include "netiface/cni/log_file.h"

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

// Lines to a LogFile; the first line it cannot write is reported once on stderr.
class PrivateFileSink : public spdlog::sinks::base_sink<spdlog::details::null_mutex> {
 public:
  explicit PrivateFileSink(LogFileOptions options) : file_(std::move(options)) {}

 protected:
  void sink_it_(const spdlog::details::log_msg& msg) override {
    spdlog::memory_buf_t buf;
    formatter_->format(msg, buf);
    if (file_.Write(std::string_view(buf.data(), buf.size())) || reported_) return;
    reported_ = true;
    std::string note = "netiface: " + file_.error() + " (logging to stderr only)\n";
    ssize_t ignored = ::write(STDERR_FILENO, note.data(), note.size());
    (void)ignored;
  }
  void flush_() override {}

 private:
  LogFile file_;
  bool reported_ = false;
};

struct State {
  Level level = Level::kWarn;
  std::string context;  // what every line names: program, verb, container, ifname, network
  std::shared_ptr<PrivateFileSink> file_sink;
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

std::string StringKey(const nlohmann::json& conf, const char* key) {
  if (!conf.is_object()) return "";
  auto it = conf.find(key);
  return it != conf.end() && it->is_string() ? it->get<std::string>() : "";
}

// A positive integer key, or `fallback`.
std::uint64_t CountKey(const nlohmann::json& conf, const char* key, std::uint64_t fallback) {
  if (!conf.is_object()) return fallback;
  auto it = conf.find(key);
  if (it == conf.end() || !it->is_number_integer() || it->get<std::int64_t>() < 0) return fallback;
  return it->get<std::uint64_t>();
}

}  // namespace

void Configure(const nlohmann::json& conf, std::string_view default_file) {
  State& s = GetState();
  std::string warning;
  s.level = Level::kWarn;
  s.file_sink.reset();
  s.logger.reset();
  std::string level = StringKey(conf, "logLevel"), file = StringKey(conf, "logFile");
  if (const char* v = std::getenv(kLevelEnv); v && *v) level = v;
  if (const char* v = std::getenv(kFileEnv); v && *v) file = v;
  if (!level.empty()) {
    if (auto l = ParseLevel(level)) {
      s.level = *l;
    } else {
      warning = "unknown logLevel \"" + level + "\", using warning";
    }
  }
  if (file.empty()) file = default_file;
  if (!file.empty() && file != "none") {
    LogFileOptions options;
    options.path = file;
    options.max_bytes = CountKey(conf, "logFileMaxSize", 10) << 20;
    options.max_files = static_cast<int>(std::min<std::uint64_t>(CountKey(conf, "logFileMaxCount", 5), 100));
    if (options.max_bytes == 0) options.max_bytes = 1u << 20;
    s.file_sink = std::make_shared<PrivateFileSink>(std::move(options));
  }
  if (!warning.empty()) Write(Level::kWarn, warning);
}

struct SavedState {
  State state;
};

std::shared_ptr<SavedState> SaveState() {
  auto saved = std::make_shared<SavedState>();
  saved->state = std::move(GetState());
  GetState() = State();
  return saved;
}

void RestoreState(const std::shared_ptr<SavedState>& saved) {
  if (saved) GetState() = std::move(saved->state);
}

void SetContext(std::string context) {
  State& s = GetState();
  s.context = std::move(context);
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
    State& s = GetState();
    if (s.context.empty()) {
      s.Logger().log(ToSpd(l), "{}", msg);
    } else {
      s.Logger().log(ToSpd(l), "{}: {}", s.context, msg);
    }
  } catch (...) {
    // Logging never fails the caller.
  }
}

}  // namespace netiface::log
