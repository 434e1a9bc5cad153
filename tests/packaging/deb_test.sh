#!/usr/bin/env bash
# The .deb on this machine (root): install beside Debian's containernetworking-plugins, use, remove, and
# find the system as it was. Checks:
#   - dpkg -i of netiface and netiface-dbg succeeds with containernetworking-plugins installed, whose files
#     stay byte for byte what they were;
#   - the installed layout (plugins as links to one image in /usr/lib/netiface/cni, netiface in /usr/bin,
#     netiface-agent in /usr/sbin, the unit, man pages, completion, examples, docs), every executable
#     stripped with its .debug file in the -dbg package, dependencies computed (libc6, libcurl4) and the
#     dlopen'ed libnftables1 declared;
#   - the installed executables weigh at most a quarter of Debian's plugins;
#   - the installed host-local allocates, and a failing ADD is in the default log file with its container ID;
#   - dpkg -r (then -P) leaves /usr, /etc, /lib, /opt and /var/log as they were.
# Usage: deb_test.sh DEB_DIR   (scripts/package.sh builds them)
set -euo pipefail
debs=$1
[ "$(id -u)" -eq 0 ] || { echo "SKIP: needs root"; exit 0; }
main_deb=$(ls "$debs"/netiface_*.deb) dbg_deb=$(ls "$debs"/netiface-dbg_*.deb)
grep -q "install ok installed" <<<"$(dpkg-query -W -f='${Status}' containernetworking-plugins 2>/dev/null)" ||
  { echo "FAIL: containernetworking-plugins must be installed (the coexistence check)"; exit 1; }
if grep -q "ok installed" <<<"$(dpkg-query -W -f='${Status}' netiface 2>/dev/null)"; then
  echo "FAIL: netiface is already installed on this machine; not touching it"; exit 1
fi
work=$(mktemp -d /tmp/netiface-deb-XXXXXX)
log_existed=0
[ -e /var/log/netiface ] && log_existed=1
cleanup() {
  dpkg -P netiface-dbg netiface >/dev/null 2>&1 || true
  [ $log_existed -eq 1 ] || rm -rf /var/log/netiface
  rm -rf "$work"
}
trap cleanup EXIT
fail=0
err() { echo "FAIL: $*" >&2; fail=1; }

# /var/log/netiface is compared only when this test made it: an operator's log that was there grows by the
# test's own calls (the failed ADD below), which is the plugins' doing, not the package's; it must survive.
logs=/var/log/netiface
[ $log_existed -eq 0 ] || logs=
snapshot() {  # type, path, size, mode and link target of everything; not directory times
  {
    find /usr /etc /lib /opt $logs -xdev \( -path /usr/share/info/dir -o -path /etc/ld.so.cache \) -prune \
      -o -printf '%y %p %s %m %l\n' 2>/dev/null || true  # /var/log/netiface and /opt may not exist
  } | sort
}
snapshot >"$work/before"
ref_sum=$(find /usr/lib/cni -type f -exec sha256sum {} + | sort | sha256sum)

dpkg -i "$main_deb" "$dbg_deb" >"$work/dpkg-i.log" 2>&1 || { cat "$work/dpkg-i.log"; err "dpkg -i"; exit 1; }
[ "$(find /usr/lib/cni -type f -exec sha256sum {} + | sort | sha256sum)" = "$ref_sum" ] ||
  err "containernetworking-plugins' files changed"

cni=/usr/lib/netiface/cni
for p in bandwidth bridge firewall flannel host-local loopback portmap tuning veth-workload; do
  [ "$(readlink "$cni/$p")" = netiface-cni ] || err "$cni/$p is not a link to netiface-cni"
  grep -q "^$p " <<<"$("$cni/$p" --version)" || err "$cni/$p --version"
done
[ "$(readlink -f /usr/sbin/netiface-agent)" = /usr/bin/netiface ] || err "/usr/sbin/netiface-agent is not the netiface image"
grep -q '^netiface ' <<<"$(netiface --version)" || err "netiface --version"
grep -q '^netiface-agent ' <<<"$(netiface-agent --version)" || err "netiface-agent --version"
for f in /lib/systemd/system/netiface-agent.service /usr/share/man/man1/netiface.1.gz \
  /usr/share/man/man8/netiface-agent.8.gz /usr/share/man/man8/netiface-cni.8.gz /usr/share/man/man8/netiface-bridge.8.gz \
  /usr/share/bash-completion/completions/netiface /usr/share/doc/netiface/copyright \
  /usr/share/doc/netiface/examples/10-flannel.conflist /usr/share/doc/netiface/operations.md; do
  [ -e "$f" ] || err "not installed: $f"
