#!/bin/bash
# Elastic training, learning the size (issue 9 §4: "learns that 3 agents are slower than 2 on
# this machine and does not stay at 3"): the torchrun job of elastic_torchrun.sh at 2 to 3
# agents, reference size 3, under aiscale's `training` policy (lib/elastic.sh writes the
# config; every decision is stored, heartbeat 0, and read back with its facts from the API).
# The job starts at 2 agents, so the policy's throughput model sees 2 and 3: from 1, its
# prior sends it straight to 3, and a fit of y(n) = a + b/n + c*n through two sizes (1 and 3)
# cannot place a peak at 2 (docs/elastic-training.md).
# Asserts, on outcomes (never on latency):
#   1. the job starts at world size 2; the policy, with throughput seen at 2 only, grows it to
#      3 (its prior predicts more samples/s there);
#   2. once it has run at 3, its decisions carry the throughput it observed at 2 and at 3, and
#      its model ranks the two sizes in the order it observed them;
#   3. when 3 agents were slower than 2 (this 2-core machine, when other processes leave it
#      alone): the model ranks 3 below 2 and the policy shrinks back to 2. When other load made
#      3 agents faster (more workers, more CPU share), at the first judgement or while the job
#      stayed at 3 long enough that its observations put 2 outside the 10% budget, it says so
#      and does not check that.
#      Either way, a shrink to 2 resumes from the checkpoint with 0 samples lost and the job
#      ends at 2;
#   4. no revisit (issue 27 §1): once the policy has judged the two sizes on data at both, its
#      verdict is at most one size change, 3 -> 2 (when 3 was slower, or faster by less than
#      max_slowdown: 2 then finishes within the budget on two thirds of the nodes, the policy's
#      objective), and it makes no further change for ELASTIC_LEARN_HOLD_S seconds (default 60)
#      of training, whatever noise the machine adds; the test prints `revisits: N` and what the
#      decisions said about the evidence (scripts/elastic_learn_runs.sh repeats it and counts).
# Waits end when the job stops making progress (elastic_wait), not at a fixed time, so a busy
# machine makes the test slower, not failed.
# Usage: elastic_learn.sh <aiscale binary> <source dir>
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
log=$ITEST_TMP/aiscale.log
api=http://127.0.0.1:$((base + 2))
elastic_config "$ITEST_TMP/aiscale.yaml" dir="$work" base="$base" name=elastic-learn period=3s \
  window=12s min=2 max=3 id=learn heartbeat=0 \
  policy='{name: training, reference_replicas: 3, rescales_per_hour: 60, rescale_burst: 3,
           min_dwell: 45s, restart_cost: 15s, warmup: 30s, grace_period: 30s}' \
  job="--epochs 50 --epoch-samples 400000 --batch 32 --load-s 2 --ckpt-every 20" ||
  itest_fail "could not write the config"
itest_spawn aiscale "$aiscale" run -c "$ITEST_TMP/aiscale.yaml" --verbose
aiscale_pid=$ITEST_LAST_PID

# q EXPR: a Python expression over `s` (tests/integration/tools/elastic_events.py's summary)
# and `ds` (the stored decisions, oldest first, from the API); exit status 0 when truthy, and
# a non-boolean value is printed.
q() {
  "$py" "$ITEST_TOOLS/elastic_events.py" --events "$events" --log "$log" --workload elastic \
    >"$ITEST_TMP/summary.json" 2>/dev/null || return 1
  curl -s -m 5 "$api/api/v1/workloads/elastic/decisions?limit=1000" >"$ITEST_TMP/decisions.json" ||
    return 1
  "$py" - "$1" "$ITEST_TMP/summary.json" "$ITEST_TMP/decisions.json" <<'EOF'
import json, sys
s = json.load(open(sys.argv[2]))
body = json.load(open(sys.argv[3]))
ds = sorted(body["decisions"], key=lambda d: d["t_s"])
def f(d, key):
    return d.get("facts", {}).get(key)
# The last decision made by the throughput model with data at 3 agents (its facts name it).
judged = [d for d in ds if f(d, "compute_observed_at_3") is not None
          and f(d, "compute_samples_per_s_at_2") is not None]
v = eval(sys.argv[1])
if not isinstance(v, bool):
    print(v)
sys.exit(0 if v else 1)
EOF
}
quiet_q() { q "$1" >/dev/null; }
# wait_q CAP_S EXPR: until EXPR holds, while the job makes progress (5 minutes without a new
# event is a stall), at most CAP_S seconds.
wait_q() { elastic_wait "$events" 300 "$1" "$aiscale_pid" quiet_q "$2"; }

