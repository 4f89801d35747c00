#!/bin/bash
# Measures aiscale rescaling a real torchrun job on this machine (README "Benchmarks"): runs
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
elastic=$src/examples/elastic
# shellcheck source=tests/integration/lib/common.sh
source "$src/tests/integration/lib/common.sh"
itest_init
base=$(port_block 3)
work=$ITEST_TMP/job
mkdir -p "$work/logs" "$work/run"
cat >"$ITEST_TMP/aiscale.yaml" <<EOF
apiVersion: aiscale.dev/v1alpha1
kind: ControllerConfig
metadata: {name: elastic-measure}
spec:
  period: 5s
  store: $ITEST_TMP/store.db
  server: {host: 127.0.0.1, port: $((base + 2))}
  sources:
    - {name: job, type: scrape, preset: training, targets: ['http://127.0.0.1:$((base + 1))/metrics'],
       timeout: 2s, window: 15s}
  workloads:
    - name: elastic
      kind: TrainingJob
      min_replicas: 1
      max_replicas: 3
      policy: {name: training, reference_replicas: 2, rescales_per_hour: 60, rescale_burst: 3,
               min_dwell: 20s, restart_cost: 15s, warmup: 30s, grace_period: 20s}
      signals:
        - {name: samples_per_s, source: job}
        - {name: samples_remaining, source: job}
        - {name: phase, source: job}
        - {name: epoch, source: job}
      target:
        engine: local
        command: [/usr/bin/python3, $elastic/torchrun.py, --nnodes=1:3, --nproc_per_node=1,
                  --rdzv_backend=c10d, --rdzv_endpoint=127.0.0.1:$base, --rdzv_id=measure,
                  '--rdzv_conf=last_call_timeout=2,is_host={rdzv_is_host}',
                  --monitor_interval=1, --max_restarts=1000,
                  $elastic/train.py, --ckpt-dir, $work/ckpt, --metrics-port, '$((base + 1))',
                  --events, $work/events.jsonl, --epochs, '20', --epoch-samples, '8000',
                  --batch, '32', --load-s, '4', --eval-s, '30', --ckpt-every, '20']
        rendezvous_host_replica: 0
        readiness: {log: 'aiscale-elastic: worker'}   # its worker joined a rendezvous
        ready_timeout: 120s
        env: {OMP_NUM_THREADS: '1'}
        pre_stop:
          command: [/usr/bin/python3, $elastic/request_checkpoint.py,
                    --url, 'http://127.0.0.1:$((base + 1))', --timeout, '20']
          timeout: 25s
        grace_period: 40s
        restart_backoff: {initial: 2s, max: 10s}
        log_dir: $work/logs
        run_dir: $work/run
EOF
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
