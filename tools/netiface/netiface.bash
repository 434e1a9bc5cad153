# bash completion for netiface(1): subcommands, their options, and network names from the configuration
# folder (--conf-dir, else $NETCONFPATH, else /etc/cni/net.d). tests/docs/man_pages_test.sh checks that
# every option here is one `netiface --help` lists.
_netiface_networks() {
  local dir=${NETCONFPATH:-/etc/cni/net.d} i
  for ((i = 1; i < COMP_CWORD; i++)); do
    [[ ${COMP_WORDS[i]} == --conf-dir ]] && dir=${COMP_WORDS[i + 1]}
  done
  local f
  for f in "$dir"/*.conflist "$dir"/*.conf "$dir"/*.json; do
    [[ -f $f ]] || continue
    sed -n 's/^[[:space:]]*"name"[[:space:]]*:[[:space:]]*"\([^"]*\)".*/\1/p' "$f" | head -1
  done
}

_netiface() {
  local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD - 1]}
  local verbs="add check del gc ls status ipam leases"
  local common="--conf-dir --cni-path --cache-dir --ifname --container-id --args --cap-args --publish
    --ingress-rate --ingress-burst --egress-rate --egress-burst --mac --ip --help"
  local verb="" i nonopt=0
  for ((i = 1; i < COMP_CWORD; i++)); do
    case ${COMP_WORDS[i]} in
      --log-level) ((i++)) ;;
      -*) ;;
      *) if [[ -z $verb ]]; then verb=${COMP_WORDS[i]}; else ((nonopt++)); fi ;;
    esac
  done
  case $prev in
    --log-level) COMPREPLY=($(compgen -W "debug info warning error none" -- "$cur")); return ;;
    --conf-dir | --cache-dir | --data-dir) COMPREPLY=($(compgen -d -- "$cur")); return ;;
    --valid-file | --etcd-cafile | --etcd-certfile | --etcd-keyfile) COMPREPLY=($(compgen -f -- "$cur")); return ;;
  esac
  local opts
  case $verb in
    "") COMPREPLY=($(compgen -W "$verbs --log-level --version --help" -- "$cur")); return ;;
    add | check | del) opts=$common ;;
    gc) opts="$common --valid --valid-file --live --all-stale --dry-run" ;;
    status) opts="--conf-dir --cni-path --help" ;;
    ls) opts="--cache-dir --json --help" ;;
    ipam) if [[ $nonopt -eq 0 ]]; then COMPREPLY=($(compgen -W "ls" -- "$cur")); return; fi
      opts="--data-dir --conf-dir --json --help" ;;
    leases) opts="--etcd-endpoints --etcd-prefix --etcd-cafile --etcd-certfile --etcd-keyfile --json --help" ;;
  esac
  if [[ $cur == -* ]]; then
    COMPREPLY=($(compgen -W "$opts" -- "$cur"))
  elif [[ $verb != leases && ($nonopt -eq 0 || ($verb == ipam && $nonopt -eq 1)) ]]; then
    COMPREPLY=($(compgen -W "$(_netiface_networks)" -- "$cur"))
  elif [[ $verb =~ ^(add|check|del|gc)$ ]]; then
    COMPREPLY=($(compgen -f -- "$cur"))  # NETNS: a path, e.g. /run/netns/x
  fi
}
complete -F _netiface netiface
