#include "netiface/cni/build_info.h"

#include "netiface_build_info.h"

namespace netiface::cni {

std::string_view ProjectVersion() { return NETIFACE_BUILD_VERSION; }
std::string_view SourceRevision() { return NETIFACE_BUILD_REVISION; }
std::string_view DefaultLogFile() { return NETIFACE_BUILD_LOG_FILE; }

std::string VersionLine(std::string_view program) {
  std::string line(program);
  line += ' ';
  line += ProjectVersion();
  line += " (";
  line += SourceRevision();
  line += ')';
  return line;
}

}  // namespace netiface::cni
