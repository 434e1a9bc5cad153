#!/usr/bin/env bash
# The main job: installs what is missing, builds, then runs a three-node cluster on this machine: an
# "underlay" namespace with a bridge and a real etcd, three node namespaces each running netiface-agent
# (subnet leases in etcd, subnet.env, flannel's default vxlan backend over IPv4 and IPv6, masquerade), and
# two dual-stack pods per node attached through the netiface CLI with our flannel -> bridge -> host-local.
# It shows the leases, devices and routes, pings every pod from every other node in both families, runs
# CHECK, DELs everything, stops what it started (by pid) and proves that nothing is left behind. This machine's own namespace, routes and firewall are not touched.
# NETIFACE_DEMO_BACKEND=host-gw runs the same cluster on the host-gw backend instead.
set -euo pipefail
source "$(dirname "$0")/common.sh"
cd "$NETIFACE_ROOT"

ensure_packages "${NETIFACE_PACKAGES[@]}"
BUILD=${NETIFACE_BUILD_DIR:-$NETIFACE_ROOT/build}
echo "== build ($BUILD)"
build_tree "$BUILD" >/dev/null
BIN=$BUILD/bin
BACKEND=${NETIFACE_DEMO_BACKEND:-vxlan}
case $BACKEND in vxlan|host-gw) ;; *) echo "NETIFACE_DEMO_BACKEND must be vxlan or host-gw" >&2; exit 2;; esac

tag=$$
UL=nfdemo-ul-$tag
NODES=(1 2 3)
W=$(mktemp -d /tmp/netiface-demo-XXXXXX)
# The plugins' log file in the demo's own folder (removed at the end), not the machine's /var/log.
export NETIFACE_LOG_FILE=$W/cni.log
ETCD_PID=
AGENT_PIDS=()
node_ns() { echo "nfdemo-n$1-$tag"; }
pod_ns() { echo "nfdemo-p$1$2-$tag"; }
all_ns() {
  echo "$UL"
  for n in "${NODES[@]}"; do node_ns "$n"; pod_ns "$n" a; pod_ns "$n" b; done
}
cleanup() {
  for p in "${AGENT_PIDS[@]}" $ETCD_PID; do kill "$p" 2>/dev/null || true; done
  for p in "${AGENT_PIDS[@]}" $ETCD_PID; do
    for _ in $(seq 50); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
    kill -9 "$p" 2>/dev/null || true
  done
  for ns in $(all_ns); do ip netns del "$ns" 2>/dev/null || true; done
  rm -rf "$W"
}
trap cleanup EXIT

