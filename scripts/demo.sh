#!/usr/bin/env bash
# The main job: installs what is missing, builds, then attaches pods with the suite through conflists and the
# netiface CLI (cnitool's workflow), shows their addresses, pings across, runs CHECK and DEL, and proves that
# nothing is left behind. Everything happens in network namespaces made here: a throw-away "host" (with an
# uplink namespace so that it looks like a node) and the pods. This machine's own namespace is not touched.
set -euo pipefail
source "$(dirname "$0")/common.sh"
cd "$NETIFACE_ROOT"

ensure_packages "${NETIFACE_PACKAGES[@]}"
BUILD=${NETIFACE_BUILD_DIR:-$NETIFACE_ROOT/build}
echo "== build ($BUILD)"
build_tree "$BUILD" >/dev/null
BIN=$BUILD/bin

tag=$$
HOST=nfdemo-host-$tag UP=nfdemo-up-$tag
PODS=(nfdemo-a-$tag nfdemo-b-$tag nfdemo-c-$tag nfdemo-d-$tag)
W=$(mktemp -d /tmp/netiface-demo-XXXXXX)
cleanup() {
  for ns in "${PODS[@]}" "$HOST" "$UP"; do ip netns del "$ns" 2>/dev/null || true; done
  rm -rf "$W"
}
trap cleanup EXIT

step() { printf '\n\033[1m== %s\033[0m\n' "$*"; }
in_host() { nsenter --net=/run/netns/$HOST -- "$@"; }
cli() { in_host "$BIN/netiface" "$@" --conf-dir "$W/net.d" --cni-path "$BIN" --cache-dir "$W/cache"; }
pod_ip() { ip -n "$1" -j -4 addr show dev eth0 | sed -n 's/.*"local":"\([0-9.]*\)".*/\1/p'; }

step "a throw-away node: host namespace $HOST with an uplink, and four pod namespaces"
for ns in "$HOST" "$UP" "${PODS[@]}"; do ip netns add "$ns"; ip -n "$ns" link set lo up; done
ip -n "$HOST" link add up0 type veth peer name up1 netns "$UP"
ip -n "$HOST" addr add 192.0.2.2/24 dev up0 && ip -n "$HOST" link set up0 up
ip -n "$UP" addr add 192.0.2.1/24 dev up1 && ip -n "$UP" link set up1 up
ip -n "$HOST" route add default via 192.0.2.1   # a node has a default route; proxy ARP relies on it

mkdir -p "$W/net.d"
cat > "$W/net.d/10-routed.conflist" <<JSON
{
  "cniVersion": "1.1.0",
  "name": "demo-routed",
  "plugins": [
    {
      "type": "veth-workload",
      "dataDir": "$W/endpoints",
      "ipam": {
        "type": "host-local",
        "dataDir": "$W/ipam",
        "ranges": [[{ "subnet": "10.77.0.0/24" }]],
        "routes": [{ "dst": "10.77.0.0/16" }]
      }
    }
  ]
}
JSON
cat > "$W/subnet.env" <<ENV
FLANNEL_NETWORK=10.78.0.0/16
FLANNEL_SUBNET=10.78.1.1/24
FLANNEL_MTU=1450
FLANNEL_IPMASQ=true
ENV
cat > "$W/net.d/20-flannel.conflist" <<JSON
{
  "cniVersion": "1.1.0",
  "name": "demo-flannel",
  "plugins": [
    {
      "type": "flannel",
      "subnetFile": "$W/subnet.env",
      "dataDir": "$W/flannel",
      "delegate": { "bridge": "nfdemo0", "hairpinMode": true },
      "ipam": { "dataDir": "$W/ipam" }
    }
  ]
}
JSON
echo "conflists: $(ls "$W/net.d" | tr '\n' ' ')"

step "ADD: pods a, b on demo-routed (veth-workload + host-local); c, d on demo-flannel (flannel -> bridge + host-local)"
cli add demo-routed /run/netns/${PODS[0]} >/dev/null
cli add demo-routed /run/netns/${PODS[1]} >/dev/null
cli add demo-flannel /run/netns/${PODS[2]} >/dev/null
cli add demo-flannel /run/netns/${PODS[3]} >/dev/null
for p in "${PODS[@]}"; do
  printf '%-22s %s\n' "$p" "$(ip -n "$p" -br addr show dev eth0)"
done
echo "routes in pod a:"; ip -n "${PODS[0]}" route | sed 's/^/  /'
echo "host routes to pods:"; ip -n "$HOST" route | grep -E '^10\.7[78]' | sed 's/^/  /'
echo "reservations:"; in_host "$BIN/netiface" ipam ls --data-dir "$W/ipam" | sed 's/^/  /'

A=$(pod_ip ${PODS[0]}) B=$(pod_ip ${PODS[1]}) C=$(pod_ip ${PODS[2]}) D=$(pod_ip ${PODS[3]})
step "ping: a -> b through the host routes, c -> d across the bridge, c -> its gateway"
ip netns exec "${PODS[0]}" ping -c 2 -W 2 "$B" | tail -2
ip netns exec "${PODS[2]}" ping -c 2 -W 2 "$D" | tail -2
ip netns exec "${PODS[2]}" ping -c 1 -W 2 10.78.1.1 | tail -1

step "CHECK every attachment (silent on success)"
for i in 0 1; do cli check demo-routed /run/netns/${PODS[$i]}; done
for i in 2 3; do cli check demo-flannel /run/netns/${PODS[$i]}; done
echo "CHECK passed for 4 attachments"
echo "and CHECK notices damage: removing pod a's route to 10.77.0.0/16 ..."
ip -n "${PODS[0]}" route del 10.77.0.0/16
if cli check demo-routed /run/netns/${PODS[0]} 2>&1; then echo "CHECK missed it" >&2; exit 1; fi

step "DEL every attachment"
for i in 0 1; do cli del demo-routed /run/netns/${PODS[$i]}; done
for i in 2 3; do cli del demo-flannel /run/netns/${PODS[$i]}; done

step "nothing left behind"
left=0
links=$(ip -n "$HOST" -o link show | awk -F': ' '{print $2}' | cut -d@ -f1 | grep -vxE 'lo|up0|nfdemo0' || true)
[ -z "$links" ] || { echo "links left: $links"; left=1; }
routes=$(ip -n "$HOST" route | grep -E '^10\.77' || true)
[ -z "$routes" ] || { echo "routes left: $routes"; left=1; }
res=$(in_host "$BIN/netiface" ipam ls --data-dir "$W/ipam" --json)
[ "$res" = "[]" ] || { echo "reservations left: $res"; left=1; }
files=$(find "$W/endpoints" "$W/flannel" "$W/cache" -type f ! -name lock ! -name .lock 2>/dev/null || true)
[ -z "$files" ] || { echo "files left: $files"; left=1; }
for p in "${PODS[@]}"; do ip -n "$p" link show eth0 >/dev/null 2>&1 && { echo "eth0 left in $p"; left=1; }; done
[ $left -eq 0 ] || exit 1
echo "host links: lo up0 nfdemo0 (the bridge stays, as with the reference bridge); no pod routes; no reservations;"
echo "no endpoint records, flannel configs or cached results; no eth0 in any pod"
cleanup; trap - EXIT
left_ns=$(ip netns list | grep -c "nfdemo-.*-$tag" || true)
echo "namespaces left: $left_ns; scratch dir removed: $([ -e "$W" ] && echo no || echo yes)"
