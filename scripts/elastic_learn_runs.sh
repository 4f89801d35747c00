#!/bin/bash
# Repeats tests/integration/elastic_learn.sh and counts size revisits (issue 27 §1 target: 0
# across 20 runs on a busy machine). Optionally keeps both cores busy with CPU hogs at normal
# priority for the whole time, as CI's busy tier does; they are stopped by PID at the end.
#
#   scripts/elastic_learn_runs.sh [-n RUNS] [-k HOGS] [-H HOLD_S] [-o DIR] [AISCALE] [SOURCE_DIR]
#     -n RUNS    runs (default 20)
#     -k HOGS    CPU hogs beside the runs (default 2: one per core here; 0: none)
#     -H HOLD_S  seconds each run watches after the policy's verdict (ELASTIC_LEARN_HOLD_S,
#                default 180)
#     -o DIR     where each run's output goes (default: a new directory under /tmp)
#
# Prints one line per run (pass/fail, revisits, 2 and 3 agents' throughput as first judged) and
# the totals; exit status 0 when every run passed with 0 revisits.
set -u
runs=20
hogs=2
hold=180
out=""
while getopts "n:k:H:o:" opt; do
  case $opt in
    n) runs=$OPTARG ;;
    k) hogs=$OPTARG ;;
    H) hold=$OPTARG ;;
    o) out=$OPTARG ;;
    *) exit 2 ;;
  esac
done
shift $((OPTIND - 1))
src=${2:-$(cd "$(dirname "$0")/.." && pwd)}
aiscale=${1:-$src/build/aiscale}
[ -x "$aiscale" ] || { echo "no aiscale binary at $aiscale" >&2; exit 2; }
out=${out:-$(mktemp -d /tmp/elastic-learn-runs.XXXXXX)}
mkdir -p "$out"

hog_pids=()
stop_hogs() {
  local p
  for p in "${hog_pids[@]}"; do kill "$p" 2>/dev/null; done
  for p in "${hog_pids[@]}"; do wait "$p" 2>/dev/null; done
}
trap stop_hogs EXIT
for ((i = 0; i < hogs; i++)); do
  sh -c 'while :; do :; done' &
  hog_pids+=($!)
done
echo "elastic_learn x$runs, $hogs CPU hog(s) (pids ${hog_pids[*]:-none}), hold $hold s; logs in $out"

passed=0
total_revisits=0
for ((r = 1; r <= runs; r++)); do
  log=$out/run-$r.log
  start=$SECONDS
  ELASTIC_LEARN_HOLD_S=$hold bash "$src/tests/integration/elastic_learn.sh" "$aiscale" "$src" \
    >"$log" 2>&1
  rc=$?
  n=$(sed -n 's/^revisits: \([0-9-]*\).*/\1/p' "$log" | tail -n 1)
  seen=$(sed -n 's/^first judgement with data at 3: //p' "$log" | tail -n 1)
  [ "$rc" -eq 0 ] && passed=$((passed + 1))
  [ -n "$n" ] && total_revisits=$((total_revisits + n))
  printf 'run %2d: %s, revisits %s, %d s; %s\n' "$r" "$([ "$rc" -eq 0 ] && echo pass || echo FAIL)" \
    "${n:-?}" $((SECONDS - start)) "${seen:-no judgement}"
done
echo "passed $passed of $runs; revisits in all: $total_revisits"
[ "$passed" -eq "$runs" ] && [ "$total_revisits" -eq 0 ]
