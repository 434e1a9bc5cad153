// The fault-injection hook (fault.h); compiled to nothing unless NETIFACE_FAULT_INJECTION is defined.
#include "netiface/cni/fault.h"

#ifdef NETIFACE_FAULT_INJECTION

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <string>

#include "netiface/cni/error.h"
#include "netiface/cni/log.h"

namespace netiface::cni::fault {
namespace {

struct Target {
  bool armed = false;
  bool kill = false;
  long index = -1;
};

// "<program>:<fail|kill>:<n>" aimed at this program, or nothing.
Target ParseTarget(std::string_view program) {
  const char* v = std::getenv("NETIFACE_FAULT");
  if (v == nullptr) return {};
  std::string_view s = v;
  auto a = s.find(':');
  auto b = a == std::string_view::npos ? a : s.find(':', a + 1);
  if (b == std::string_view::npos || s.substr(0, a) != program) return {};
  std::string_view mode = s.substr(a + 1, b - a - 1);
  if (mode != "fail" && mode != "kill") return {};
  std::string n(s.substr(b + 1));
  char* end = nullptr;
  errno = 0;
  long index = std::strtol(n.c_str(), &end, 10);
  if (n.empty() || *end != '\0' || errno != 0 || index < 0) return {};
  return {true, mode == "kill", index};
}

void Trace(std::string_view program, long index, std::string_view what) {
  const char* path = std::getenv("NETIFACE_FAULT_TRACE");
  if (path == nullptr || *path == '\0') return;
  int fd = ::open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (fd < 0) return;
  std::string line = std::string(program) + " " + std::to_string(index) + " " + std::string(what) + "\n";
  // One write with O_APPEND: lines of the plugin and of its delegate never interleave.
  [[maybe_unused]] ssize_t n = ::write(fd, line.data(), line.size());
  ::close(fd);
}

// The points of one program: its name, its target, its next number.
struct Counter {
  std::string program;
  Target target;
  long next = 0;
};

Counter*& Current() {
  static Counter* current = nullptr;
  return current;
}

Counter& CurrentCounter() {
  if (Current() == nullptr) {
    static Counter process{program_invocation_short_name, ParseTarget(program_invocation_short_name), 0};
    Current() = &process;
  }
  return *Current();
}

}  // namespace

ScopedProgram::ScopedProgram(std::string_view program) {
  saved_ = &CurrentCounter();
  Current() = new Counter{std::string(program), ParseTarget(program), 0};
}

ScopedProgram::~ScopedProgram() {
  delete Current();
  Current() = static_cast<Counter*>(saved_);
}

void Point(std::string_view what) {
  Counter& c = CurrentCounter();
  const std::string_view program = c.program;
  const Target& target = c.target;
  const long index = c.next++;
  Trace(program, index, what);
  if (!target.armed || target.index != index) return;
  if (target.kill) {
    ::raise(SIGKILL);
  }
  log::Error("injected fault at point {} of {} ({})", index, program, what);
  throw Error(kInternal, "injected fault at point " + std::to_string(index) + " of " + std::string(program),
              std::string(what));
}

}  // namespace netiface::cni::fault

#endif  // NETIFACE_FAULT_INJECTION
