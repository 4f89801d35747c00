#!/bin/bash
# Elastic training on Slurm (issue 9 §3): the torchrun job of elastic_torchrun.sh
# (examples/elastic/train.py, CPU/gloo) run as one Slurm batch job per torchrun agent on a real
# slurmctld + 2 slurmd on this host (lib/slurm.sh), scaled by `aiscale run --once` with a
# static size (1, then 2, then 1; the jobs outlive each aiscale run, which finds them by tag).
# The batch script and config come from lib/elastic.sh (engine=slurm): replica 0 hosts the
# rendezvous ({rdzv_is_host}), a scale-down asks rank 0 for a checkpoint (pre_stop) before
# `scancel --signal=TERM`. Asserts, on outcomes:
#   1. one job, world size 1, from scratch;
#   2. 1 -> 2: two jobs RUNNING (replicas 0 and 1), the job resumes at world size 2 from its
#      checkpoint with 0 samples lost;
#   3. 2 -> 1: the pre-stop checkpoint is acknowledged, replica 1's job leaves the queue and
#      replica 0's (the rendezvous host) stays; the job resumes at world size 1 at exactly the
#      acknowledged step, 0 samples lost;
#   4. after the jobs are cancelled, no process is left.
# Skips (exit 0 with a message, as the other integration tests) without torch or Slurm.
# Usage: elastic_slurm.sh <aiscale binary> <source dir>
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
batch=32
ckpt_every=20

# once SIZE: one `aiscale run --once` at a static SIZE; it waits for a scale-down's stop.
once() {
  elastic_config "$ITEST_TMP/aiscale.yaml" dir="$work" base="$base" name=elastic-slurm \
    engine=slurm min=1 max=2 id=slurm policy="{name: static, replicas: $1}" \
    job="--epochs 50 --epoch-samples 40000 --batch $batch --load-s 2 --ckpt-every $ckpt_every" ||
    itest_fail "could not write the config"
  timeout 450 "$aiscale" run -c "$ITEST_TMP/aiscale.yaml" --once --verbose >>"$log" 2>&1 ||
    itest_fail "aiscale run --once at size $1 failed"
}
summary() {
  "$py" "$ITEST_TOOLS/elastic_events.py" --events "$events" --log "$log" --workload elastic
}
# q EXPR: a Python expression over the summary `s`; exit status 0 when truthy.
q() {
  summary >"$ITEST_TMP/summary.json" 2>/dev/null || return 1
  "$py" -c "import json,sys; s=json.load(open(sys.argv[1])); sys.exit(0 if ($1) else 1)" \
    "$ITEST_TMP/summary.json"
}
# wait_q CAP_S EXPR: until EXPR holds, while the job makes progress (5 minutes without a new
# event is a stall; a busy machine makes it slower, not failed), at most CAP_S seconds. The jobs
# outlive each aiscale run, so only this shell ($$) has to stay alive.
wait_q() { elastic_wait "$events" 300 "$1" $$ q "$2"; }
tags() { slurm_active_jobs aiscale-elastic | awk '$2 == "RUNNING" {print $4}' | sort | tr '\n' ' '; }

# 1. One agent.
once 1
wait_q 360 'len(s["starts"]) >= 1' || itest_fail "the job never started on Slurm"
check "starts at world size 1 from scratch" q 's["starts"][0]["world"] == 1 and not s["starts"][0]["resumed"]'
check "one Slurm job, replica 0 (the rendezvous host)" test "$(tags)" = "aiscale:elastic:0 "
wait_q 270 's["steps_by_world"].get("1", 0) >= 2 * '"$ckpt_every" || itest_fail "no steps at world size 1"

# 2. Grow 1 -> 2: a second job, one more agent in the same rendezvous.
once 2
wait_q 450 'any(x["world"] == 2 and x["cause"] == "decision" for x in s["starts"])' ||
  itest_fail "the job never restarted at world size 2"
check "two Slurm jobs running, replicas 0 and 1" test "$(tags)" = "aiscale:elastic:0 aiscale:elastic:1 "
check "grow: resumed from the checkpoint, 0 samples lost" \
  q 'all(x["resumed"] and x["step"] > 0 and x["lost"] == 0 for x in s["starts"] if x["world"] == 2)'
wait_q 270 's["steps_by_world"].get("2", 0) >= 10' || itest_fail "no steps at world size 2"

# 3. Shrink 2 -> 1: checkpoint requested and acknowledged, then replica 1's job is cancelled.
once 1
wait_q 450 'sum(1 for x in s["starts"] if x["world"] == 1) >= 2' ||
  itest_fail "the job never restarted at world size 1"
check "shrink: the pre-stop checkpoint request was acknowledged" grep -q '"reason": "request"' "$events"
check "shrink: replica 1's job left the queue, replica 0's stayed" test "$(tags)" = "aiscale:elastic:0 "
check "shrink: resumed at exactly the acknowledged step, 0 samples lost" \
  q 'all(x["resumed"] and x["lost"] == 0 and x["step"] == x["acked_step"] for x in s["starts"][2:])'
check "every aiscale rescale lost 0 samples" \
  q 'all(x["lost"] == 0 for x in s["starts"] if x["cause"] == "decision")'

summary | "$py" -c '
import json, sys
s = json.load(sys.stdin)
for x in s["starts"]:
    print("start  world=%d step=%d lost=%d cause=%s acked_step=%s" % (x["world"], x["step"], x["lost"], x["cause"], x["acked_step"]))
for d in s["decisions"]:
    print("rescale %d -> %d: decision to first step %s s" % (d["from"], d["to"], d["latency_s"]))
print("steps by world size:", s["steps_by_world"])'

# 4. Cancel the jobs (aiscale leaves them to Slurm): nothing left behind.
slurm_stop
deadline=$((SECONDS + 30))  # scancel's SIGKILL comes KillWait (5 s) after its SIGTERM
while ((SECONDS < deadline)) && [ -n "$(itest_leftovers)" ]; do sleep 0.5; done
left=$(itest_leftovers | tr '\n' ' ')
check "no agent or worker left after the jobs were cancelled (${left:-none})" test -z "$left"
check "no half-written checkpoint left" test ! -e "$work/ckpt/ckpt.pt.tmp"

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ] || itest_fail "$failed check(s) failed"
