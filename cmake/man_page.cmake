# Run at build time (cmake -P): a man page's markdown (go-md2man's input). Two kinds:
#   -DIN=page.md -DOUT=... -DVERSION=...                    a page written as such (@VERSION@ replaced)
#   -DIN=README.md -DPLUGIN=bridge -DOUT=... -DVERSION=...  a plugin's page: its README up to its "## Code"
#        section (the config keys, verbs, files: what an operator needs), so the page cannot drift from it
cmake_minimum_required(VERSION 3.25)  # new policies: "@VERSION@" below is text, not a variable
if(NOT DEFINED PLUGIN)
  file(READ "${IN}" text)
  string(REPLACE "@VERSION@" "${VERSION}" text "${text}")
else()
  file(READ "${IN}" readme)
  # The title line goes (the page has its own NAME), the sections for developers too.
  string(REGEX REPLACE "^# [^\n]*\n" "" readme "${readme}")
  string(FIND "${readme}" "\n## Code" cut)
  if(cut GREATER -1)
    string(SUBSTRING "${readme}" 0 ${cut} readme)
  endif()
  string(REGEX REPLACE "\n## ([^\n]*)" "\n# \\1" readme "${readme}")
  string(REGEX REPLACE "\n### ([^\n]*)" "\n## \\1" readme "${readme}")
  string(TOUPPER "NETIFACE-${PLUGIN}" title)
  set(text "% ${title} 8 \"netiface ${VERSION}\" \"netiface\"\n\n# NAME\nnetiface-${PLUGIN} - the ${PLUGIN} CNI plugin of netiface\n\n")
  string(APPEND text "# SYNOPSIS\n**CNI_COMMAND**=ADD|DEL|CHECK|STATUS|GC|VERSION **CNI_CONTAINERID**=*ID* **CNI_NETNS**=*PATH* **CNI_IFNAME**=*NAME* **CNI_PATH**=*DIRS* *PLUGIN_DIR*/${PLUGIN} < *config.json*\n\n*PLUGIN_DIR*/${PLUGIN} **--version**\n\n")
  string(APPEND text "# DESCRIPTION\n${readme}\n\n# LOGGING\nThe keys logFile, logLevel, logFileMaxSize and logFileMaxCount, and the log file every plugin keeps: **netiface-cni**(8).\n\n# SEE ALSO\n**netiface-cni**(8), **netiface**(1)\n")
endif()
file(WRITE "${OUT}" "${text}")
