#!/bin/bash
# A training job that finishes on Slurm (issue 27 §3): the torchrun job of elastic_slurm.sh
# (examples/elastic/train.py as one batch job per agent on a real slurmctld + 2 slurmd on this
# host, lib/slurm.sh), short enough to end, under `aiscale run --exit-when-done` with the
# `training` policy (torchrun mode: restart_policy OnFailure by default). Asserts, on outcomes:
#   1. aiscale exits 0 by itself once the job finished (its agents' jobs ended COMPLETED);
#   2. nothing was submitted again: no `start` after the job's `done`, no job of the workload
#      pending or running, one `done`;
#   3. its decisions said so: the last has rule "completed", none after the done is a
#      replacement or a rescale.
# Every wait ends on the job's progress stalling (elastic_wait), not at a fixed time. Skips
# (exit 0 with a message) without torch or Slurm.
# Usage: elastic_slurm_completes.sh <aiscale binary> <source dir>
set -u
aiscale=${1:?aiscale binary}
src=${2:-$(cd "$(dirname "$0")/../.." && pwd)}
lib="$src/tests/integration/lib"
# shellcheck source=tests/integration/lib/slurm.sh
source "$lib/slurm.sh"
# shellcheck source=tests/integration/lib/elastic.sh
source "$lib/elastic.sh"
elastic_require_torch
slurm_itest 2
py=$ITEST_PY
base=$(port_block 3)
[ -n "$base" ] || itest_fail "no free port block"
work=$ITEST_TMP/job
events=$work/events.jsonl
log=$ITEST_TMP/aiscale.log
elastic_config "$ITEST_TMP/aiscale.yaml" dir="$work" base="$base" name=elastic-slurm-done \
  engine=slurm period=2s window=8s min=1 max=2 id=slurmdone heartbeat=0 \
  policy='{name: training, reference_replicas: 2, rescales_per_hour: 60, rescale_burst: 3,
           min_dwell: 20s, restart_cost: 10s, warmup: 10s, grace_period: 6s}' \
  job="--epochs 2 --epoch-samples 2560 --batch 32 --load-s 1 --eval-batches 4 --ckpt-every 20" ||
  itest_fail "could not write the config"
itest_spawn aiscale "$aiscale" run -c "$ITEST_TMP/aiscale.yaml" --exit-when-done --verbose
aiscale_pid=$ITEST_LAST_PID

# 1. aiscale exits by itself once the job is done (bounded by the job's progress).
exited() { ! pid_alive "$aiscale_pid"; }
elastic_wait "$events" 300 1800 $$ exited ||
  itest_fail "aiscale run --exit-when-done did not exit ($(tail -n 2 "$events" 2>/dev/null))"
wait "$aiscale_pid"
rc=$?
check "aiscale run --exit-when-done exited 0 by itself" test "$rc" -eq 0
check "it said why" grep -q "every workload completed; stopping (--exit-when-done)" "$log"

# 2. Nothing submitted again.
summary() { "$py" "$ITEST_TOOLS/elastic_events.py" --events "$events" --log "$log" --workload elastic; }
q() {
  summary >"$ITEST_TMP/summary.json" 2>/dev/null || return 1
  "$py" - "$1" "$ITEST_TMP/summary.json" "$events" <<'EOF'
import json, sys
s = json.load(open(sys.argv[2]))
ev = [json.loads(l) for l in open(sys.argv[3]) if l.strip()]
done_t = next((e["t"] for e in ev if e["ev"] == "done"), None)
sys.exit(0 if eval(sys.argv[1]) else 1)
EOF
}
check "the job finished (one done)" q 'sum(1 for e in ev if e["ev"] == "done") == 1'
check "no agent started after the done" q 'all(e["ev"] != "start" or e["t"] < done_t for e in ev)'
check "no job of the workload pending or running" test -z "$(slurm_active_jobs aiscale-elastic)"

# 3. The decisions (aiscale run --verbose logs every one).
last=$(grep "^aiscale: elastic " "$log" | tail -n 1)
check "the last decision says completed ($last)" grep -q "\[completed\]" <<<"$last"
check "its reason is the engine's: a job COMPLETED" grep -q "COMPLETED (exit 0)" <<<"$last"
done_t=$("$py" -c 'import json,sys; print(next(json.loads(l)["t"] for l in open(sys.argv[1]) if "\"done\"" in l))' "$events")
check "no replacement or rescale decided after the done" "$py" - "$log" "$done_t" <<'EOF'
import datetime, re, sys
pat = re.compile(r"^aiscale: elastic (\S+Z) .*\[(\S+)\].*action=(\w+)")
bad = []
for line in open(sys.argv[1], errors="replace"):
    m = pat.match(line)
    if not m:
        continue
    t = datetime.datetime.strptime(m.group(1), "%Y-%m-%dT%H:%M:%S.%fZ").replace(
        tzinfo=datetime.timezone.utc).timestamp()
    if t > float(sys.argv[2]) and (m.group(2) == "replace_failed_nodes" or m.group(3) != "none"):
        bad.append(line.strip())
print("\n".join(bad[:3]))
sys.exit(1 if bad else 0)
EOF

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ] || itest_fail "$failed check(s) failed"
