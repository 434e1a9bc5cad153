#!/usr/bin/env bash
# End to end with a real runtime. The same conflists of OUR plugins (veth-workload, flannel -> bridge,
# bridge; all with host-local) are driven by
#   phase "podman":   Debian's podman (CNI backend, runc, busybox-static rootfs, private root/runroot):
#                     two containers per network get addresses, ping each other, and after `podman rm`
#                     every address is released and every host-side link and route is gone. Then
#                     podman's own default network chain (`podman network create` writes bridge +
#                     portmap + firewall + tuning, as Debian's podman does) on our plugins only: a port
#                     published with `podman run -p` answers a client in the host namespace, and after
#                     `podman rm` no nft rule, qdisc or reservation of it is left.
#   phase "netiface": the netiface CLI inside a throw-away "host" namespace against throw-away pod
#                     namespaces: add, check, status, ping, gc, del, with the same assertions.
# Usage: podman_e2e.sh [podman|netiface|all]      (root; NETIFACE_BIN_DIR = the build's bin folder)
#
# Safety: both phases run the plugins in a throw-away "host" namespace (podman itself is started under
# nsenter --net, so the host side of every container lives there, not in this machine's namespace).
# ipMasq false everywhere, private subnets checked to be unused, IPAM routes only to the pod subnet (no
# default route); traps remove containers, namespaces and our entries in podman's global CNI cache, also
# when the test fails. No sysctl, route or link of this machine is touched.
set -euo pipefail

PHASE=${1:-all}
BIN=${NETIFACE_BIN_DIR:-$(cd "$(dirname "$0")/../.." && pwd)/build/bin}
BIN=$(cd "$BIN" && pwd)
T=$(( $$ % 900 + 100 ))                     # run token: names, subnets
CNI_STATE_WAS_THERE=$([ -e /var/lib/cni ] && echo 1 || echo 0)  # podman's and host-local's default state dir
W=$(mktemp -d /tmp/netiface-e2e.XXXXXX)
trap 'rm -rf "$W"' EXIT
NET_VW=nie2e-vw-$T NET_FL=nie2e-fl-$T NET_BR=nie2e-br-$T
BR_FL=nie2ef$T BR_BR=nie2eb$T VPFX=nv$T
H=nie2e-h-$T HP=nie2e-ph-$T P1=nie2e-a-$T P2=nie2e-b-$T
failures=0

log() { echo "== $*"; }
fail() { echo "FAIL: $*" >&2; failures=$((failures + 1)); }
die() { echo "FATAL: $*" >&2; exit 1; }
[ "$(id -u)" -eq 0 ] || die "needs root"

# --- private subnets that nothing on this machine uses -------------------------------------------
pick_octet() {  # pick_octet PREFIX: an a in 1..250 with PREFIX.a.0/24 unused by routes and addresses
  local a routes addrs
  # Read once (a `| grep -q` under pipefail can fail by SIGPIPE and call a used subnet free).
  routes=$(ip -4 route show table all); addrs=$(ip -4 -o addr show)
  for a in $(seq $((T % 200 + 20)) 250) $(seq 1 250); do
    if ! grep -q "^\(local \|broadcast \)\?$1\.$a\." <<<"$routes" &&
       ! grep -q " $1\.$a\." <<<"$addrs"; then echo "$a"; return; fi
  done
  die "no free subnet under $1.0.0/16"
}
SUB_VW=10.213.$(pick_octet 10.213)
SUB_FL=10.214.$(pick_octet 10.214)
SUB_BR=10.215.$(pick_octet 10.215)
SUB_PD=10.216.$(pick_octet 10.216)
NET_PD=nie2e-pd-$T
grep -q ": $VPFX" <<<"$(ip -o link show)" && die "links named $VPFX* already exist"

