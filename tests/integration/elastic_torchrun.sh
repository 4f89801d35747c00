#!/bin/bash
# Elastic training for real (issue 9): `aiscale run` with the `training` policy, fed by the
# signals a torchrun job exports on rank 0 (examples/elastic/train.py, CPU/gloo, Debian's
# python3-torch), acting through the local actuator in torchrun mode (one replica = one agent
# of one c10d rendezvous hosted by replica 0). Asserts, on outcomes (never on latency):
#   1. the job starts at 1 agent (world size 1, from scratch);
#   2. aiscale grows it to 2 in the compute phase, and the job resumes at world size 2 from the
#      exact step it stopped at (0 samples lost);
#   3. kill -9 of agent 1's process group: the actuator replaces it, the job is back at world
#      size 2 and has lost at most one checkpoint interval of samples;
#   4. every restart resumed from the checkpoint (resumed step > 0 after the first), every
#      aiscale-initiated one lost 0 samples, and a scale-down (if the policy makes one) resumed
#      at exactly the step the job acknowledged to the pre-stop checkpoint request;
#   5. aiscale stopped: the pre-stop hook asked for a checkpoint and the job acknowledged it,
#      every agent and worker is gone, and the last checkpoint is intact (no .tmp left,
#      loadable, at the last step the job reached);
#   6. `aiscale calibrate --unfinished` fits a simulator scenario to this run (its decisions in
#      the store, the job's events log), simulates it, and the scenario validates.
# Prints the summary (tests/integration/tools/elastic_events.py) with the decision -> first
# step latencies. Usage: elastic_torchrun.sh <aiscale binary> <source dir>
set -u
aiscale=${1:?aiscale binary}
src=${2:-$(cd "$(dirname "$0")/../.." && pwd)}
lib="$src/tests/integration/lib"
tools="$src/tests/integration/tools"
# shellcheck source=tests/integration/lib/common.sh
source "$lib/common.sh"
# shellcheck source=tests/integration/lib/elastic.sh
source "$lib/elastic.sh"
elastic_require_torch
itest_init
py=$ITEST_PY

# Ports below the ephemeral range: the rendezvous store, rank 0's metrics, aiscale's API.
base=$(port_block 3)
[ -n "$base" ] || itest_fail "no free port block"
work=$ITEST_TMP/job
events=$work/events.jsonl
batch=32
ckpt_every=20
elastic_config "$ITEST_TMP/aiscale.yaml" dir="$work" base="$base" name=elastic-itest period=3s \
  window=12s min=1 max=2 id=itest \
  policy='{name: training, reference_replicas: 2, rescales_per_hour: 60, rescale_burst: 3,
           min_dwell: 90s, restart_cost: 15s, warmup: 30s, grace_period: 30s}' \
  job="--epochs 50 --epoch-samples 40000 --batch $batch --load-s 4 --ckpt-every $ckpt_every" ||
  itest_fail "could not write the config"
itest_spawn aiscale "$aiscale" run -c "$ITEST_TMP/aiscale.yaml" --verbose
aiscale_pid=$ITEST_LAST_PID
log=$ITEST_TMP/aiscale.log

summary() {
  "$py" "$tools/elastic_events.py" --events "$events" --log "$log" --workload elastic \
    ${kill_at:+--kill-at "$kill_at"}
}
# q EXPR: evaluates a Python expression over the summary `s`; exit status 0 when truthy.
q() {
  summary >"$ITEST_TMP/summary.json" 2>/dev/null || return 1
  "$py" -c "import json,sys; s=json.load(open(sys.argv[1])); v=($1); print(v) if not isinstance(v, bool) else None; sys.exit(0 if v else 1)" "$ITEST_TMP/summary.json"
}
quiet_q() { q "$1" >/dev/null; }
# wait_q CAP_S EXPR: until EXPR holds, while the job makes progress (5 minutes without a new
# event is a stall; a busy machine makes it slower, not failed), at most CAP_S seconds.
wait_q() { elastic_wait "$events" 300 "$1" "$aiscale_pid" quiet_q "$2"; }

# 1. One agent, world size 1, from scratch.
wait_log_line "$events" '"ev": "start"' 360 "$aiscale_pid" || itest_fail "the job never started"
check "starts at 1 agent from scratch" q 's["starts"][0]["world"] == 1 and not s["starts"][0]["resumed"]'

# 2. Grown to 2 in the compute phase, resumed at world size 2 with nothing lost.
wait_q 540 'any(d["to"] == 2 for d in s["decisions"])' || itest_fail "aiscale never grew the job"
check "the grow decision came in the compute phase" \
  q 'next(d for d in s["decisions"] if d["to"] == 2)["phase"] == "compute"'
