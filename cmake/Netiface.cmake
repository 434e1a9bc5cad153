# Shared build settings and the two helpers every folder uses:
#   netiface_library(name SOURCES ... DEPS ...)   static library with include/ as its public headers
#   netiface_executable(name SOURCES ... DEPS ...) an executable in build/bin, installed to NETIFACE_CNI_BIN_DIR
#   netiface_test(name SOURCES ... DEPS ... [PRIVILEGED])  a GoogleTest binary registered with ctest;
#       PRIVILEGED tests need root and create their own network namespaces (label "privileged").

set(NETIFACE_WARNINGS -Wall -Wextra -Wno-missing-field-initializers)
if(NETIFACE_WERROR)
  list(APPEND NETIFACE_WARNINGS -Werror)
endif()
# Every function and object in a section of its own, and the linker drops the ones nothing reaches: the
# header-only libraries and the static archives leave a lot unreached in each image.
add_compile_options(-ffunction-sections -fdata-sections)
add_link_options(-Wl,--gc-sections)

# spdlog and fmt are used header-only: Debian ships them only as shared objects, and every
# shared object costs process start time (docs/architecture.md, "Linking and process start").
set(NETIFACE_DEFINES FMT_HEADER_ONLY SPDLOG_HEADER_ONLY SPDLOG_FMT_EXTERNAL)
if(NETIFACE_FAULT_INJECTION)
  list(APPEND NETIFACE_DEFINES NETIFACE_FAULT_INJECTION)
endif()

