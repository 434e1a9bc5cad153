#!/usr/bin/env bash
# Runs every test: installs what is missing, builds the shipped configuration (static runtime) and a
# sanitizer configuration (ASan + UBSan, warnings are errors there only), lints (scripts/lint.sh: every file's
# layout, clang-tidy on what changed) and runs the whole ctest suite against each: unit tests everywhere,
# privileged tests (root: throw-away network namespaces) and the podman end-to-end test; then a short run
# of every fuzzing harness (scripts/fuzz.sh).
set -euo pipefail
source "$(dirname "$0")/common.sh"
cd "$NETIFACE_ROOT"

ensure_packages "${NETIFACE_PACKAGES[@]}"

echo "== build: release (build/, the shipped configuration: -O3, no debug info)"
build_tree build -DCMAKE_BUILD_TYPE=Release
echo "== build: ASan + UBSan (build-asan/)"
# No benchmarks here: they are measured from the release build, and the tree builds faster without them.
# The fault-injection hook (libcni/fault.h) exists in this tree only: the fault-matrix test drives it.
build_tree build-asan -DCMAKE_BUILD_TYPE=Debug -DNETIFACE_SANITIZE=ON -DNETIFACE_BENCH=OFF -DNETIFACE_WERROR=ON \
  -DNETIFACE_FAULT_INJECTION=ON

export ASAN_OPTIONS=detect_leaks=1:abort_on_error=0
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
status=0
# Layout of every C++ file (.clang-format) and clang-tidy on the product files changed since origin/main.
echo "== lint"
bash scripts/lint.sh --build build || status=1
echo "== tests: release build"
ctest --test-dir build --output-on-failure --timeout 600 || status=1
echo "== tests: ASan + UBSan build"
ctest --test-dir build-asan --output-on-failure --timeout 900 || status=1
# The libFuzzer harnesses (tests/fuzz), each for 10 s over its seed corpus, in a clang tree of their own
# (build-fuzz/, the harnesses and the libraries they need only). The long run: docs/reliability.md.
echo "== fuzz: every harness, 10 s each"
bash scripts/fuzz.sh --seconds 10 --jobs "$(nproc)" || status=1
exit $status