# 1. Two agents; grown to 3 on the prior.
wait_log_line "$events" '"ev": "start"' 360 "$aiscale_pid" || itest_fail "the job never started"
check "starts at world size 2" q 's["starts"][0]["world"] == 2'
wait_q 450 'any(d["to"] == 3 for d in s["decisions"])' ||
  itest_fail "the policy never tried 3 agents (its model: $(q 'ds[-1].get("facts")'))"
check "the grow to 3 was decided with throughput seen at 2 only" \
  q 'any(d["recommended"] == 3 and d["current"] == 2 and f(d, "compute_sizes_seen") == 1 for d in ds)'
wait_q 360 'any(x["world"] == 3 for x in s["starts"])' || itest_fail "the job never ran at world size 3"

# 2. Judged with data at 3: observed at both sizes, ranked as observed.
wait_q 450 'judged' || itest_fail "no decision judged the size with data at 3 agents"
obs=$(q '"%.1f %.1f %.1f %.1f" % (f(judged[0], "compute_observed_at_2"), f(judged[0], "compute_observed_at_3"), f(judged[0], "compute_samples_per_s_at_2"), f(judged[0], "compute_samples_per_s_at_3"))')
read -r obs2 obs3 pred2 pred3 <<<"$obs"
echo "first judgement with data at 3: observed 2 agents $obs2, 3 agents $obs3 samples/s; model 2: $pred2, 3: $pred3"
check "the policy observed throughput at 2 and at 3 agents" test -n "$obs3"
check "its model ranks 2 and 3 as it observed them" \
  q '(f(judged[0], "compute_samples_per_s_at_3") < f(judged[0], "compute_samples_per_s_at_2")) == (f(judged[0], "compute_observed_at_3") < f(judged[0], "compute_observed_at_2"))'

# 3. Slower at 3: ranked below 2, back to 2, nothing lost.
slower=0
q 'f(judged[0], "compute_observed_at_3") < f(judged[0], "compute_observed_at_2")' >/dev/null && slower=1
if [ "$slower" = 1 ]; then
  check "3 agents were slower than 2, and the model ranks 3 below 2" \
    q 'f(judged[0], "compute_samples_per_s_at_3") < f(judged[0], "compute_samples_per_s_at_2")'
  if ! wait_q 450 'any(d["from"] == 3 and d["to"] == 2 for d in s["decisions"])'; then
    # The machine may get faster while the job runs at 3 (other load ends): 3's readings then
    # rise past 2's, which are from the busier time, and with 2 slower than 3 by more than
    # max_slowdown (10%) on the policy's own observations, staying is its objective's answer.
    # A policy that stays at 3 while its observations rank 2 within the budget still fails.
    q 'f(ds[-1], "compute_observed_at_2") * 1.10 < f(ds[-1], "compute_observed_at_3")' >/dev/null ||
      itest_fail "the policy stayed at 3 agents ($(q 'ds[-1]["reason"]'))"
    echo "NOTE: 3 agents got faster while the job ran there (observed now: 2 agents" \
      "$(q '"%.1f" % f(ds[-1], "compute_observed_at_2")'), 3 agents" \
      "$(q '"%.1f" % f(ds[-1], "compute_observed_at_3")') samples/s): 2 would miss the 10%" \
      "budget on the policy's observations, so it stays at 3; 'back to 2' is not checked"
  fi
