#!/usr/bin/env bash
# Builds the .deb packages (netiface, netiface-dbg) into build-deb/ with CPack, from the same install rules
# as `cmake --install`: Debian's build flags (dpkg-buildflags: -O2, hardening), debug info split off into
# the -dbg package, prefix /usr, the plugins in /usr/lib/netiface/cni (beside, never over, Debian's
# /usr/lib/cni), the unit in /lib/systemd/system. Then runs lintian on them; exits 1 on a lintian error.
#   bash scripts/package.sh [BUILD_DIR]     (default build-deb)
set -euo pipefail
source "$(dirname "$0")/common.sh"
cd "$NETIFACE_ROOT"
dir=${1:-build-deb}

ensure_packages "${NETIFACE_PACKAGES[@]}"
CFLAGS=$(dpkg-buildflags --get CFLAGS) CXXFLAGS="$(dpkg-buildflags --get CXXFLAGS) $(dpkg-buildflags --get CPPFLAGS)" \
  LDFLAGS=$(dpkg-buildflags --get LDFLAGS) \
  cmake -S . -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DNETIFACE_TESTS=OFF -DNETIFACE_BENCH=OFF \
  -DNETIFACE_DEB=ON -DNETIFACE_SPLIT_DEBUG=ON -DCMAKE_INSTALL_PREFIX=/usr -DCMAKE_INSTALL_SYSCONFDIR=/etc \
  -DNETIFACE_CNI_BIN_DIR=/usr/lib/netiface/cni -DNETIFACE_SYSTEMD_UNIT_DIR=/lib/systemd/system >/dev/null
cmake --build "$dir" -j"$(nproc)"
rm -f "$dir"/*.deb
(cd "$dir" && cpack -G DEB >/dev/null)
ls -l "$dir"/*.deb
# lintian: errors fail the package; warnings are printed. It leaves scratch files in TMPDIR (mldbm-elf-*),
# so it gets a folder of its own, removed when the script exits.
status=0
lint_tmp=$(mktemp -d)
trap 'rm -rf "$lint_tmp"' EXIT
out=$(TMPDIR=$lint_tmp lintian --no-tag-display-limit "$dir"/*.deb 2>&1) || true
[ -n "$out" ] && echo "$out"
if grep -q '^E:' <<<"$out"; then status=1; echo "lintian: errors" >&2; else echo "lintian: no errors"; fi
exit $status
