// The plugins' log file (log.h writes through it): kept when a runtime drops a plugin's stderr, private
// and bounded. The folder is created 0700 and the file 0600; neither is followed when it is a symlink.
// Each line goes out in one O_APPEND write, so processes logging at once never interleave within a line.
// When the file reaches max_bytes it is renamed to <file>.1 (and .1 to .2, ..., the oldest past max_files
// dropped) under an flock, by whichever process sees it full first; the others notice the file was
// rotated and open the new one. Nothing here throws: a full disk or an unwritable folder loses lines,
// never a CNI call.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace netiface::log {

struct LogFileOptions {
  std::string path;
  std::uint64_t max_bytes = 10u << 20;
  int max_files = 5;  // rotated files kept besides the current one
};

class LogFile {
 public:
  explicit LogFile(LogFileOptions options);  // opens at the first Write
  ~LogFile();
  LogFile(const LogFile&) = delete;
  LogFile& operator=(const LogFile&) = delete;

  // Appends `line` (which ends in a newline); false when it could not (error() says why).
  bool Write(std::string_view line);
  const std::string& error() const { return error_; }

 private:
  bool Open();
  void RotateIfFull();
  void Close();

  LogFileOptions options_;
  std::string dir_, base_;
  int dir_fd_ = -1;
  int fd_ = -1;
  std::string error_;
};

}  // namespace netiface::log
