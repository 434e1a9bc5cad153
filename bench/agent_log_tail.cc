#include "agent_log_tail.h"

#include <poll.h>
#include <sys/inotify.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <iterator>
#include <stdexcept>
#include <thread>

namespace netiface::bench::agent {

using std::chrono::milliseconds;

FileWatch::FileWatch(const std::string& dir, std::string name) : name_(std::move(name)) {
  fd_ = ::inotify_init1(IN_CLOEXEC | IN_NONBLOCK);
  if (fd_ < 0 || ::inotify_add_watch(fd_, dir.c_str(), IN_MOVED_TO | IN_CLOSE_WRITE) < 0) {
    int err = errno;
    if (fd_ >= 0) ::close(fd_);
    throw std::runtime_error("inotify on " + dir + ": " + std::strerror(err));
  }
}

FileWatch::~FileWatch() { ::close(fd_); }

std::optional<Clock::time_point> FileWatch::Poll(milliseconds slice) {
  if (seen_) return seen_;
  pollfd p{fd_, POLLIN, 0};
  if (::poll(&p, 1, static_cast<int>(std::max<milliseconds::rep>(0, slice.count()))) <= 0) return std::nullopt;
  Clock::time_point at = Clock::now();
  alignas(inotify_event) char buf[8192];
  ssize_t k = ::read(fd_, buf, sizeof buf);
  for (ssize_t off = 0; off < k;) {
    const auto* ev = reinterpret_cast<const inotify_event*>(buf + off);
    if (ev->len > 0 && name_ == ev->name && !seen_) seen_ = at;
    off += static_cast<ssize_t>(sizeof(inotify_event) + ev->len);
  }
  return seen_;
}

void ReconcileTail::SkipToEnd() {
  Read();
  lines_.clear();
}

std::optional<ReconcileTail::Line> ReconcileTail::Next(milliseconds timeout) {
  Clock::time_point deadline = Clock::now() + timeout;
  for (;;) {
    Read();
    if (!lines_.empty()) {
      Line r = lines_.front();
      lines_.erase(lines_.begin());
      return r;
    }
    if (Clock::now() >= deadline) return std::nullopt;
    std::this_thread::sleep_for(milliseconds(2));
  }
}

void ReconcileTail::Read() {
  std::ifstream f(path_, std::ios::binary);
  f.seekg(static_cast<std::streamoff>(offset_));
  std::string chunk((std::istreambuf_iterator<char>(f)), {});
  Clock::time_point at = Clock::now();
  offset_ += chunk.size();
  partial_ += chunk;
  for (size_t nl; (nl = partial_.find('\n')) != std::string::npos;) {
    if (auto r = ParseReconcileLine(std::string_view(partial_).substr(0, nl))) lines_.push_back(Line{*r, at});
    partial_.erase(0, nl + 1);
  }
}

}  // namespace netiface::bench::agent
