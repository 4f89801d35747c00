#!/bin/bash
# A scrape target with 200,000 series of one metric and no pod-like label (issue 27 §6: naming
# 50,000 such series took ~10 s, each compared with every other, and at 200,000 `aiscale run`
# no longer stopped on SIGTERM). A real daemon scrapes tools/big_exposition.py every second;
# checks: the signal is read (its decisions carry 200,000 instances); SIGTERM is honoured
# within 2 s while the scrapes run, both when the target answers at once (the daemon is
# parsing and naming) and when it sends its body slowly (a transfer in flight). The parse and
# naming cost itself is bench/scrape_series_bench.cc's (linear from 50k to 200k).
# Usage: huge_scrape.sh <aiscale binary> <source dir>
set -u
aiscale=${1:?aiscale binary}
src=${2:-$(cd "$(dirname "$0")/../.." && pwd)}
# shellcheck source=tests/integration/lib/common.sh
source "$src/tests/integration/lib/common.sh"
itest_init
py=$ITEST_PY
tools="$src/tests/integration/tools"

# run_once NAME TARGET_ARGS...: a daemon on a fresh store scraping a fresh target; waits for
# a decision that read the signal, then times SIGTERM to exit.
run_once() {
  local name=$1 target api base t0 t1 ms
  shift
  read -r target api <<<"$(free_ports 2)"
  base=$(port_block 1)
  itest_spawn "target-$name" "$py" "$tools/big_exposition.py" --port "$target" "$@"
  wait_log_line "$ITEST_TMP/target-$name.log" "listening" 60 || itest_fail "$name: no target"
  cat >"$ITEST_TMP/$name.yaml" <<YAML
apiVersion: aiscale.dev/v1alpha1
kind: ControllerConfig
spec:
  period: 1s
  store: {path: $ITEST_TMP/$name.db, heartbeat: 0}
  server: {host: 127.0.0.1, port: $api}
  sources:
    - {name: big, type: scrape, targets: ["http://127.0.0.1:$target/metrics"], timeout: 30s,
       max_body_bytes: 64Mi}
  workloads:
    - name: svc
      kind: InferenceService
      min_replicas: 1
      max_replicas: 2
      staleness: 60s
      policy: {name: static, replicas: 1}
      signals:
        - {name: queue_len, source: big, query: app_queue_depth, interval: 1s, timeout: 30s}
      target:
        engine: local
        command: ["$py", "$tools/model_server.py", "--port", "{port}", "--ready-after", "0.1",
                  "--drain", "0"]
        base_port: $base
        readiness: {http: /health}
        grace_period: 1s
YAML
  itest_spawn "aiscale-$name" "$aiscale" run -c "$ITEST_TMP/$name.yaml" --verbose
  local daemon=$ITEST_LAST_PID
  wait_http "http://127.0.0.1:$api/healthz" 30 || itest_fail "$name: the daemon did not serve"
  if [ "$name" = fast ]; then
    # A decision that read all 200,000 series, named apart (not one instance, not fewer).
    wait_log_line "$ITEST_TMP/aiscale-$name.log" "queue_len" 5 >/dev/null 2>&1
    local seen=0
    for _ in $(seq 120); do
      curl -s "http://127.0.0.1:$api/api/v1/workloads/svc" >"$ITEST_TMP/w.json"
      seen=$("$py" -c 'import json,sys
d = json.load(open(sys.argv[1]))
print(max([s.get("instances", 0) for s in d.get("signals", [])] + [0]))' "$ITEST_TMP/w.json" 2>/dev/null)
      [ "${seen:-0}" = 200000 ] && break
      sleep 0.5
    done
    check "$name: the signal holds 200,000 named series" [ "${seen:-0}" = 200000 ]
  else
    sleep 3  # a transfer of the slow body is in flight
  fi
  t0=$(date +%s%N)
  kill -TERM "$daemon"
  for _ in $(seq 100); do pid_alive "$daemon" || break; sleep 0.05; done
  t1=$(date +%s%N)
  ms=$(((t1 - t0) / 1000000))
  echo "$name: SIGTERM to exit: $ms ms"
  check "$name: SIGTERM honoured within 2 s ($ms ms)" [ "$ms" -le 2000 ]
  itest_stop_pid "$daemon" 1
  grep -q "aiscale: stopped" "$ITEST_TMP/aiscale-$name.log"
  check "$name: it stopped cleanly" grep -q "aiscale: stopped" "$ITEST_TMP/aiscale-$name.log"
}

run_once fast
run_once slow --bytes-per-second 200000
echo "passed $passed, failed $failed"
[ "$failed" = 0 ]
