# Shared by scripts/demo.sh and scripts/test.sh: install what is missing, configure and build.
# Sourced, not executed.

NETIFACE_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

# Debian 12 packages the build, the tests and the demo need.
NETIFACE_PACKAGES=(
  g++ cmake ninja-build pkg-config
  libnl-3-dev libnl-route-3-dev nlohmann-json3-dev libcli11-dev libspdlog-dev libfmt-dev
  libgtest-dev libgmock-dev libssl-dev libnftables-dev libcurl4-openssl-dev
  iproute2 iputils-ping util-linux procps nftables iptables
  containernetworking-plugins etcd-server etcd-client curl openssl
  clang-format clang-tidy clang libclang-rt-14-dev lld
  go-md2man dpkg-dev lintian binutils file
)

# Installs the packages that are not installed yet (apt-get update only when something is missing).
ensure_packages() {
  local missing=() p
  for p in "$@"; do
    [[ $(dpkg-query -W -f='${Status}' "$p" 2>/dev/null) == *"install ok installed"* ]] || missing+=("$p")
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  echo "== installing: ${missing[*]}" >&2
  if [ "$(id -u)" -ne 0 ]; then echo "need root to install ${missing[*]}" >&2; return 1; fi
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
}

# build_tree DIR [cmake args...]: configure (once) and build everything with both cores.
build_tree() {
  local dir=$1; shift
  cmake -S "$NETIFACE_ROOT" -B "$dir" -G Ninja "$@" >/dev/null
  cmake --build "$dir" -j"$(nproc)"
}