done
grep -q '^ExecStart=/usr/sbin/netiface-agent' /lib/systemd/system/netiface-agent.service || err "the unit's ExecStart"
for exe in $cni/netiface-cni /usr/bin/netiface; do
  grep -q ', stripped' <<<"$(file -b "$exe")" || err "$exe is not stripped"
  dbg=/usr/lib/debug$exe.debug
  [ -f "$dbg" ] || { err "no $dbg"; continue; }
  grep -q '\.debug_info' <<<"$(readelf -S "$dbg" 2>/dev/null)" || err "$dbg holds no debug info"
  grep -q '^netiface-dbg:' <<<"$(dpkg -S "$dbg")" || err "$dbg is not in netiface-dbg"
done
depends=$(dpkg-query -W -f='${Depends}' netiface)
for d in libc6 libcurl4 libnftables1; do grep -q "$d" <<<"$depends" || err "Depends lacks $d: $depends"; done

ours=$(( $(stat -c %s $cni/netiface-cni) + $(stat -c %s /usr/bin/netiface) ))
ref=$(find /usr/lib/cni -type f -printf '%s\n' | awk '{s += $1} END {print s}')
echo "installed executables: $ours bytes; Debian's plugins: $ref bytes (ratio $(awk "BEGIN {printf \"%.3f\", $ours / $ref}"))"
[ $((ours * 4)) -le "$ref" ] || err "the executables weigh more than a quarter of Debian's plugins"

# The installed plugins work: host-local allocates; a failing ADD is in the default log file.
conf='{"cniVersion":"1.0.0","name":"debnet","type":"host-local","ipam":{"type":"host-local","dataDir":"'$work/ipam'","ranges":[[{"subnet":"10.251.0.0/24"}]]}}'
out=$(CNI_COMMAND=ADD CNI_CONTAINERID=deb-ctr-1 CNI_NETNS=/nonexistent CNI_IFNAME=eth0 CNI_PATH=$cni \
  $cni/host-local <<<"$conf")
grep -q '"10.251.0.2/24"' <<<"$out" || err "installed host-local ADD: $out"
bad='{"cniVersion":"1.0.0","name":"debnet","type":"host-local","ipam":{"type":"host-local","dataDir":"'$work/ipam'","ranges":[[{"subnet":"10.251.0.0/24","rangeStart":"10.9.9.9"}]]}}'
CNI_COMMAND=ADD CNI_CONTAINERID=deb-ctr-fails CNI_NETNS=/nonexistent CNI_IFNAME=eth0 CNI_PATH=$cni \
  $cni/host-local <<<"$bad" >/dev/null 2>&1 && err "the bad ADD succeeded"
grep -q "host-local ADD container=deb-ctr-fails ifname=eth0 network=debnet: ADD failed" /var/log/netiface/cni.log ||
  err "the failed ADD is not in /var/log/netiface/cni.log"
[ "$(stat -c %a /var/log/netiface/cni.log)" = 600 ] || err "cni.log is not 0600"
[ $log_existed -eq 1 ] || [ "$(stat -c %a /var/log/netiface)" = 700 ] || err "/var/log/netiface is not 0700"

dpkg -r netiface-dbg netiface >"$work/dpkg-r.log" 2>&1 || { cat "$work/dpkg-r.log"; err "dpkg -r"; }
[ $log_existed -eq 1 ] || rm -rf /var/log/netiface  # what this test's own calls wrote, not the package
[ $log_existed -eq 0 ] || [ -f /var/log/netiface/cni.log ] || err "dpkg -r removed the operator's /var/log/netiface"
snapshot >"$work/after"
if ! diff "$work/before" "$work/after" >"$work/diff"; then
  err "dpkg -r did not leave the system as it was:"; head -20 "$work/diff" >&2
fi
dpkg -P netiface-dbg netiface >/dev/null 2>&1 || true
[ $fail -eq 0 ] && echo "deb: installed beside containernetworking-plugins, used, removed: system as before"
exit $fail