# --- the conflists (one set, used by both phases) ------------------------------------------------
# cniVersions offers 1.1.0 too: podman's libcni 1.1 reads only cniVersion (1.0.0), netiface picks 1.1.0
# and so also runs STATUS and GC.
write_conflists() {
  mkdir -p "$W/net.d"
  cat > "$W/net.d/10-$NET_VW.conflist" <<EOF
{ "cniVersion": "1.0.0", "cniVersions": ["1.0.0", "1.1.0"], "name": "$NET_VW",
  "plugins": [ { "type": "veth-workload", "vethPrefix": "$VPFX", "nodename": "e2enode",
                 "dataDir": "$W/vw-data", "ipMasq": false,
                 "ipam": { "type": "host-local", "dataDir": "$W/ipam",
                           "ranges": [[{ "subnet": "$SUB_VW.0/24" }]],
                           "routes": [{ "dst": "$SUB_VW.0/24" }] } } ] }
EOF
  cat > "$W/subnet.env" <<EOF
FLANNEL_NETWORK=$SUB_FL.0/24
FLANNEL_SUBNET=$SUB_FL.1/25
FLANNEL_MTU=1450
FLANNEL_IPMASQ=true
EOF
  cat > "$W/net.d/20-$NET_FL.conflist" <<EOF
{ "cniVersion": "1.0.0", "cniVersions": ["1.0.0", "1.1.0"], "name": "$NET_FL",
  "plugins": [ { "type": "flannel", "subnetFile": "$W/subnet.env", "dataDir": "$W/flannel-data",
                 "ipam": { "dataDir": "$W/ipam" },
                 "delegate": { "type": "bridge", "bridge": "$BR_FL", "isGateway": false,
                               "ipMasq": false, "hairpinMode": true } } ] }
EOF
  cat > "$W/net.d/30-$NET_BR.conflist" <<EOF
{ "cniVersion": "1.0.0", "cniVersions": ["1.0.0", "1.1.0"], "name": "$NET_BR",
  "plugins": [ { "type": "bridge", "bridge": "$BR_BR", "isGateway": false, "ipMasq": false,
                 "ipam": { "type": "host-local", "dataDir": "$W/ipam",
                           "ranges": [[{ "subnet": "$SUB_BR.0/24" }]] } } ] }
EOF
}

subnet_of() { case $1 in "$NET_VW") echo "$SUB_VW";; "$NET_FL") echo "$SUB_FL";; *) echo "$SUB_BR";; esac; }

# Asserts that nothing of network $1 is left: reservations, endpoint records, flannel scratch files,
# links with our prefix and routes to the pod subnet (in the namespace `$2` runs commands in: "" for
# the machine, "ip netns exec $H" for the throw-away host).
assert_released() {
  local net=$1 in_ns=$2 sub left
  sub=$(subnet_of "$net")
  left=$(ls -A "$W/ipam/$net" 2>/dev/null | grep -v -e '^last_reserved_ip' -e '^lock$' -e '^\.' || true)
  [ -z "$left" ] || fail "$net: reservations left: $left"
  left=$(find "$W/vw-data" -name '*.json' 2>/dev/null || true)
  [ -z "$left" ] || fail "$net: endpoint records left: $left"
  left=$(find "$W/flannel-data" -type f ! -name '.*' ! -name lock 2>/dev/null || true)
  [ -z "$left" ] || fail "$net: flannel scratch files left: $left"
  left=$($in_ns ip -o link show | grep ": $VPFX" || true)
  [ -z "$left" ] || fail "$net: host links left: $left"
  left=$($in_ns ip -4 route show | grep "^${sub//./\\.}\." || true)
  [ -z "$left" ] || fail "$net: host routes left: $left"
  for br in "$BR_FL" "$BR_BR"; do
    left=$($in_ns ip -o link show master "$br" 2>/dev/null || true)
    [ -z "$left" ] || fail "$net: ports left on $br: $left"
  done
}

in_subnet() { case $1 in "$2".*) return 0;; *) return 1;; esac; }

# make_node NS: a throw-away "host" namespace that looks like a node: lo up and an uplink with a default
# route (veth-workload's gateway 169.254.1.1 is answered by proxy ARP only when the host routes that
# address through another interface).
make_node() {
  local hx="ip netns exec $1"
  ip netns add "$1"
  $hx ip link set lo up
  $hx ip link add up0 type veth peer name up1
  $hx ip addr add 192.0.2.1/24 dev up0
  $hx ip link set up0 up
  $hx ip link set up1 up
  $hx ip route add default via 192.0.2.2 dev up0
}

