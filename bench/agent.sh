#!/usr/bin/env bash
# netiface-agent's benchmark: start-up, remote lease -> route (and, for vxlan, -> a pod's echo reply) and full
# reconciles of the host-gw and vxlan backends against a real etcd, all in throw-away network namespaces. Builds
# nothing: give it a build dir made by cmake (default: build) holding bin/netiface-agent and bench/agent-bench.
# Writes docs/agent-benchmarks.md. Needs root (and iproute2's ip and bridge); takes about 80 s here.
#   bash bench/agent.sh [BUILD_DIR] [--quick]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
source "$root/scripts/common.sh"
build=${1:-$root/build}; shift || true
for f in "$build/bench/agent-bench" "$build/bin/netiface-agent"; do
  [ -x "$f" ] || { echo "no $f: build first (cmake --build $build --target agent-bench netiface-agent)" >&2; exit 2; }
done
[ "$(id -u)" -eq 0 ] || { echo "bench/agent.sh needs root (it makes network namespaces)" >&2; exit 2; }
ensure_packages etcd-server iproute2 nftables
exec "$build/bench/agent-bench" --bin "$build/bin" --out "$root/docs/agent-benchmarks.md" "$@"