step() { printf '\n\033[1m== %s\033[0m\n' "$*"; }
in_ns() { local ns=$1; shift; nsenter --net=/run/netns/$ns -- "$@"; }
etcdctl_() { in_ns "$UL" env ETCDCTL_API=3 etcdctl --endpoints=http://192.0.2.254:2379 "$@"; }
cli() { local n=$1; shift; in_ns "$(node_ns "$n")" "$BIN/netiface" "$@" --conf-dir "$W/n$n/net.d" --cni-path "$BIN" --cache-dir "$W/n$n/cache"; }
pod_ip() { ip -n "$1" -j -4 addr show dev eth0 | sed -n 's/.*"local":"\([0-9.]*\)".*/\1/p'; }
pod_ip6() { ip -n "$1" -j -6 addr show dev eth0 scope global | sed -n 's/.*"local":"\([0-9a-f:]*\)".*/\1/p'; }
wait_for() { local what=$1; shift; for _ in $(seq 200); do "$@" && return 0; sleep 0.1; done; echo "timed out: $what" >&2; return 1; }

step "underlay $UL (bridge 192.0.2.254/24, 2001:db8:1::fe/64) with etcd, three nodes on it"
ip netns add "$UL"; ip -n "$UL" link set lo up
ip -n "$UL" link add br0 type bridge
ip -n "$UL" addr add 192.0.2.254/24 dev br0 && ip -n "$UL" addr add 2001:db8:1::fe/64 dev br0 nodad
ip -n "$UL" link set br0 up
for n in "${NODES[@]}"; do
  ns=$(node_ns "$n")
  ip netns add "$ns"; ip -n "$ns" link set lo up
  ip -n "$ns" link add eth0 type veth peer name ul$n-$tag netns "$UL"
  ip -n "$UL" link set "ul$n-$tag" master br0 up
  ip -n "$ns" addr add 192.0.2.$n/24 dev eth0 && ip -n "$ns" link set eth0 up
  ip -n "$ns" addr add 2001:db8:1::$n/64 dev eth0 nodad
  ip -n "$ns" route add default via 192.0.2.254 && ip -n "$ns" -6 route add default via 2001:db8:1::fe
  in_ns "$ns" sysctl -qw net.ipv4.ip_forward=1 net.ipv6.conf.all.forwarding=1
  mkdir -p "$W/n$n/net.d"
  cat > "$W/n$n/net.d/10-flannel.conflist" <<JSON
{
  "cniVersion": "1.1.0",
  "name": "cluster",
  "plugins": [
    {
      "type": "flannel",
      "subnetFile": "$W/n$n/subnet.env",
      "dataDir": "$W/n$n/flannel",
      "delegate": { "bridge": "cni0", "isDefaultGateway": true },
      "ipam": { "dataDir": "$W/n$n/ipam" }
    }
  ]
}
JSON
done
mkdir -p "$W/etcd"
nsenter --net=/run/netns/$UL -- etcd --name demo --data-dir "$W/etcd/data" \
  --listen-client-urls http://192.0.2.254:2379 --advertise-client-urls http://192.0.2.254:2379 \
  --listen-peer-urls http://192.0.2.254:2380 --initial-advertise-peer-urls http://192.0.2.254:2380 \
  --initial-cluster demo=http://192.0.2.254:2380 --initial-cluster-state new \
  --log-level warn --logger zap >"$W/etcd/etcd.log" 2>&1 &
ETCD_PID=$!
wait_for "etcd health" etcdctl_ endpoint health >/dev/null 2>&1
echo "etcd $(etcdctl_ version | awk 'NR == 1 {print $3}') on 192.0.2.254:2379 (pid $ETCD_PID)"

step "the network config, in flanneld's JSON, at /coreos.com/network/config"
CONFIG='{"Network": "10.5.0.0/16", "SubnetLen": 24, "EnableIPv6": true, "IPv6Network": "fd00:5::/56",
  "IPv6SubnetLen": 64, "Backend": {"Type": "'"$BACKEND"'"}}'
etcdctl_ put /coreos.com/network/config "$CONFIG" >/dev/null
echo "$CONFIG"

step "netiface-agent on every node (flanneld's flags)"
for n in "${NODES[@]}"; do
  nsenter --net=/run/netns/"$(node_ns "$n")" -- "$BIN/netiface-agent" --etcd-endpoints=http://192.0.2.254:2379 \
    --subnet-file="$W/n$n/subnet.env" --ip-masq >"$W/n$n/agent.log" 2>&1 &
  AGENT_PIDS+=($!)
done
for n in "${NODES[@]}"; do
  wait_for "subnet.env on node $n" test -s "$W/n$n/subnet.env"
  echo "node $n (pid ${AGENT_PIDS[$((n - 1))]}): $(tr '\n' ' ' < "$W/n$n/subnet.env")"
done
echo; echo "leases in etcd (netiface leases):"
in_ns "$UL" "$BIN/netiface" leases --etcd-endpoints http://192.0.2.254:2379 | sed 's/^/  /'
for n in "${NODES[@]}"; do
  ns=$(node_ns "$n")
  wait_for "routes on node $n" test "$(ip -n "$ns" route show proto 78 | wc -l)" -eq 2
  wait_for "IPv6 routes on node $n" test "$(ip -n "$ns" -6 route show proto 78 | wc -l)" -eq 2
  echo "node $n:"
  ip -n "$ns" -br link show type vxlan | sed 's/^/  device /'
  { ip -n "$ns" route show proto 78; ip -n "$ns" -6 route show proto 78; } | sed 's/^/  route  /'
  [ "$BACKEND" = host-gw ] || bridge -n "$ns" fdb show dev flannel.1 | sed 's/^/  fdb    /'
done

