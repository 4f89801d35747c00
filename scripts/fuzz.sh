#!/usr/bin/env bash
# Builds the libFuzzer harnesses (tests/fuzz/*_fuzz.cc) in build-fuzz/ with clang-14, ASan and
# UBSan, then runs each for a number of runs or seconds, starting from its seed corpus
# (tests/fuzz/corpus/<name>/, read only: new inputs go to build-fuzz/fuzz-corpus/<name>/).
# Prints executions, executions/s and crashes per harness; a crash input is kept in
# build-fuzz/fuzz-crashes/<name>/. Exits 1 when any harness crashed.
#
#   scripts/fuzz.sh --seconds 60                 # every harness, 60 s each
#   scripts/fuzz.sh --runs 10000000 promql exposition
#   options: --build-dir DIR (build-fuzz), --jobs N (ninja -j and harnesses at once, 2),
#            --no-build,
#            --sanitize LIST (address,undefined; "undefined" builds in build-fuzz-undefined/,
#            1.3-2.6x the inputs per second, for long campaigns; CI replays each corpus
#            under ASan),
#            --timeout S (one input running longer is a finding, and one slower than that is
#            written as a slow unit; 10. libFuzzer times inputs by the wall clock: a niced
#            fuzzer beside other work needs a long one, e.g. 300)
set -euo pipefail

src="$(cd "$(dirname "$0")/.." && pwd)"
build=""
sanitize=address,undefined
limit=(-max_total_time=60)
wall=()  # with --seconds: a wall-clock bound on the whole fuzzer process
jobs=2
timeout=10
do_build=1
names=()
while (($#)); do
  case "$1" in
    --runs) limit=(-runs="$2"); shift 2 ;;
    --seconds) limit=(-max_total_time="$2"); wall=(timeout -k 10 $(($2 + 180))); shift 2 ;;
    --build-dir) build="$(realpath -m "$2")"; shift 2 ;;
    --jobs) jobs="$2"; shift 2 ;;
    --sanitize) sanitize="$2"; shift 2 ;;
    --no-build) do_build=0; shift ;;
    --timeout) timeout="$2"; shift 2 ;;
    -h|--help) sed -n '2,17p' "$0"; exit 0 ;;
    -*) echo "fuzz.sh: unknown option $1" >&2; exit 2 ;;
    *) names+=("${1%_fuzz}"); shift ;;
  esac
done
if [[ -z "$build" ]]; then
  build="$src/build-fuzz"
  [[ "$sanitize" != address,undefined ]] && build="$src/build-fuzz-${sanitize//,/-}"
fi
if ((${#names[@]} == 0)); then
  for f in "$src"/tests/fuzz/*_fuzz.cc; do
    n="$(basename "$f" .cc)"
    names+=("${n%_fuzz}")
  done
fi

if ((do_build)); then
  cmake -S "$src" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DAISCALE_FUZZ=ON \
    -DAISCALE_FUZZ_SANITIZE="$sanitize" -DCMAKE_CXX_COMPILER=clang++-14 >/dev/null
  ninja -C "$build" -j"$jobs" "${names[@]/%/_fuzz}"
fi

# fuzz_one NAME: runs one harness; writes its table row to fuzz-logs/NAME.row and exits 1 when
# it found something.
fuzz_one() {
  local n=$1 bin="$build/${1}_fuzz" work="$build/fuzz-corpus/$1" crashes="$build/fuzz-crashes/$1"
  local log="$build/fuzz-logs/$1.log" seeds=() before rc execs rate found
  mkdir -p "$work" "$crashes" "$(dirname "$log")"
  [[ -d "$src/tests/fuzz/corpus/$n" ]] && seeds=("$src/tests/fuzz/corpus/$n")
  before=$(find "$crashes" -type f | wc -l)
  # Two settings for speed, each found with perf on a long controller_config run and measured
  # side by side. Entropic scheduling keeps 20 rarest features, not libFuzzer's 100
  # (InputCorpus::UpdateFeatureFrequency, a linear search of that list per feature per input,
  # was 40% of the time; 1,996 inputs/s against 1,110). And unless the caller set ASan's
  # options (sanitize.sh does, for CI's short runs), no allocation stacks are recorded
  # (unwinding and storing one per malloc was 43%; 991 inputs/s against 628); a finding's input
  # is replayed with full stacks by running the harness on it (or <name>_fuzz_replay).
  # A fuzzer that stops answering after a finding (seen: an out-of-memory report whose heap
  # profile ran for minutes under ASan at -O0) is killed; that counts as a finding too.
  ASAN_OPTIONS="${ASAN_OPTIONS:-malloc_context_size=0}" \
    "${wall[@]}" "$bin" "${limit[@]}" -timeout="$timeout" -report_slow_units="$timeout" \
    -rss_limit_mb=2048 -print_final_stats=1 -entropic_number_of_rarest_features=20 \
    -artifact_prefix="$crashes/" "$work" "${seeds[@]}" >"$log" 2>&1
  rc=$?
  execs=$(grep -ao 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' || true)
  rate=$(grep -ao 'stat::average_exec_per_sec: *[0-9]*' "$log" | grep -o '[0-9]*$' || true)
  found=$(($(find "$crashes" -type f | wc -l) - before))
  if ((rc != 0 && found == 0)); then found=1; fi  # died without leaving an artifact
  printf '%-20s %14s %10s %8s %8s\n' "$n" "${execs:-?}" "${rate:-?}" \
    "$(find "$work" -type f | wc -l)" "$found" >"$build/fuzz-logs/$n.row"
  ((rc != 0)) && echo "  see $log and $crashes/" >&2
  ((found == 0))
}

# Up to --jobs harnesses at once: each fuzzer is one process on one core.
mkdir -p "$build/fuzz-logs"
rm -f "$build"/fuzz-logs/*.row
set +e
running=0
failed=0
for n in "${names[@]}"; do
  if ((running >= jobs)); then
    wait -n || failed=1
    running=$((running - 1))
  fi
  fuzz_one "$n" &
  running=$((running + 1))
done
for pid in $(jobs -p); do wait "$pid" || failed=1; done
set -e
printf '%-20s %14s %10s %8s %8s\n' harness executions exec/s corpus crashes
for n in "${names[@]}"; do
  cat "$build/fuzz-logs/$n.row" 2>/dev/null || { echo "$n: no result"; failed=1; }
done
exit "$failed"