else
  echo "NOTE: 3 agents were faster than 2 on this run ($obs3 vs $obs2 samples/s): other load" \
    "on the machine gives more workers more CPU; 'slower at 3' is not checked"
  wait_q 60 'any(d["from"] == 3 and d["to"] == 2 for d in s["decisions"])' || true
fi
if q 'any(d["from"] == 3 and d["to"] == 2 for d in s["decisions"])' >/dev/null; then
  wait_q 360 'any(x["world"] == 2 and x["cause"] == "decision" for x in s["starts"][1:])' ||
    itest_fail "the job never came back to world size 2"
  n2=$(q 's["steps_by_world"].get("2", 0)')
  wait_q 180 "s['steps_by_world'].get('2', 0) >= ${n2:-0} + 5" ||
    itest_fail "no steps at world size 2 after the shrink"
  check "the shrink to 2 resumed from the checkpoint with 0 samples lost" \
    q 'all(x["resumed"] and x["lost"] == 0 for x in s["starts"] if x["cause"] == "decision")'
  check "the job ends at 2 agents, not 3" q 'ds[-1]["current"] == 2 and s["decisions"][-1]["to"] == 2'
fi
# 4. No revisit: from the first decision made with data at both sizes, the policy's verdict
# (3 -> 2, or staying) is its only size change for the hold.
hold=${ELASTIC_LEARN_HOLD_S:-60}
verdict='[d for d in ds if d["action"] == "scaled" and d["t_s"] >= judged[0]["t_s"]]'
revisits="len($verdict) - (1 if $verdict and $verdict[0][\"current\"] == 3 and $verdict[0][\"constrained\"] == 2 else 0)"
t_hold=$(q 'ds[-1]["t_s"]')
wait_q $((hold * 3)) "ds[-1]['t_s'] >= $t_hold + $hold" || itest_fail "aiscale stopped deciding during the hold"
n=$(q "$revisits")
echo "revisits: $n (size changes after the policy judged 2 and 3 on data, beyond its verdict; hold $hold s)"
q '"evidence behind the verdict: " + "; ".join(d["reason"].split("evidence: ")[-1] for d in ds if d["action"] == "scaled" and "evidence: " in d["reason"])' || true
q '"holds within noise: %d" % sum(1 for d in ds if d["rule"] == "hold_within_noise")' || true
check "no revisit: the verdict is the only size change after the judgement" test "$n" = 0

"$py" - "$ITEST_TMP/decisions.json" <<'EOF'
import json, sys
ds = sorted(json.load(open(sys.argv[1]))["decisions"], key=lambda d: d["t_s"])
t0 = ds[0]["t_s"]
judged = [d for d in ds if "compute_observed_at_3" in d.get("facts", {})]
for d in ds:
    if d["action"] == "scaled" or d is (judged[:1] or [None])[0] or d is ds[-1]:
        fa = d.get("facts", {})
        model = {n: round(fa["compute_samples_per_s_at_%d" % n], 1) for n in (1, 2, 3, 4)
                 if "compute_samples_per_s_at_%d" % n in fa}
        seen = {n: round(fa["compute_observed_at_%d" % n], 1) for n in (2, 3)
                if "compute_observed_at_%d" % n in fa}
        print("%5.0f s current %d -> %d [%s] model %s observed %s" % (
            d["t_s"] - t0, d["current"], d["recommended"], d["rule"], model, seen))
EOF
itest_stop_pid "$aiscale_pid" 90
left=$(itest_leftovers | tr '\n' ' ')
check "no agent or worker left after aiscale stopped (${left:-none})" test -z "$left"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ] || itest_fail "$failed check(s) failed"
