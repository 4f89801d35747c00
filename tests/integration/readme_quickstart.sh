#!/bin/bash
# The README's live quick start, run as written (issue 25 §5): the commands are taken from the
# README itself (the ```sh block between the <!-- quickstart --> markers) and run from the
# repository root, as a user would type them. Only the environment differs: this build's
# binary (AISCALE), free ports (QUICKSTART_PORTS) and a private work dir (QUICKSTART_DIR), which
# scripts/quickstart.sh reads. Asserts the block is there and runs, that chat scaled up to at
# least 3 replicas under the load and back down after it, that 95% or more of the requests
# were answered, and that more than one replica answered them (the load reaches every replica).
# Usage: readme_quickstart.sh <aiscale binary> <source dir>
set -u
aiscale=${1:?aiscale binary}
src=${2:-$(cd "$(dirname "$0")/../.." && pwd)}
if [ ! -x /usr/bin/prometheus ]; then
  echo "SKIP: /usr/bin/prometheus is not installed"
  exit 0
fi
# shellcheck source=tests/integration/lib/common.sh
source "$src/tests/integration/lib/common.sh"
itest_init

# The README's block: the lines inside the fence after the marker, comments and blanks dropped.
commands=$(awk '/<!-- quickstart/ {on = 1; next} /<!-- \/quickstart -->/ {on = 0}
                on && /^```/ {fence = !fence; next} on && fence' "$src/README.md" |
  sed -e 's/[[:space:]]*#.*$//' -e '/^[[:space:]]*$/d')
check "the README has a quick start block" test -n "$commands"
echo "README quick start commands:"
printf '  %s\n' "$commands"

read -r api prom lb <<<"$(free_ports 3)"
chat=$(port_block 4)
embed=$(port_block 3)
while [ "$embed" -le $((chat + 4)) ] && [ "$embed" -ge $((chat - 3)) ]; do embed=$(port_block 3); done
log=$ITEST_TMP/quickstart.log
(
  cd "$src" &&
    AISCALE=$aiscale QUICKSTART_DIR=$ITEST_TMP/qs \
      QUICKSTART_PORTS="$api $prom $chat $embed $lb" bash -euo pipefail -c "$commands"
) >"$log" 2>&1
rc=$?
cat "$log"
check "the commands exit 0" test "$rc" = 0
summary=$(grep -o 'summary: chat scaled 1 -> [0-9]* -> [0-9]* replicas; [0-9]* of [0-9]* requests answered OK, by [0-9]* different replicas' "$log" | tail -1)
read -r up down ok sent by <<<"$(sed -E 's/.*-> ([0-9]+) -> ([0-9]+) replicas; ([0-9]+) of ([0-9]+) .* by ([0-9]+) .*/\1 \2 \3 \4 \5/' <<<"$summary")"
check "a summary line ($summary)" test -n "$summary"
check "chat scaled up to 3 or more replicas (${up:-?})" test "${up:-0}" -ge 3
check "chat scaled back down (${down:-?} < ${up:-?})" test "${down:-9}" -lt "${up:-0}"
check "95% or more answered (${ok:-?} of ${sent:-?})" test $((${ok:-0} * 100)) -ge $((${sent:-1} * 95))
check "more than one replica answered (${by:-?})" test "${by:-0}" -ge 2
check "nothing left running" itest_assert_no_leftovers
echo "readme_quickstart: $passed passed, $failed failed"
[ "$failed" = 0 ]
