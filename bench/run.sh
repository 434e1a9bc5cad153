#!/usr/bin/env bash
# Side-by-side benchmark of netiface and the reference plugins (Debian's containernetworking-plugins) in one
# run. Builds nothing: give it a build dir made by cmake (default: build). Writes docs/benchmarks.md and
# docs/benchmarks.png. Needs root (it works in a throw-away network namespace).
#   bash bench/run.sh [BUILD_DIR] [--quick]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
source "$root/scripts/common.sh"
build=${1:-$root/build}; shift || true
[ -x "$build/bench/cni-bench" ] || { echo "no $build/bench/cni-bench: build first (cmake --build $build)" >&2; exit 2; }
ensure_packages containernetworking-plugins gnuplot-nox iproute2

# The data folders (IPAM stores, endpoint records) live in the build tree, not in /tmp: on these machines
# ext4 spends 0.1-0.35 ms on every new file in /tmp's part of the disk (perf: its scan for recently freed
# inodes), ~10 us in /root, /var/lib or the build tree, and the plugins under test create files per ADD.
data=$(mktemp -d "$(cd "$build" && pwd)/bench-data-XXXXXX")
trap 'rm -rf "$data"' EXIT
"$build/bench/cni-bench" --bin "$build/bin" --ref /usr/lib/cni --out "$root/docs/benchmarks.md" --data "$data" "$@"

gnuplot <<GP
set terminal pngcairo size 1400,560 font "sans,10"
set output "$root/docs/benchmarks.png"
set multiplot layout 1,2
set title "ADD and DEL median per call (ms, lower is better)"
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.8 border -1
set boxwidth 0.9
set xtics rotate by -20 font ",8"
set ylabel "ms"
set key top left
plot "$data/ops.dat" using 2:xtic(1) title "netiface ADD" lc rgb "#1f77b4", \
     "" using 3 title "reference ADD" lc rgb "#ff7f0e", \
     "" using 4 title "netiface DEL" lc rgb "#aec7e8", \
     "" using 5 title "reference DEL" lc rgb "#ffbb78"
set title "host-local: median ms per call vs existing reservations"
set style data linespoints
set xlabel "existing reservations"
set ylabel "ms"
set xtics norotate font ",9"
set logscale y
plot "$data/scale.dat" using 1:2 title "netiface ADD" lw 2 lc rgb "#1f77b4", \
     "" using 1:3 title "reference ADD" lw 2 lc rgb "#ff7f0e", \
     "" using 1:4 title "netiface DEL" dt 2 lw 2 lc rgb "#1f77b4", \
     "" using 1:5 title "reference DEL" dt 2 lw 2 lc rgb "#ff7f0e"
unset multiplot
GP
echo "wrote docs/benchmarks.md and docs/benchmarks.png" >&2
