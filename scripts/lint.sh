#!/usr/bin/env bash
# Lint: the layout of every tracked C++ file against .clang-format, and .clang-tidy's checks on the product
# .cc files (agent etcd ipam libcni libnetlink nat plugins tools) that changed. Exits non-zero on any finding.
#
#   scripts/lint.sh [--all] [--base REV] [--commits N] [--build DIR] [--jobs N]
#
#   --all         clang-tidy on every product .cc file, not only the changed ones
#   --base REV    changed = differs from REV (committed or not); default: the merge-base with origin/main
#                 when there is one, else HEAD~N
#   --commits N   that N (default 1: the last commit and what is not committed yet)
#   --build DIR   the build tree whose compile_commands.json clang-tidy reads (default build/); it must have
#                 been built once (the generated headers)
#   --jobs N      clang-tidy processes at once (default: the number of cores)
#
# The layout check is cheap (~10 s for the tree); clang-tidy costs ~9 s of CPU per file here, which is why
# only what changed is checked by default. A file clang-tidy should check but compile_commands.json does not
# know fails the run: reconfigure the build tree.
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"

CLANG_FORMAT=${CLANG_FORMAT:-clang-format}
CLANG_TIDY=${CLANG_TIDY:-clang-tidy}
PRODUCT_DIRS=(agent etcd ipam libcni libnetlink nat plugins tools)

all=0 base="" commits=1 build=build jobs=$(nproc)
while [ $# -gt 0 ]; do
  case $1 in
    --all) all=1 ;;
    --base) base=$2; shift ;;
    --commits) commits=$2; shift ;;
    --build) build=$2; shift ;;
    --jobs) jobs=$2; shift ;;
    *) echo "usage: $0 [--all] [--base REV] [--commits N] [--build DIR] [--jobs N]" >&2; exit 2 ;;
  esac
  shift
done

status=0
start=$SECONDS

# 1. Layout: every tracked C++ file, in whatever state the working tree has it.
mapfile -t cxx < <(git ls-files -- '*.cc' '*.h')
echo "== clang-format: ${#cxx[@]} files"
if ! printf '%s\0' "${cxx[@]}" | xargs -0 -n 50 -P "$jobs" "$CLANG_FORMAT" --dry-run -Werror; then
  echo "clang-format: the files above differ from .clang-format; fix with: $CLANG_FORMAT -i <file>" >&2
  status=1
fi

# 2. clang-tidy: the product .cc files that changed since the base (or all of them).
mapfile -t product < <(git ls-files -- "${PRODUCT_DIRS[@]/%//*.cc}")
if [ $all -eq 1 ]; then
  files=("${product[@]}")
  echo "== clang-tidy: all ${#files[@]} product files"
else
  if [ -z "$base" ]; then
    if git rev-parse -q --verify origin/main >/dev/null; then
      base=$(git merge-base HEAD origin/main)
    elif git rev-parse -q --verify "HEAD~$commits" >/dev/null; then
      base=HEAD~$commits
    else
      base=$(git hash-object -t tree /dev/null)  # fewer commits than N: everything is new
    fi
  fi
  # Changed and still present: committed since the base, staged or not, plus new files git tracks.
  mapfile -t changed < <(git diff --name-only --diff-filter=ACMR "$base" -- "${PRODUCT_DIRS[@]/%//*.cc}")
  files=()
  for f in "${changed[@]}"; do [ -f "$f" ] && files+=("$f"); done
  echo "== clang-tidy: ${#files[@]} of ${#product[@]} product files changed since $(git rev-parse --short "$base")"
fi

if [ ${#files[@]} -gt 0 ]; then
  db=$build/compile_commands.json
  if [ ! -f "$db" ]; then
    echo "clang-tidy: no $db (configure and build $build first, or give --build DIR)" >&2
    exit 1
  fi
  missing=0
  for f in "${files[@]}"; do
    if ! grep -qF "\"file\": \"$ROOT/$f\"" "$db"; then
      echo "clang-tidy: $f is not in $db (reconfigure $build)" >&2
      missing=1
    fi
  done
  [ $missing -eq 0 ] || exit 1
  # clang-tidy reads the commands without the precompiled header (GCC's .gch is not clang's, and a file
  # must include what it uses): a copy of the database with the two PCH flags taken out.
  tidy_db=$(mktemp -d)
  trap 'rm -rf "$tidy_db"' EXIT
  sed -e 's| -Winvalid-pch||g' -e 's| -include [^ "]*cmake_pch\.hxx||g' "$db" >"$tidy_db/compile_commands.json"
  # Compiler warnings are the compiler's business (-Werror in the ASan build): here only the checks count.
  if ! printf '%s\0' "${files[@]}" | xargs -0 -n 1 -P "$jobs" "$CLANG_TIDY" -p "$tidy_db" --quiet \
      --extra-arg=-Wno-error --extra-arg=-Wno-unknown-warning-option 2> >(grep -v ' warnings\? generated\.$' >&2); then
    echo "clang-tidy: findings above (checks and reasons in .clang-tidy)" >&2
    status=1
  fi
fi

echo "== lint: $([ $status -eq 0 ] && echo clean || echo FINDINGS) in $((SECONDS - start)) s"
exit $status