# --- phase podman --------------------------------------------------------------------------------
podman_cleanup() {
  set +e
  "${P[@]}" rm -af -t 0 >/dev/null 2>&1
  ip netns del "$HP" 2>/dev/null   # its bridges, veths and routes go with it
  rm -f /var/lib/cni/results/"$NET_VW"-* /var/lib/cni/results/"$NET_FL"-* /var/lib/cni/results/"$NET_BR"-*
  rm -f /var/lib/cni/results/"$NET_PD"-*
  rm -rf /var/lib/cni/networks/"$NET_PD"   # podman's generated config keeps host-local's default dataDir
  rm -rf /var/lib/cni/networks/.netiface/"$NET_PD"  # and our host-local's index of that store
  # A machine that had no /var/lib/cni gets none back: only the empty folders podman and host-local made.
  [ "$CNI_STATE_WAS_THERE" = 1 ] || find /var/lib/cni -depth -type d -empty -delete 2>/dev/null
}

phase_podman() {
  local need="" p
  for p in podman runc busybox-static; do dpkg -s "$p" >/dev/null 2>&1 || need="$need $p"; done
  if [ -n "$need" ]; then
    log "installing:$need"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $need >/dev/null
  fi
  mkdir -p "$W"/rootfs/{bin,etc,proc,sys,dev,tmp,run}
  cp /bin/busybox "$W/rootfs/bin/busybox"
  for a in $("$W/rootfs/bin/busybox" --list); do [ -e "$W/rootfs/bin/$a" ] || ln -s busybox "$W/rootfs/bin/$a"; done
  echo 'root:x:0:0:root:/root:/bin/sh' > "$W/rootfs/etc/passwd"
  echo 'root:x:0:' > "$W/rootfs/etc/group"
  mkdir -p "$W/rootfs/www" && echo "netiface-e2e-$T" > "$W/rootfs/www/index.html"
  local nofile; nofile=$(ulimit -Hn)
  cat > "$W/containers.conf" <<EOF
[containers]
default_ulimits = ["nofile=$nofile:$nofile", "nproc=32768:32768"]

[network]
network_backend = "cni"
cni_plugin_dirs = ["$BIN"]
network_config_dir = "$W/net.d"
default_network = "nie2e-never-used-$T"

[engine]
cgroup_manager = "cgroupfs"
events_logger = "file"
events_logfile_path = "$W/events.log"
runtime = "runc"
tmp_dir = "$W/libpod-tmp"
EOF
  export CONTAINERS_CONF="$W/containers.conf"
  trap 'podman_cleanup; rm -rf "$W"' EXIT
  make_node "$HP"
  P=(nsenter "--net=/run/netns/$HP" -- podman --root "$W/storage" --runroot "$W/runroot" --storage-driver vfs)

  local net driver a b ipa ipb
  for net in "$NET_VW" "$NET_FL" "$NET_BR"; do
    log "podman: $net"
    case $net in "$NET_VW") driver=veth-workload;; "$NET_FL") driver=flannel;; *) driver=bridge;; esac
    # Never let podman fall back to its own default network: the network must be ours, by its type.
    [ "$("${P[@]}" network inspect "$net" --format '{{.Driver}}')" = "$driver" ] ||
      { fail "$net: podman does not see our conflist"; continue; }
    a=$net-a b=$net-b
    "${P[@]}" run -d --name "$a" --network "$net" --rootfs "$W/rootfs" /bin/sleep 600 >/dev/null ||
      { fail "$net: podman run $a"; continue; }
    "${P[@]}" run -d --name "$b" --network "$net" --rootfs "$W/rootfs" /bin/sleep 600 >/dev/null ||
      { fail "$net: podman run $b"; continue; }
    ipa=$("${P[@]}" inspect -f "{{(index .NetworkSettings.Networks \"$net\").IPAddress}}" "$a")
    ipb=$("${P[@]}" inspect -f "{{(index .NetworkSettings.Networks \"$net\").IPAddress}}" "$b")
    echo "   $a=$ipa $b=$ipb"
    in_subnet "$ipa" "$(subnet_of "$net")" && in_subnet "$ipb" "$(subnet_of "$net")" ||
      fail "$net: addresses '$ipa' '$ipb' not in $(subnet_of "$net").0/24"
    if grep -q '^default' <<<"$("${P[@]}" exec "$a" ip route)"; then fail "$net: the container got a default route"; fi
    "${P[@]}" exec "$a" ping -c 2 -W 2 "$ipb" >/dev/null || fail "$net: $a cannot ping $b"
    "${P[@]}" exec "$b" ping -c 2 -W 2 "$ipa" >/dev/null || fail "$net: $b cannot ping $a"
    [ -f "$W/ipam/$net/$ipa" ] && [ -f "$W/ipam/$net/$ipb" ] || fail "$net: no reservation files for $ipa $ipb"
    if [ "$net" = "$NET_VW" ]; then
      grep -q "dev $VPFX" <<<"$(ip -n "$HP" -4 route show "$ipa")" || fail "$net: no host route to $ipa"
    fi
    "${P[@]}" stop -t 0 "$a" "$b" >/dev/null
    "${P[@]}" rm "$a" "$b" >/dev/null
    assert_released "$net" "ip netns exec $HP"
    if ls /var/lib/cni/results/"$net"-* >/dev/null 2>&1; then fail "$net: podman's cache entries left"; fi
  done
  podman_default_network
}

