// A test-only hook that makes an ADD fail, or kills its process, at a named step, so that a test can
// prove what DEL, GC or a restart leaves behind after each. It exists only in a build configured with
// -DNETIFACE_FAULT_INJECTION=ON (the test command's sanitizer tree); everywhere else Point() is an empty
// inline function and no environment variable is read.
//
// Every step that changes the node is one cni::UndoStack::Push (undo.h), and the end of a successful
// ADD is its Dismiss: both call Point(), so the points of a process are numbered 0, 1, ... in the order
// the ADD reaches them. Point n is reached after the steps before it ran and before step n runs.
//   NETIFACE_FAULT="<program>:fail:<n>"   point n of <program> throws (the step fails, rollback runs)
//   NETIFACE_FAULT="<program>:kill:<n>"   point n of <program> raises SIGKILL (no rollback at all)
//   NETIFACE_FAULT_TRACE=<file>           every point appends "<program> <n> <what>\n" to <file>
// <program> is the executable's file name, so a fault aimed at host-local fires in the host-local a
// main plugin delegates to, not in the main plugin.
#pragma once

#include <string_view>

namespace netiface::cni::fault {

// While one lives, the points are those of `program` (its own numbering from 0, its own target): a
// plugin run in process (in_process.h) counts as the program it would have been exec'd as.
class ScopedProgram {
 public:
#ifdef NETIFACE_FAULT_INJECTION
  explicit ScopedProgram(std::string_view program);
  ~ScopedProgram();
#else
  explicit ScopedProgram(std::string_view /*program*/) {}
#endif
  ScopedProgram(const ScopedProgram&) = delete;
  ScopedProgram& operator=(const ScopedProgram&) = delete;

 private:
  [[maybe_unused]] void* saved_ = nullptr;
};

#ifdef NETIFACE_FAULT_INJECTION
void Point(std::string_view what);
#else
inline void Point(std::string_view /*what*/) {}
#endif

}  // namespace netiface::cni::fault
