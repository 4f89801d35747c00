#!/bin/bash
# Measures aiscale rescaling a real torchrun job on this machine (docs/benchmarks.md): runs
# `aiscale run` with the `training` policy on examples/elastic/train.py (short epochs with a
# 30 s eval, so the policy meets every phase) for DURATION seconds, then prints every restart
# (world size, resumed step, samples lost, cause), every rescale (decision -> first step at the
# new world size) and the medians, grow and shrink apart.
#
#   bash examples/elastic/measure.sh build/aiscale [DURATION_S=420] [--kill-at-s S]
#
# --kill-at-s S: kill -9 agent 1's process group S seconds in (if it runs then), to measure a
# replacement too. Uses ports below the ephemeral range and cleans up by PID (the integration
# tests' lib/common.sh).
set -u
aiscale=$(realpath "${1:?aiscale binary}")
duration=${2:-420}
kill_at_s=
[ "${3:-}" = "--kill-at-s" ] && kill_at_s=${4:?seconds}
src=$(cd "$(dirname "$0")/../.." && pwd)
# shellcheck source=tests/integration/lib/common.sh
source "$src/tests/integration/lib/common.sh"
# shellcheck source=tests/integration/lib/elastic.sh
source "$src/tests/integration/lib/elastic.sh"
itest_init
base=$(port_block 3)
work=$ITEST_TMP/job
elastic_config "$ITEST_TMP/aiscale.yaml" dir="$work" base="$base" name=elastic-measure id=measure \
  policy='{name: training, reference_replicas: 2, rescales_per_hour: 60, rescale_burst: 3,
           min_dwell: 20s, restart_cost: 15s, warmup: 30s, grace_period: 20s}' \
  job="--epochs 20 --epoch-samples 8000 --batch 32 --load-s 4 --eval-s 30 --ckpt-every 20" ||
  exit 1
itest_spawn aiscale "$aiscale" run -c "$ITEST_TMP/aiscale.yaml" --verbose
pid=$ITEST_LAST_PID
kill_at=
if [ -n "$kill_at_s" ]; then
  sleep "$kill_at_s"
  recs=("$work"/run/*-1.pid)
  rec=${recs[0]}
  [ -e "$rec" ] || rec=
  if [ -n "$rec" ]; then
    read -r _ pgid _ <"$rec"
    kill_at=$(date +%s.%N)
    kill -KILL -- "-$pgid" && echo "killed agent 1 (process group $pgid)"
  fi
  sleep $((duration - kill_at_s))
else
  sleep "$duration"
fi
itest_stop_pid "$pid" 90
"$ITEST_PY" "$src/tests/integration/tools/elastic_events.py" --events "$work/events.jsonl" \
  --log "$ITEST_TMP/aiscale.log" --workload elastic ${kill_at:+--kill-at "$kill_at"} |
  "$ITEST_PY" -c '
import json, statistics, sys
s = json.load(sys.stdin)
for x in s["starts"]:
    print("start   world=%d step=%d resumed=%s lost=%d cause=%s acked_step=%s" % (
        x["world"], x["step"], x["resumed"], x["lost"], x["cause"], x["acked_step"]))
for d in s["decisions"]:
    print("rescale %d -> %d (%s): decision to first step %s s" % (d["from"], d["to"], d["phase"], d["latency_s"]))
for name, pick in (("grow", lambda d: d["to"] > d["from"]), ("shrink", lambda d: d["to"] < d["from"])):
    v = [d["latency_s"] for d in s["decisions"] if pick(d) and d["latency_s"] is not None]
    print("%s: n=%d median %s s (min %s, max %s)" % (name, len(v), round(statistics.median(v), 1) if v else "-",
                                                     min(v) if v else "-", max(v) if v else "-"))
lost = [x["lost"] for x in s["starts"] if x["cause"] == "decision"]
print("samples lost per aiscale rescale:", lost, "; per kill:", [x["lost"] for x in s["starts"] if x["cause"] == "kill"])
print("steps by world size:", s["steps_by_world"])'