# podman's own network config (what `podman network create` writes: the chain of its default network),
# every plugin of it ours: a published port reached from the host namespace, nothing left after rm.
podman_default_network() {
  local conf types ip body left
  log "podman: $NET_PD (podman network create: bridge + portmap + firewall + tuning)"
  "${P[@]}" network create --subnet "$SUB_PD.0/24" "$NET_PD" >/dev/null || { fail "$NET_PD: network create"; return; }
  conf="$W/net.d/$NET_PD.conflist"
  [ -f "$conf" ] || { fail "$NET_PD: podman wrote no $conf"; return; }
  types=$(grep -o '"type": *"[a-z-]*"' "$conf" | sed 's/.*"\([a-z-]*\)"$/\1/' | tr '\n' ' ')
  [ "$types" = "bridge host-local portmap firewall tuning " ] || fail "$NET_PD: unexpected chain: $types"
  local rules_before; rules_before=$(ip netns exec "$HP" nft list ruleset)
  "${P[@]}" run -d --name "$NET_PD-web" --network "$NET_PD" -p 18080:80 --rootfs "$W/rootfs" \
    /bin/httpd -f -p 80 -h /www >/dev/null || { fail "$NET_PD: podman run -p"; return; }
  ip=$("${P[@]}" inspect -f "{{(index .NetworkSettings.Networks \"$NET_PD\").IPAddress}}" "$NET_PD-web")
  echo "   $NET_PD-web=$ip"
  in_subnet "$ip" "$SUB_PD" || fail "$NET_PD: address '$ip' not in $SUB_PD.0/24"
  for dst in 192.0.2.1 127.0.0.1; do
    body=""
    for _ in 1 2 3 4 5; do
      # busybox's nc (busybox-static's wget crashes here); the body is the last line of the answer.
      body=$(printf 'GET / HTTP/1.0\r\n\r\n' | ip netns exec "$HP" busybox nc -w 2 "$dst" 18080 2>/dev/null |
        tail -n 1 || true)
      [ -n "$body" ] && break
      sleep 1
    done
    [ "$body" = "netiface-e2e-$T" ] || fail "$NET_PD: http://$dst:18080/ from the host namespace: '$body'"
  done
  if [ "$failures" -ne 0 ]; then  # what a reader of the log needs to see why
    cat "$conf"; "${P[@]}" logs "$NET_PD-web" 2>&1 | tail -5; ip netns exec "$HP" nft list ruleset
    "${P[@]}" ps -a; "${P[@]}" exec "$NET_PD-web" netstat -ltn
  fi
  # Read once, then searched: `nft ... | grep -q` fails under pipefail whenever grep quits before nft has
  # written everything (SIGPIPE), which a long ruleset makes likely.
  local rules; rules=$(ip netns exec "$HP" nft list ruleset)
  grep -q "netiface-firewall:$NET_PD:" <<<"$rules" || fail "$NET_PD: no firewall rules"
  grep -q "netiface-portmap:$NET_PD:" <<<"$rules" || fail "$NET_PD: no port mapping"
  "${P[@]}" stop -t 0 "$NET_PD-web" >/dev/null
  "${P[@]}" rm "$NET_PD-web" >/dev/null
  [ "$(ip netns exec "$HP" nft list ruleset)" = "$rules_before" ] ||
    fail "$NET_PD: nft rules left: $(ip netns exec "$HP" nft list ruleset)"
  left=$(ip netns exec "$HP" tc qdisc show | grep -v -e 'qdisc noqueue' -e 'qdisc noop' || true)
  [ -z "$left" ] || fail "$NET_PD: qdiscs left: $left"
  left=$(ls -A /var/lib/cni/networks/"$NET_PD" 2>/dev/null | grep -v -e '^last_reserved_ip' -e '^lock$' -e '^\.' || true)
  [ -z "$left" ] || fail "$NET_PD: reservations left: $left"
  if ls /var/lib/cni/results/"$NET_PD"-* >/dev/null 2>&1; then fail "$NET_PD: podman's cache entries left"; fi
  "${P[@]}" network rm "$NET_PD" >/dev/null || fail "$NET_PD: network rm"
}