wait_q 360 'any(x["world"] == 2 and x["cause"] == "decision" for x in s["starts"])' ||
  itest_fail "the job never restarted at world size 2"
check "grow: resumed from the checkpoint, 0 samples lost" \
  q 'all(x["resumed"] and x["lost"] == 0 for x in s["starts"] if x["cause"] == "decision")'
wait_q 180 's["steps_by_world"].get("2", 0) >= 5' || itest_fail "no steps at world size 2"

# 3. kill -9 of agent 1 (not the rendezvous host): replaced, back at world size 2.
recs=("$work"/run/*-1.pid)
rec=${recs[0]}
[ -e "$rec" ] || rec=
[ -n "$rec" ] || itest_fail "no pid record for agent 1"
read -r _ pgid _ <"$rec"
kill_at=$(date +%s.%N)
kill -KILL -- "-$pgid" 2>/dev/null || itest_fail "could not kill agent 1's group $pgid"
echo "killed agent 1 (process group $pgid)"
wait_q 540 "any(x['t'] > $kill_at and x['world'] == 2 for x in s['starts'])" ||
  itest_fail "the killed agent was not replaced (world size 2 never came back)"
new_rec=$(cat "$rec" 2>/dev/null)
check "the actuator started a new agent 1" test -n "$new_rec" -a "${new_rec%% *}" != "$pgid"
interval=$((ckpt_every * batch * 2))
check "kill: at most one checkpoint interval ($interval samples) lost" \
  q "sum(x['lost'] for x in s['starts'] if x['t'] > $kill_at) <= $interval"
wait_q 180 "sum(1 for x in s['starts'] if x['t'] > $kill_at) >= 1 and s['steps_by_world'].get('2', 0) >= 8" ||
  true

# 4. Every restart resumed; aiscale's own changes lost nothing.
check "every restart resumed from its checkpoint" \
  q 'all(x["resumed"] and x["step"] > 0 for x in s["starts"][1:])'
check "aiscale-initiated restarts lost 0 samples" \
  q 'all(x["lost"] == 0 for x in s["starts"] if x["cause"] == "decision")'
check "a scale-down resumed at the step the job acknowledged (if the policy made one)" \
  q 'all(x["step"] == x["acked_step"] for x in s["starts"] if x["cause"] == "decision" and x["acked_step"] is not None)'

# 5. Stop aiscale: agents gone, checkpoint intact.
itest_stop_pid "$aiscale_pid" 90
left=$(itest_leftovers | tr '\n' ' ')
check "no agent or worker left after aiscale stopped (${left:-none})" test -z "$left"
check "no half-written checkpoint left" test ! -e "$work/ckpt/ckpt.pt.tmp"
check "the stop asked for a checkpoint and the job acknowledged it (pre-stop)" \
  grep -q "request_checkpoint: acknowledged" "$work"/logs/*-1.log "$work"/logs/*-0.log
check "the job saved that checkpoint on request" grep -q '"reason": "request"' "$events"
check "the last checkpoint loads and holds the last step reached" "$py" - "$work/ckpt/ckpt.pt" "$events" <<'EOF'
import json, sys, torch
ck = torch.load(sys.argv[1])
steps = [json.loads(l)["step"] for l in open(sys.argv[2]) if '"ev": "step"' in l]
print("checkpoint step", ck["state"]["step"], "last step", max(steps))
sys.exit(0 if ck["state"]["step"] == max(steps) else 1)
EOF

# 6. The run as a simulator scenario (the job never finishes its 50 epochs here: --unfinished).
check "aiscale calibrate fits and simulates this run" "$aiscale" calibrate \
  --config "$ITEST_TMP/aiscale.yaml" --events "$events" --unfinished -o "$ITEST_TMP/calibrated.yaml"
check "the calibrated scenario validates" "$aiscale" validate "$ITEST_TMP/calibrated.yaml"

summary | tee "$ITEST_TMP/summary.json" | "$py" -c '
import json, sys
s = json.load(sys.stdin)
for x in s["starts"]:
    print("start  world=%d step=%d lost=%d cause=%s" % (x["world"], x["step"], x["lost"], x["cause"]))
for d in s["decisions"]:
    print("rescale %d -> %d in %s: decision to first step %s s" % (d["from"], d["to"], d["phase"], d["latency_s"]))
print("steps by world size:", s["steps_by_world"])'
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ] || itest_fail "$failed check(s) failed"