step "ADD: two pods per node through flannel -> bridge -> host-local"
for n in "${NODES[@]}"; do
  for p in a b; do
    ip netns add "$(pod_ns "$n" $p)"
    cli "$n" add cluster "/run/netns/$(pod_ns "$n" $p)" >/dev/null
    printf '  node %s pod %s  %-12s %s\n' "$n" "$p" "$(pod_ip "$(pod_ns "$n" $p)")" "$(pod_ip6 "$(pod_ns "$n" $p)")"
  done
done

step "ping: every pod reaches every pod on the other nodes (IPv4 and IPv6, through $BACKEND); masquerade"
sum_tx() { local t=0 n v; [ "$BACKEND" = vxlan ] || { echo 0; return; }
  for n in "${NODES[@]}"; do for v in flannel.1 flannel-v6.1; do
  t=$((t + $(ip -n "$(node_ns "$n")" -s -j link show "$v" | sed -n 's/.*"tx":{"bytes":[0-9]*,"packets":\([0-9]*\).*/\1/p'))); done; done; echo $t; }
tx0=$(sum_tx)
pings=0
for n in "${NODES[@]}"; do
  for p in a b; do
    for m in "${NODES[@]}"; do
      [ "$m" = "$n" ] && continue
      for q in a b; do
        ip netns exec "$(pod_ns "$n" $p)" ping -c 1 -W 2 "$(pod_ip "$(pod_ns "$m" $q)")" >/dev/null
        ip netns exec "$(pod_ns "$n" $p)" ping -c 1 -W 2 "$(pod_ip6 "$(pod_ns "$m" $q)")" >/dev/null
        pings=$((pings + 2))
      done
    done
  done
done
echo "$pings cross-node pings, all answered"
[ "$BACKEND" = host-gw ] || echo "the vxlan devices sent $(( $(sum_tx) - tx0 )) packets meanwhile"
ip netns exec "$(pod_ns 1 a)" ping -c 1 -W 2 192.0.2.254 | tail -1
ip netns exec "$(pod_ns 1 a)" ping -c 1 -W 2 2001:db8:1::fe | tail -1
echo "(the underlay has no route to the pod networks: those answers came back through node 1's masquerade)"

step "CHECK every attachment (silent on success)"
for n in "${NODES[@]}"; do for p in a b; do cli "$n" check cluster "/run/netns/$(pod_ns "$n" $p)"; done; done
echo "CHECK passed for 6 attachments"

step "DEL every attachment, stop the agents and etcd"
for n in "${NODES[@]}"; do for p in a b; do cli "$n" del cluster "/run/netns/$(pod_ns "$n" $p)"; done; done
for p in "${AGENT_PIDS[@]}"; do kill "$p"; done
for p in "${AGENT_PIDS[@]}"; do wait "$p" || { echo "agent $p exited with $?"; exit 1; }; done
echo "agents stopped (they keep lease, routes, rules and subnet.env on exit, as flanneld does)"
kill "$ETCD_PID"; wait "$ETCD_PID" 2>/dev/null || true
AGENT_PIDS=(); ETCD_PID=

step "nothing left behind"
left=0
for n in "${NODES[@]}"; do
  res=$(in_ns "$(node_ns "$n")" "$BIN/netiface" ipam ls --data-dir "$W/n$n/ipam" --json)
  ! grep -q '"address"' <<<"$res" || { echo "reservations left on node $n: $res"; left=1; }
  files=$(find "$W/n$n/flannel" "$W/n$n/cache" -type f ! -name lock 2>/dev/null || true)
  [ -z "$files" ] || { echo "files left on node $n: $files"; left=1; }
  for p in a b; do
    ip -n "$(pod_ns "$n" $p)" link show eth0 >/dev/null 2>&1 && { echo "eth0 left in node $n pod $p"; left=1; }
  done
done
[ $left -eq 0 ] || exit 1
echo "no reservations, flannel configs or cached results; no eth0 in any pod"
cleanup; trap - EXIT
left_ns=$(ip netns list | grep -c -- "-$tag" || true)
procs=$(pgrep -f "$W" | wc -l || true)
echo "namespaces left: $left_ns; processes left: $procs; scratch dir removed: $([ -e "$W" ] && echo no || echo yes)"
[ "$left_ns" -eq 0 ] && [ "$procs" -eq 0 ]
