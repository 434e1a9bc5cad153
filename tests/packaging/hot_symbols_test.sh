#!/usr/bin/env bash
# netiface-cni is linked in the order of plugins/hot-symbols.txt (lld's --symbol-ordering-file), and the
# list still names the image's functions: most of its names are in the image, they come first in the
# text, and together they fill that stretch of it. A list gone stale (renamed or new hot code) fails
# here: regenerate it with scripts/hot-symbols.sh.
#   bash tests/packaging/hot_symbols_test.sh BUILD_DIR SOURCE_DIR
set -euo pipefail
build=$1 src=$2
image=$build/bin/netiface-cni
[ -f "$image.debug" ] && image=$image.debug  # split debug info: the symbols are there
list=$src/plugins/hot-symbols.txt
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# Function symbols with sizes, by address, in decimal: "start size name".
nm -t d -S --defined-only --numeric-sort "$image" | awk 'NF == 4 && $3 ~ /^[tTwW]$/ {print $1, $2, $4}' > "$work/funcs"
text_start=$(readelf -SW "$image" | sed -n 's/.* \.text  *[A-Z]*  *\([0-9a-f]*\) .*/\1/p')
[ -n "$text_start" ] || { echo "FAIL: no .text in $image"; exit 1; }
text_start=$((16#$text_start))
awk -v list="$list" -v text_start="$text_start" '
  BEGIN { while ((getline s < list) > 0) { want[s] = 1; listed++ }; ts = text_start + 0 }
  { a = $1 + 0; n = $2 + 0; addr[NR] = a; size[NR] = n; name[NR] = $3
    if ($3 in want && !($3 in seen)) { seen[$3] = 1; found++; if (lo == "" || a < lo) lo = a; if (a + n > hi) hi = a + n } }
  END {
    if (found < 0.9 * listed) { printf "FAIL: %d of the %d listed names are in the image: regenerate the list\n", found, listed; exit 1 }
    if (lo - ts > 4096) { printf "FAIL: the listed functions start %d bytes into .text, not at its start\n", lo - ts; exit 1 }
    for (i = 1; i <= NR; i++) if (addr[i] >= lo && addr[i] < hi) { if (name[i] in want) inside += size[i]; else other += size[i] }
    span = hi - lo
    if (inside < 0.75 * span) { printf "FAIL: the listed functions fill %d of the %d bytes they span\n", inside, span; exit 1 }
    printf "ok: %d of %d listed names in the image, first in .text: %d kB, %d%% of it theirs (%d kB of other code)\n",
           found, listed, span / 1024, 100 * inside / span, other / 1024
  }' "$work/funcs"
