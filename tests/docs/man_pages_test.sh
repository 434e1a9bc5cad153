#!/usr/bin/env bash
# The man pages, the CLI's bash completion and the READMEs against the real executables:
#   - every option of `netiface --help` (and of each subcommand's) is in netiface.1.md and in the completion,
#     and every option the completion offers is one netiface has;
#   - every option of `netiface-agent --help` is in netiface-agent.8.md;
#   - every key of a plugin's README key table is in its rendered page netiface-<plugin>(8);
#   - every page names the version the executables report.
# Usage: man_pages_test.sh BUILD_DIR SOURCE_DIR
set -euo pipefail
build=$1 src=$2
bin=$build/bin man=$build/man
fail=0
err() { echo "FAIL: $*" >&2; fail=1; }
# has LIST WORD: LIST (one word per line) holds WORD. A here-string, not `echo | grep -q`: under pipefail
# grep quitting at the first match can kill the writer by SIGPIPE and turn a match into a failure.
has() { grep -qx -- "$2" <<<"$1"; }

[ -d "$man" ] || { echo "no $man: go-md2man missing at configure time" >&2; exit 1; }

options_of() { "$@" --help 2>&1 | grep -oE '(^|[ ,])--[a-z][a-z0-9-]*' | sed 's/^[ ,]*//' | sort -u; }

cli_opts=$( (options_of "$bin/netiface"
  for v in add check del gc ls status ipam leases; do options_of "$bin/netiface" "$v"; done
  options_of "$bin/netiface" ipam ls) | sort -u)
[ "$(echo "$cli_opts" | wc -l)" -ge 25 ] || err "netiface --help lists only $(echo "$cli_opts" | wc -l) options"
completion=$src/tools/netiface/netiface.bash
for o in $cli_opts; do
  grep -q -- "\*\*$o\*\*" "$src/tools/netiface/netiface.1.md" || err "netiface.1.md does not document $o"
  [ "$o" = --version ] || grep -qw -- "$o" "$completion" || err "the bash completion does not offer $o"
done
for o in $(grep -oE -- '--[a-z][a-z0-9-]*' "$completion" | sort -u); do
  has "$cli_opts" "$o" || err "the bash completion offers $o, which netiface does not have"
done

# The CLI README's option table names options netiface has, and all of them.
readme_opts=$(grep -E '^\| `-' "$src/tools/netiface/README.md" | cut -d'|' -f2 | grep -oE -- '--[a-z][a-z0-9-]*' | sort -u)
for o in $readme_opts; do
  has "$cli_opts" "$o" || err "tools/netiface/README.md documents $o, which netiface does not have"
done
for o in $cli_opts; do
  case $o in --help | --version) continue ;; esac
  has "$readme_opts" "$o" || err "tools/netiface/README.md's option table lacks $o"
done

agent_opts=$(options_of "$bin/netiface-agent")
[ "$(echo "$agent_opts" | wc -l)" -ge 15 ] || err "netiface-agent --help lists too few options"
agent_readme=$(grep -E '^\| `--' "$src/agent/README.md" | cut -d'|' -f2 | grep -oE -- '--[a-z][a-z0-9-]*' | sort -u)
for o in $agent_opts; do
  grep -q -- "\*\*$o\*\*" "$src/agent/netiface-agent.8.md" || err "netiface-agent.8.md does not document $o"
  case $o in --help | --version) continue ;; esac
  has "$agent_readme" "$o" || err "agent/README.md's flag table lacks $o"
done
for o in $agent_readme; do
  has "$agent_opts" "$o" || err "agent/README.md documents $o, which netiface-agent does not have"
done

version=$("$bin/netiface" --version | awk '{print $2}')
for page in "$man"/*.[18]; do
  grep -q "netiface $version" "$page" || err "$(basename "$page") does not name version $version"
done
for readme in "$src"/plugins/*/README.md; do
  plugin=$(basename "$(dirname "$readme")")
  page=$man/netiface-$plugin.8
  [ -f "$page" ] || { err "no man page for $plugin"; continue; }
  [ -f "$page.gz" ] || err "no $page.gz"
  text=$(sed 's/\\-/-/g; s/\\&//g' "$page")
  keys=$(awk '/^\| key \|/{t=1;next} t&&/^\|---/{next} t&&/^\|/{split($0,a,"|"); print a[2]; next} {t=0}' "$readme" |
    grep -oE '`[A-Za-z][A-Za-z0-9_./-]*`' | tr -d '`' | sort -u)
  [ -n "$keys" ] || err "$readme: no key table"
  for k in $keys; do
    grep -qF -- "$k" <<<"$text" || err "netiface-$plugin.8 lacks the README key $k"
  done
  # The banner (no CNI_COMMAND) and --version of the plugin carry the same version.
  grep -qx "$plugin $version (.*)" <<<"$("$bin/$plugin" --version)" || err "$plugin --version"
  grep -q "version $version" <<<"$(env -i "$bin/$plugin" 2>&1)" || err "$plugin banner lacks the version"
done
[ $fail -eq 0 ] && echo "man pages, completion and READMEs agree ($(echo "$cli_opts" | wc -l) CLI options, $(echo "$agent_opts" | wc -l) agent options, $(ls "$man"/*.[18] | wc -l) pages)"
exit $fail
