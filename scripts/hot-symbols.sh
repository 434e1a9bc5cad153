#!/usr/bin/env bash
# Regenerates plugins/hot-symbols.txt, the order in which the linker lays out the functions of the
# multi-call plugin image (lld's --symbol-ordering-file): the code a CNI call runs, packed at the start of
# the text, so that a call faults in a few 64 kB windows of it instead of most of its 3 MB (peak RSS and
# start time; see docs/architecture.md). Every function that ran is recorded by callgrind in one
# call of each verb below, in a throw-away "host" namespace; a group's new functions follow the earlier
# groups', so the commonest paths (process start, then ADD) come first.
#   bash scripts/hot-symbols.sh [BUILD_DIR]      (a Release tree; needs root)
# A stale list is harmless (names no longer in the image are skipped; new code is laid out after the
# list); tests/packaging/hot_symbols_test.sh says when it has gone stale.
set -euo pipefail
source "$(dirname "$0")/common.sh"
build=${1:-$NETIFACE_ROOT/build}
bin=$build/bin
[ -x "$bin/netiface-cni" ] || { echo "no $bin/netiface-cni: build first" >&2; exit 2; }
ensure_packages valgrind binutils iproute2

tag=hs$$
host=$tag-host
pod=$tag-pod
work=$(mktemp -d /tmp/netiface-hot-XXXXXX)
cleanup() { ip netns del "$host" 2>/dev/null || true; ip netns del "$pod" 2>/dev/null || true; rm -rf "$work"; }
trap cleanup EXIT
ip netns add "$host"
ip netns add "$pod"
ip -n "$host" link set lo up

cat > "$work/veth-workload.json" <<JSON
{"cniVersion": "1.1.0", "name": "hot", "type": "veth-workload", "dataDir": "$work/endpoints",
 "ipam": {"type": "host-local", "ranges": [[{"subnet": "10.250.0.0/24"}], [{"subnet": "fd50::/64"}]],
          "dataDir": "$work/ipam-vw"}}
JSON
cat > "$work/bridge.json" <<JSON
{"cniVersion": "1.1.0", "name": "hot-br", "type": "bridge", "bridge": "hotbr0", "isGateway": true, "ipMasq": true,
 "ipam": {"type": "host-local", "ranges": [[{"subnet": "10.251.0.0/24"}]], "dataDir": "$work/ipam-br"}}
JSON
printf 'FLANNEL_NETWORK=10.252.0.0/16\nFLANNEL_SUBNET=10.252.3.1/24\nFLANNEL_MTU=1450\nFLANNEL_IPMASQ=true\n' \
  > "$work/subnet.env"
cat > "$work/flannel.json" <<JSON
{"cniVersion": "1.1.0", "name": "hot-fl", "type": "flannel", "subnetFile": "$work/subnet.env",
 "dataDir": "$work/flannel", "delegate": {"bridge": "hotcni0"}, "ipam": {"dataDir": "$work/ipam-fl"}}
JSON
cat > "$work/host-local.json" <<JSON
{"cniVersion": "1.1.0", "name": "hot-hl",
 "ipam": {"type": "host-local", "ranges": [[{"subnet": "10.253.0.0/16"}]], "dataDir": "$work/ipam-hl"}}
JSON

n=0
# One call under callgrind; its delegates (separate processes under valgrind) are recorded too.
record() {
  local verb=$1 plugin=$2 ifname=$3
  n=$((n + 1))
  CNI_COMMAND=$verb CNI_CONTAINERID=hot-$ifname CNI_NETNS=/run/netns/$pod CNI_IFNAME=$ifname CNI_PATH=$bin \
    ip netns exec "$host" valgrind -q --tool=callgrind --trace-children=yes --demangle=no \
    --callgrind-out-file="$work/cg.$(printf %02d $n).%p" "$bin/$plugin" < "$work/$plugin.json" > /dev/null
}
echo '{"cniVersion": "1.1.0"}' > "$work/version.json"
CNI_COMMAND=VERSION valgrind -q --tool=callgrind --demangle=no --callgrind-out-file="$work/cg.00.%p" \
  "$bin/host-local" < "$work/version.json" > /dev/null
for verb in ADD DEL; do
  record $verb veth-workload eth0
  record $verb bridge eth1
  record $verb flannel eth2
  record $verb host-local eth3
done

nm --defined-only "$bin/netiface-cni" | awk '{print $3}' | sort -u > "$work/image"
{
  # Process start before callgrind's first record.
  printf '%s\n' _start __libc_start_main_impl __libc_start_call_main
  # Functions in the order the calls first ran them (callgrind's "name'2" marks a recursion level).
  for f in $(ls "$work"/cg.* | sort); do
    sed -n "s/^c\?fn=([0-9]*) \(.*\)$/\1/p" "$f" | sed "s/'[0-9]*$//"
  done
  # The in-process delegate path, which valgrind's /proc/self/exe never takes.
  nm --defined-only "$build"/libcni/CMakeFiles/*.dir/{in_process,exec}.cc.o | awk '$2 ~ /[tTwW]/ {print $3}'
  # glibc's IFUNC resolvers, all run at process start before callgrind's first record.
  grep '_ifunc$' "$work/image"
} | awk '!seen[$0]++' | grep -Fxf "$work/image" > "$work/ordered"
# glibc picks string functions by CPU (valgrind's CPU has no AVX-512): every variant of the ones used.
sed -n 's/^__\([a-z0-9]*\)_\(sse2\|ssse3\|avx2\|avx\|evex\|erms\).*/\1/p' "$work/ordered" | sort -u |
  while read -r base; do grep -E "^__${base}_(sse2|ssse3|sse4|avx|evex)" "$work/image" || true; done > "$work/variants"
cat "$work/ordered" "$work/variants" | awk '!seen[$0]++' > "$NETIFACE_ROOT/plugins/hot-symbols.txt"
echo "plugins/hot-symbols.txt: $(wc -l < "$NETIFACE_ROOT/plugins/hot-symbols.txt") symbols from $n calls"
