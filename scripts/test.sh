#!/usr/bin/env bash
# Runs every test: installs what is missing, builds the shipped configuration (static runtime) and a
# sanitizer configuration (ASan + UBSan, warnings are errors there only), lints (scripts/lint.sh: every file's
# layout, clang-tidy on what changed) and runs the whole ctest suite against each: unit tests everywhere,
# privileged tests (root: throw-away network namespaces) and the podman end-to-end test; then the .deb
# (scripts/package.sh: built, lintian, installed beside containernetworking-plugins and removed by
# tests/packaging/deb_test.sh) and a short run of every fuzzing harness (scripts/fuzz.sh).
set -euo pipefail
source "$(dirname "$0")/common.sh"
cd "$NETIFACE_ROOT"

ensure_packages "${NETIFACE_PACKAGES[@]}"

# Each build's wall and CPU time (on a fresh clone: a clean build; docs/architecture.md, "Building fast").
TIMEFORMAT='== build time: %R s wall, %U s user + %S s system'
echo "== build: release (build/, the shipped configuration: -O3, no debug info)"
time build_tree build -DCMAKE_BUILD_TYPE=Release
echo "== build: ASan + UBSan (build-asan/)"
# No benchmarks here: they are measured from the release build, and the tree builds faster without them.
# The fault-injection hook (libcni/fault.h) exists in this tree only: the fault-matrix test drives it.
# -g1: line tables and function names, all a sanitizer report needs; the full -g wrote ~2 GB of objects.
time build_tree build-asan -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_FLAGS_DEBUG=-g1 -DNETIFACE_SANITIZE=ON \
  -DNETIFACE_BENCH=OFF -DNETIFACE_WERROR=ON -DNETIFACE_FAULT_INJECTION=ON

# The .deb's tree (build-deb/) and the fuzzers' (build-fuzz/) build in the background at the lowest
# priority while the tests below run: the privileged tests mostly wait for the kernel, and the two trees
# would otherwise add ~13 minutes of building to the run.
mkdir -p .test-logs
(nice -n 19 bash scripts/package.sh build-deb >.test-logs/package.log 2>&1; echo $? >.test-logs/package.rc) &
package_pid=$!
(nice -n 19 bash scripts/fuzz.sh --build-only >.test-logs/fuzz-build.log 2>&1; echo $? >.test-logs/fuzz-build.rc) &
fuzz_pid=$!

export ASAN_OPTIONS=detect_leaks=1:abort_on_error=0
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
status=0
# Layout of every C++ file (.clang-format) and clang-tidy on the product files changed since origin/main.
echo "== lint"
bash scripts/lint.sh --build build || status=1
# Two tests at a time (-j2, one per core): each privileged test works in namespaces, a store and a log file of
# its own, so only the e2e tests (podman: a whole runtime) stay RUN_SERIAL. The tests mostly wait for
# the kernel and for exec: on 2 cores this took the ASan suite from 956 to 499 s and the release one from 331
# to 152 s. COST puts the longest tests first so that they do not end the run alone.
echo "== tests: release build"
ctest --test-dir build --output-on-failure --timeout 600 -j2 || status=1
echo "== tests: ASan + UBSan build"
ctest --test-dir build-asan --output-on-failure --timeout 900 -j2 || status=1
echo "== package: the .deb (build-deb/), lintian, install, use, remove"
wait "$package_pid" || true
cat .test-logs/package.log
if [ "$(cat .test-logs/package.rc)" = 0 ]; then
  bash tests/packaging/deb_test.sh build-deb || status=1
else
  echo "scripts/package.sh failed" >&2
  status=1
fi
# The libFuzzer harnesses (tests/fuzz), each for 10 s over its seed corpus, in a clang tree of their own
# (build-fuzz/, the harnesses and the libraries they need only). The long run: docs/reliability.md.
echo "== fuzz: every harness, 10 s each"
wait "$fuzz_pid" || true
if [ "$(cat .test-logs/fuzz-build.rc)" != 0 ]; then
  cat .test-logs/fuzz-build.log
  status=1
fi
bash scripts/fuzz.sh --seconds 10 --jobs "$(nproc)" || status=1
exit $status