# --- phase netiface ------------------------------------------------------------------------------
netiface_cleanup() {
  set +e
  for ns in "$P1" "$P2" "$H"; do ip netns del "$ns" 2>/dev/null; done
}

phase_netiface() {
  trap 'netiface_cleanup; rm -rf "$W"' EXIT
  make_node "$H"
  ip netns add "$P1"
  ip netns add "$P2"
  local hx="ip netns exec $H"
  local net ipa ipb out p
  for net in "$NET_VW" "$NET_FL" "$NET_BR"; do
    log "netiface: $net"
    for p in "$P1" "$P2"; do
      out=$(ni add "$net" "/run/netns/$p") || { fail "$net: netiface add $p"; continue 2; }
      grep -q '"cniVersion": "1.1.0"' <<<"$out" || fail "$net: result is not at 1.1.0"
    done
    ipa=$(ip netns exec "$P1" ip -4 -o addr show dev eth0 | awk '{print $4}' | cut -d/ -f1)
    ipb=$(ip netns exec "$P2" ip -4 -o addr show dev eth0 | awk '{print $4}' | cut -d/ -f1)
    echo "   $P1=$ipa $P2=$ipb"
    in_subnet "$ipa" "$(subnet_of "$net")" && in_subnet "$ipb" "$(subnet_of "$net")" ||
      fail "$net: addresses '$ipa' '$ipb' not in $(subnet_of "$net").0/24"
    if grep -q '^default' <<<"$(ip netns exec "$P1" ip route)"; then fail "$net: the pod got a default route"; fi
    for p in "$P1" "$P2"; do ni check "$net" "/run/netns/$p" || fail "$net: netiface check $p"; done
    ni status "$net" || fail "$net: netiface status"
    ip netns exec "$P1" ping -c 2 -W 2 "$ipb" >/dev/null || fail "$net: $P1 cannot ping $P2"
    ip netns exec "$P2" ping -c 2 -W 2 "$ipa" >/dev/null || fail "$net: $P2 cannot ping $P1"
    # GC keeps P1 and removes P2 (stale); DEL removes P1.
    ni gc "$net" "/run/netns/$P1" || fail "$net: netiface gc"
    if ip netns exec "$P2" ip link show eth0 >/dev/null 2>&1; then fail "$net: gc left $P2's eth0"; fi
    ip netns exec "$P1" ip link show eth0 >/dev/null 2>&1 || fail "$net: gc removed $P1's eth0"
    ni del "$net" "/run/netns/$P1" || fail "$net: netiface del"
    if ip netns exec "$P1" ip link show eth0 >/dev/null 2>&1; then fail "$net: del left $P1's eth0"; fi
    assert_released "$net" "$hx"
    [ -z "$(ls -A "$W/cache/results" 2>/dev/null)" ] || fail "$net: cache entries left: $(ls "$W/cache/results")"
  done
}

# netiface CMD ARGS... in the throw-away host namespace, on our conflists and plugins.
ni() {
  local extra=(--conf-dir "$W/net.d" --cni-path "$BIN")
  [ "$1" = status ] || extra+=(--cache-dir "$W/cache")
  nsenter "--net=/run/netns/$H" -- "$BIN/netiface" "$@" "${extra[@]}"
}

# --- main ----------------------------------------------------------------------------------------
for p in veth-workload flannel bridge host-local portmap firewall tuning netiface; do
  [ -x "$BIN/$p" ] || die "$BIN/$p is not built"
done
write_conflists
case $PHASE in
  podman) phase_podman ;;
  netiface) phase_netiface ;;
  all) rm -rf "$W"; rc=0
       bash "$0" netiface || rc=1
       bash "$0" podman || rc=1
       exit $rc ;;
  *) die "unknown phase $PHASE" ;;
esac
if [ "$failures" -ne 0 ]; then echo "$failures failure(s)"; exit 1; fi
echo "e2e $PHASE: passed"