if(NETIFACE_FUZZ)
  if(NOT CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
    message(FATAL_ERROR "NETIFACE_FUZZ needs clang (CXX=clang++): libFuzzer is clang's")
  endif()
  set(NETIFACE_SANITIZE ON CACHE BOOL "" FORCE)
  add_compile_options(-fsanitize=fuzzer-no-link)
endif()
if(NETIFACE_SANITIZE)
  set(NETIFACE_STATIC_RUNTIME OFF CACHE BOOL "" FORCE)
  add_compile_options(-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined)
  add_link_options(-fsanitize=address,undefined)
  # Not position-independent: UBSan's data for each of its ~2 million checks (a source location and type
  # pointers per check) sits in .data, and in a PIE every pointer there is a relocation applied at each
  # process start (60 MB of .rela.dyn in the multi-call binary). Linked at a fixed address, they are
  # resolved by the linker and a plugin's start no longer writes all of .data: the privileged tests exec
  # these binaries thousands of times.
  add_link_options(-no-pie)
endif()

# libnl: the static archives when linking the runtime statically, the shared ones otherwise.
add_library(netiface_libnl INTERFACE)
if(NETIFACE_STATIC_RUNTIME)
  find_library(NL3_STATIC libnl-3.a REQUIRED)
  find_library(NLROUTE3_STATIC libnl-route-3.a REQUIRED)
  target_include_directories(netiface_libnl INTERFACE ${LIBNL_INCLUDE_DIRS})
  target_link_libraries(netiface_libnl INTERFACE ${NLROUTE3_STATIC} ${NL3_STATIC} Threads::Threads m)
  find_library(CRYPTO_STATIC libcrypto.a REQUIRED)
  add_library(netiface_crypto INTERFACE)
  target_link_libraries(netiface_crypto INTERFACE ${CRYPTO_STATIC} ${CMAKE_DL_LIBS} Threads::Threads)
  target_include_directories(netiface_crypto INTERFACE ${OPENSSL_INCLUDE_DIR})
else()
  target_link_libraries(netiface_libnl INTERFACE PkgConfig::LIBNL)
  add_library(netiface_crypto INTERFACE)
  target_link_libraries(netiface_crypto INTERFACE OpenSSL::Crypto)
endif()

# The version and source revision every executable reports (--version, the plugins' banner): one place,
# PROJECT_VERSION in the top CMakeLists.txt, and the git revision of the tree built, refreshed at every build.
set(NETIFACE_REVISION "" CACHE STRING "Source revision to report instead of git describe (packagers)")
set(NETIFACE_BUILD_INFO ${CMAKE_BINARY_DIR}/generated/netiface_build_info.h)
add_custom_target(netiface_build_info
  COMMAND ${CMAKE_COMMAND} -DSRC_DIR=${PROJECT_SOURCE_DIR} -DOUT=${NETIFACE_BUILD_INFO}
          -DVERSION=${PROJECT_VERSION} -DREVISION=${NETIFACE_REVISION} -DLOG_FILE=${NETIFACE_LOG_FILE}
          -P ${PROJECT_SOURCE_DIR}/cmake/build_info.cmake
  BYPRODUCTS ${NETIFACE_BUILD_INFO}
  COMMENT "" VERBATIM)

# Precompiled headers: the heavy third-party headers (nlohmann/json, fmt, and GoogleTest for the tests)
# are parsed once per build tree instead of once per file. Two headers, one for product code and one for
# tests, each compiled once and reused by every target of its kind (REUSE_FROM): they need the same flags,
# which is why every target gets the same definitions and warnings. If a target's flags ever differ, GCC
# ignores the .gch and reads the headers as text (-Winvalid-pch says so): slower, never wrong.
# -DCMAKE_DISABLE_PRECOMPILE_HEADERS=ON turns it all off.
set(NETIFACE_PCH_PRODUCT <algorithm> <chrono> <cstdint> <filesystem> <functional> <map> <memory> <optional>
    <set> <stdexcept> <string> <string_view> <utility> <vector> <fmt/format.h> <nlohmann/json.hpp>)
set(NETIFACE_PCH_TEST ${NETIFACE_PCH_PRODUCT} <thread> <gtest/gtest.h> <gmock/gmock.h>)
file(CONFIGURE OUTPUT ${CMAKE_BINARY_DIR}/generated/netiface_pch.cc CONTENT "// Compiles the precompiled headers.\n")
add_library(netiface_pch_product OBJECT ${CMAKE_BINARY_DIR}/generated/netiface_pch.cc)
set(pch_kinds product)
if(NETIFACE_TESTS)
  add_library(netiface_pch_test OBJECT ${CMAKE_BINARY_DIR}/generated/netiface_pch.cc)
  list(APPEND pch_kinds test)
endif()
foreach(kind ${pch_kinds})
  set(t netiface_pch_${kind})
  target_compile_options(${t} PRIVATE ${NETIFACE_WARNINGS})
  target_compile_definitions(${t} PRIVATE ${NETIFACE_DEFINES})
  target_link_libraries(${t} PRIVATE nlohmann_json::nlohmann_json)
endforeach()
target_precompile_headers(netiface_pch_product PRIVATE ${NETIFACE_PCH_PRODUCT})
if(NETIFACE_TESTS)
  target_link_libraries(netiface_pch_test PRIVATE GTest::gtest GTest::gmock)
  target_precompile_headers(netiface_pch_test PRIVATE ${NETIFACE_PCH_TEST})
endif()

# netiface_use_pch(target product|test): the target reuses that kind's precompiled header.
function(netiface_use_pch name kind)
  target_compile_definitions(${name} PRIVATE ${NETIFACE_DEFINES})
  target_precompile_headers(${name} REUSE_FROM netiface_pch_${kind})
endfunction()

function(netiface_library name)
  cmake_parse_arguments(ARG "" "" "SOURCES;DEPS" ${ARGN})
  add_library(${name} STATIC ${ARG_SOURCES})
  target_include_directories(${name} PUBLIC ${CMAKE_CURRENT_SOURCE_DIR}/include)
  target_compile_options(${name} PRIVATE ${NETIFACE_WARNINGS})
  target_compile_definitions(${name} PUBLIC ${NETIFACE_DEFINES})
  target_link_libraries(${name} PUBLIC ${ARG_DEPS})
  netiface_use_pch(${name} product)
endfunction()

# DYNAMIC: never linked statically (daemons and tools whose libraries have no static archive);
# DESTINATION: install folder (default NETIFACE_CNI_BIN_DIR).
function(netiface_executable name)
  cmake_parse_arguments(ARG "DYNAMIC" "DESTINATION" "SOURCES;DEPS" ${ARGN})
  add_executable(${name} ${ARG_SOURCES})
  target_compile_options(${name} PRIVATE ${NETIFACE_WARNINGS})
  target_link_libraries(${name} PRIVATE ${ARG_DEPS})
  netiface_use_pch(${name} product)
  if(NOT ARG_DESTINATION)
    set(ARG_DESTINATION ${NETIFACE_CNI_BIN_DIR})
  endif()
  if(NETIFACE_STATIC_RUNTIME AND NOT ARG_DYNAMIC)
    # Fully static: a static executable starts in 0.40 ms here against 0.52 ms for one that loads only
    # glibc (docs/architecture.md). The linker warns that dlopen and getaddrinfo need the same glibc at
    # run time; getaddrinfo (libnl) is not on our path and dlopen is only for libnftables.
    target_link_options(${name} PRIVATE -static)
  endif()
  install(TARGETS ${name} RUNTIME DESTINATION ${ARG_DESTINATION})
  if(NETIFACE_SPLIT_DEBUG)
    # The debug info moves to bin/<name>.debug (installed under lib/debug/, where gdb looks, as its own
    # component: the .deb's -dbg package); the executable keeps a link to it and nothing else of it.
    add_custom_command(TARGET ${name} POST_BUILD
      COMMAND ${CMAKE_OBJCOPY} --only-keep-debug $<TARGET_FILE:${name}> $<TARGET_FILE:${name}>.debug
      COMMAND ${CMAKE_OBJCOPY} --strip-debug --strip-unneeded --remove-section=.comment
              --add-gnu-debuglink=$<TARGET_FILE:${name}>.debug $<TARGET_FILE:${name}>
      VERBATIM)
    cmake_path(IS_ABSOLUTE ARG_DESTINATION absolute)
    if(absolute)
      set(debug_dir lib/debug${ARG_DESTINATION})
    else()
      set(debug_dir lib/debug/${CMAKE_INSTALL_PREFIX}/${ARG_DESTINATION})
    endif()
    install(FILES $<TARGET_FILE:${name}>.debug DESTINATION ${debug_dir} COMPONENT debug EXCLUDE_FROM_ALL)
  endif()
endfunction()

function(netiface_test name)
  cmake_parse_arguments(ARG "PRIVILEGED" "" "SOURCES;DEPS" ${ARGN})
  add_executable(${name} ${ARG_SOURCES})
  target_compile_options(${name} PRIVATE ${NETIFACE_WARNINGS})
  target_link_libraries(${name} PRIVATE ${ARG_DEPS} GTest::gtest GTest::gmock GTest::gtest_main)
  netiface_use_pch(${name} test)
  set_target_properties(${name} PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/tests)
  # The built plugins and the reference ones are handed to tests through the environment.
  # The plugins they run log to this tree's tests/log/<test>/cni.log, not to the machine's /var/log (log.h): one
  # file per test, as tests run two at a time (scripts/test.sh).
  set(env "NETIFACE_BIN_DIR=${CMAKE_BINARY_DIR}/bin;NETIFACE_SOURCE_DIR=${PROJECT_SOURCE_DIR}")
  string(APPEND env ";NETIFACE_LOG_FILE=${CMAKE_BINARY_DIR}/tests/log/${name}/cni.log")
  add_test(NAME ${name} COMMAND ${name})
  if(ARG_PRIVILEGED)
    set_tests_properties(${name} PROPERTIES LABELS privileged ENVIRONMENT "${env}")
  else()
    set_tests_properties(${name} PROPERTIES LABELS unit ENVIRONMENT "${env}")
  endif()
endfunction()
