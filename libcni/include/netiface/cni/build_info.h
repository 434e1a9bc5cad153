// What every executable of the suite reports as its version: the project version (PROJECT_VERSION in
// the top CMakeLists.txt) and the source revision it was built from (git describe, or what a packager
// set with -DNETIFACE_REVISION).
#pragma once

#include <string>
#include <string_view>

namespace netiface::cni {

std::string_view ProjectVersion();  // "0.1.0"
std::string_view SourceRevision();  // "428b296a1c2e", "428b296a1c2e-dirty", or "unknown"
// The plugins' log file when their config names none (-DNETIFACE_LOG_FILE, /var/log/netiface/cni.log).
std::string_view DefaultLogFile();
// "<program> 0.1.0 (428b296a1c2e)": the --version line of every executable.
std::string VersionLine(std::string_view program);

}  // namespace netiface::cni
