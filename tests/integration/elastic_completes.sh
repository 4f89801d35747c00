#!/bin/bash
# A training job that finishes (issue 27 §3): the torchrun job of elastic_torchrun.sh
# (examples/elastic/train.py, CPU/gloo, Debian's python3-torch), short enough to end, under
# aiscale's `training` policy on the local engine in torchrun mode (restart_policy OnFailure by
# default). Asserts, on outcomes (never on latency; every wait ends on progress stalling, not on
# a fixed time, so a busy machine only makes it slower):
#   1. the job trains and logs `done`; its agents exit 0 and are not started again: no `start`
#      after the `done`, no agent process left, while aiscale keeps ticking;
#   2. the decisions say so: the last ones have rule "completed", none after the done is
#      replace_failed_nodes or a rescale, and the API's workload view says state "completed";
#   3. `aiscale run --exit-when-done` on the same job (its checkpoint is final: it finishes at
#      once) exits 0 by itself once the job completed.
# Usage: elastic_completes.sh <aiscale binary> <source dir>
set -u
aiscale=${1:?aiscale binary}
src=${2:-$(cd "$(dirname "$0")/../.." && pwd)}
lib="$src/tests/integration/lib"
# shellcheck source=tests/integration/lib/common.sh
source "$lib/common.sh"
# shellcheck source=tests/integration/lib/elastic.sh
source "$lib/elastic.sh"
elastic_require_torch
itest_init
py=$ITEST_PY

base=$(port_block 3)
[ -n "$base" ] || itest_fail "no free port block"
work=$ITEST_TMP/job
events=$work/events.jsonl
api=http://127.0.0.1:$((base + 2))
# Short grace and warmup: were a finished job's exits taken for failures, the policy would ask
# for replacements within seconds.
elastic_config "$ITEST_TMP/aiscale.yaml" dir="$work" base="$base" name=elastic-done period=2s \
  window=8s min=1 max=2 id=done heartbeat=0 \
  policy='{name: training, reference_replicas: 2, rescales_per_hour: 60, rescale_burst: 3,
           min_dwell: 20s, restart_cost: 10s, warmup: 10s, grace_period: 6s}' \
  job="--epochs 2 --epoch-samples 2560 --batch 32 --load-s 1 --eval-batches 4 --ckpt-every 20" ||
  itest_fail "could not write the config"
itest_spawn aiscale "$aiscale" run -c "$ITEST_TMP/aiscale.yaml" --verbose
aiscale_pid=$ITEST_LAST_PID

# q EXPR: a Python expression over `ev` (the events, in order), `ds` (the stored decisions,
# oldest first, from the API) and `w` (the API's workload view); exit status 0 when truthy.
q() {
  curl -s -m 5 "$api/api/v1/workloads/elastic/decisions?limit=1000" >"$ITEST_TMP/ds.json" ||
    return 1
  curl -s -m 5 "$api/api/v1/workloads/elastic" >"$ITEST_TMP/w.json" || return 1
  "$py" - "$1" "$events" "$ITEST_TMP/ds.json" "$ITEST_TMP/w.json" <<'EOF'
import json, sys
ev = [json.loads(l) for l in open(sys.argv[2]) if l.strip()]
ds = sorted(json.load(open(sys.argv[3]))["decisions"], key=lambda d: d["t_s"])
w = json.load(open(sys.argv[4]))
done_t = next((e["t"] for e in ev if e["ev"] == "done"), None)
after = [d for d in ds if done_t is not None and d.get("wall_s", 0) > done_t]
v = eval(sys.argv[1])
if not isinstance(v, bool):
    print(v)
sys.exit(0 if v else 1)
EOF
}
# wait_progress STALL_S EXPR: waits for EXPR while the job makes progress; fails when the
# events log has not grown for STALL_S seconds (or aiscale died). A busy machine is slower, not
# a failure.
wait_progress() {
  local stall=$1 size=-1 since=$SECONDS now_size
  while ! q "$2" >/dev/null 2>&1; do
    pid_alive "$aiscale_pid" || return 1
    now_size=$(stat -c %s "$events" 2>/dev/null || echo 0)
    if [ "$now_size" != "$size" ]; then
      size=$now_size
      since=$SECONDS
    elif ((SECONDS - since > stall)); then
      return 1
    fi
    sleep 1
  done
}

# 1. Trains, finishes, and is not started again.
wait_progress 300 'any(e["ev"] == "done" for e in ev)' ||
  itest_fail "the job never finished ($(tail -n 2 "$events" 2>/dev/null))"
echo "the job finished: $(grep -c '"ev": "step"' "$events") steps"
wait_progress 120 'w.get("state") == "completed"' ||
  itest_fail "the API never said completed ($(q 'ds[-1]["rule"] + ": " + ds[-1]["reason"]'))"
# Five more ticks with nothing to do.
n0=$(q 'len(ds)')
wait_progress 120 "len(ds) >= $n0 + 5" || itest_fail "aiscale stopped ticking after the job completed"
check "no agent started after the job's done" q 'all(e["ev"] != "start" or e["t"] < done_t for e in ev)'
check "one done in the events log" q 'sum(1 for e in ev if e["ev"] == "done") == 1'
left=$(itest_leftovers | grep -vx "$aiscale_pid" | tr '\n' ' ')
check "no agent or worker runs after the job completed (${left:-none})" test -z "$left"
check "the last decisions say completed" q 'all(d["rule"] == "completed" for d in ds[-3:])'
check "no replacement and no rescale decided after the done" \
  q 'all(d["rule"] != "replace_failed_nodes" and d["action"] == "none" for d in after)'
check "the API's workload view says state completed" q 'w["state"] == "completed"'
q 'ds[-1]["reason"]'
itest_stop_pid "$aiscale_pid" 90

# 3. Batch use: the job is rerun from its final checkpoint; aiscale exits 0 by itself.
: >"$ITEST_TMP/batch.log"
"$aiscale" run -c "$ITEST_TMP/aiscale.yaml" --exit-when-done >"$ITEST_TMP/batch.log" 2>&1 &
batch_pid=$!
itest_track "$batch_pid"
size=-1
since=$SECONDS
while pid_alive "$batch_pid"; do
  now_size=$(cat "$ITEST_TMP/batch.log" "$events" 2>/dev/null | wc -c)
  if [ "$now_size" != "$size" ]; then
    size=$now_size
    since=$SECONDS
  elif ((SECONDS - since > 300)); then
    itest_fail "aiscale run --exit-when-done did not exit ($(tail -n 3 "$ITEST_TMP/batch.log"))"
  fi
  sleep 1
done
wait "$batch_pid"
rc=$?
check "aiscale run --exit-when-done exited 0 by itself" test "$rc" -eq 0
check "it said why" grep -q "every workload completed; stopping (--exit-when-done)" "$ITEST_TMP/batch.log"
check "the rerun finished from the final checkpoint" test "$(grep -c '"ev": "done"' "$events")" -eq 2
left=$(itest_leftovers | tr '\n' ' ')
check "nothing left running (${left:-none})" test -z "$left"

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ] || itest_fail "$failed check(s) failed"
