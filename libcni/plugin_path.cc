// FindPlugin (exec.h): a plugin type looked up in CNI_PATH.
#include <sys/stat.h>
#include <unistd.h>

#include "netiface/cni/error.h"
#include "netiface/cni/exec.h"

namespace netiface::cni {

std::string FindPlugin(std::string_view type, std::string_view cni_path) {
  std::string name(type);
  if (name.empty() || name == "." || name == ".." || name.find('/') != std::string::npos ||
      name.find('\0') != std::string::npos) {
    throw Error(kInvalidConfig, "invalid plugin type \"" + name + "\"", "a plugin type is a plain file name");
  }
  std::string dirs;
  std::string_view rest = cni_path;
  while (true) {
    size_t colon = rest.find(':');
    std::string dir(rest.substr(0, colon));
    if (!dir.empty()) {
      dirs += (dirs.empty() ? "" : " ") + dir;
      std::string candidate = dir + "/" + name;
      struct stat st {};
      if (::stat(candidate.c_str(), &st) == 0 && S_ISREG(st.st_mode) && ::access(candidate.c_str(), X_OK) == 0) {
        return candidate;
      }
    }
    if (colon == std::string_view::npos) break;
    rest.remove_prefix(colon + 1);
  }
  throw Error(kInvalidConfig, "failed to find plugin \"" + name + "\" in path [" + dirs + "]");
}

}  // namespace netiface::cni
