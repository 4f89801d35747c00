#!/bin/bash
# aiscale run end to end (issue 7 §5), with the real Prometheus (Debian's 2.42, started here by
# hand) and real replica processes of the project's own model server (vLLM metric names),
# started and stopped by aiscale's local engine. Two workloads, both hpa on per-replica
# concurrency (target 1 in flight per replica):
#   llm-prom    reads it from Prometheus (PromQL, one series per replica),
#   llm-direct  scrapes its replicas directly with the vllm preset.
# Open-loop load (loadgen.py through balancer.py) steps up then down. Asserts:
#   1. both scale up within a few ticks of the step, and not past max_replicas;
#   2. after the load drops they hold for the 20 s stabilization window, then come down;
#   3. every tick's decision is in the store and the API with a rule and a reason, and
#      /metrics counts them (aiscale_decisions_total);
#   4. Prometheus killed mid-run: zero scale-downs of llm-prom while it is gone, and its
#      decisions say concurrency is missing (fetch failed); llm-direct is unaffected;
#   5. kill -9 of aiscale mid-window, restart on the same store: no replica orphaned or doubled
#      (process count == decided size), and the window continues where it was (the
#      scale-down lands when the uninterrupted window would have ended, not a window later).
# Usage: live_e2e.sh <aiscale binary> <source dir>
set -u
aiscale=${1:?aiscale binary}
src=${2:-$(cd "$(dirname "$0")/../.." && pwd)}
lib="$src/tests/integration/lib"
tools="$src/tests/integration/tools"
if [ ! -x /usr/bin/prometheus ]; then
  echo "SKIP: /usr/bin/prometheus is not installed"
  exit 0
fi
# shellcheck source=tests/integration/lib/prometheus.sh
source "$lib/prometheus.sh"
itest_init
py=$ITEST_PY

# A base port with 4 free ports after it (replica i listens on base + i).
read -r prom api lb_p lb_d <<<"$(free_ports 4)"
base_p=$(port_block 4)
base_d=$(port_block 4)
while [ "$base_d" -le $((base_p + 4)) ] && [ "$base_d" -ge $((base_p - 4)) ]; do base_d=$(port_block 4); done

backends() { for i in 0 1 2 3; do echo "127.0.0.1:$(($1 + i))"; done; }
targets() { for i in 0 1 2 3; do printf '"127.0.0.1:%s"%s' $(($1 + i)) "$([ "$i" = 3 ] || echo ,)"; done; }
prom_start "$ITEST_TMP/prom" "$prom" "[{\"targets\": [$(targets "$base_p")], \"labels\": {\"job\": \"llm-prom\"}}]" ||
  itest_fail "prometheus did not start"
backends "$base_p" >"$ITEST_TMP/backends_p"
backends "$base_d" >"$ITEST_TMP/backends_d"
itest_spawn balancer_p "$py" "$tools/balancer.py" --port "$lb_p" --backends-file "$ITEST_TMP/backends_p"
itest_spawn balancer_d "$py" "$tools/balancer.py" --port "$lb_d" --backends-file "$ITEST_TMP/backends_d"

workload() { # workload NAME BASE_PORT SIGNAL_SOURCE [QUERY]
  cat <<EOF
    - name: $1
      kind: InferenceService
      min_replicas: 1
      max_replicas: 4
      behavior:
        scaleDown: {stabilizationWindowSeconds: 20}
      policy:
        name: hpa
        metrics: [{signal: concurrency, type: Pods, target: {type: AverageValue, value: 1}}]
      signals:
        - {name: concurrency, source: $3${4:+, query: '$4'}}
      target:
        engine: local
        command: ["$py", "$tools/model_server.py", "--port", "{port}", "--replica", "{replica}",
                  "--delay", "1", "--max-concurrency", "8", "--ready-after", "1",
                  "--drain", "0.5"]
        base_port: $2
        readiness: {http: /health}
        pre_stop: {http: /prestop, method: POST, timeout: 2s}
        grace_period: 3s
EOF
}
cat >"$ITEST_TMP/live.yaml" <<EOF
apiVersion: aiscale.dev/v1alpha1
kind: ControllerConfig
spec:
  period: 2s
  store: {path: $ITEST_TMP/store.db, heartbeat: 0}  # every decision: the checks count them
  server: {host: 127.0.0.1, port: $api}
  sources:
    - {name: prom, type: prometheus, url: "http://127.0.0.1:$prom", timeout: 1s}
    - {name: direct, type: scrape, preset: vllm, targets: replicas, timeout: 1s, window: 6s}
  workloads:
$(workload llm-prom "$base_p" prom 'sum by (instance, job) (vllm:num_requests_running{job="{workload}"})')
$(workload llm-direct "$base_d" direct)
EOF
"$aiscale" validate "$ITEST_TMP/live.yaml" >"$ITEST_TMP/validate.log" 2>&1 ||
  itest_fail "config does not validate: $(cat "$ITEST_TMP/validate.log")"

start_aiscale() { # start_aiscale LOGNAME
  itest_spawn "$1" "$aiscale" run -c "$ITEST_TMP/live.yaml"
  AISCALE_PID=$ITEST_LAST_PID
  wait_http "http://127.0.0.1:$api/readyz" 30 200 || itest_fail "aiscale ($1) never became ready"
}
api_get() { curl -s --max-time 5 "http://127.0.0.1:$api$1"; }
# field WORKLOAD KEY: a number from /api/v1/workloads/WORKLOAD
field() {
  api_get "/api/v1/workloads/$1" | "$py" -c "import json,sys; print(json.load(sys.stdin).get('$2', -1))" 2>/dev/null || echo -1
}
# wait_for WORKLOAD KEY OP VALUE TIMEOUT_S: polls until the field compares true; prints the
# seconds it took
wait_for() {
  local t0 now v
  t0=$(date +%s.%N)
  while :; do
    v=$(field "$1" "$2")
    if [ "$v" != -1 ] && "$py" -c "import sys; sys.exit(0 if $v $3 $4 else 1)"; then
      now=$(date +%s.%N)
      "$py" -c "print(f'{$now - $t0:.1f}')"
      return 0
    fi
    now=$(date +%s.%N)
    "$py" -c "import sys; sys.exit(0 if $now - $t0 < $5 else 1)" || return 1
    sleep 0.5
  done
}
decisions() { api_get "/api/v1/workloads/$1/decisions?limit=1000"; }
# decisions_where WORKLOAD PYEXPR: how many decisions d satisfy PYEXPR
decisions_where() {
  decisions "$1" | "$py" -c "
import json, sys
ds = json.load(sys.stdin)['decisions']
print(sum(1 for d in ds if ($2)))"
}
model_pids() { # replica processes listening on a workload's 4 ports
  local n=0 p
  for i in 0 1 2 3; do
    p=$(($1 + i))
    if "$py" -c "import socket,sys; s=socket.socket(); s.settimeout(0.3); sys.exit(s.connect_ex(('127.0.0.1',$p)))"; then
      n=$((n + 1))
    fi
  done
  echo "$n"
}
load() { # load NAME BALANCER_PORT SCHEDULE
  itest_spawn "$1" "$py" "$tools/loadgen.py" --url "http://127.0.0.1:$2/v1/completions" \
    --schedule "$3" --seed 7 --timeout 20 --out "$ITEST_TMP/$1.json"
}

# --- 1. step up -------------------------------------------------------------------------------
start_aiscale aiscale1
prom_wait_sample "$prom" 'count(vllm:num_requests_running{job="llm-prom"})' 30 ||
  itest_fail "prometheus never scraped the first replica"
wait_for llm-direct ready '>=' 1 30 >/dev/null || itest_fail "llm-direct never had a ready replica"
load step_p "$lb_p" "45s@3"
load step_d "$lb_d" "45s@3"
t_load_end=$(($(date +%s) + 45))
up_p=$(wait_for llm-prom current '>=' 2 30) && up_d=$(wait_for llm-direct current '>=' 2 30)
check "both scale up within 30 s of the step (llm-prom ${up_p:-never} s, llm-direct ${up_d:-never} s)" \
  test -n "${up_p:-}" -a -n "${up_d:-}"
check "llm-prom reaches 3 replicas under 3 requests in flight" wait_for llm-prom current '>=' 3 40
sleep 10
check "never past max_replicas (4)" test "$(decisions_where llm-prom "d['constrained'] > 4")" = 0
check "every decision has a rule and a reason" \
  test "$(decisions_where llm-prom "not d['rule'] or not d['reason']")" = 0

# --- 3. store, API and /metrics agree ----------------------------------------------------------
metrics_sum() {
  api_get /metrics | "$py" -c "
import sys
print(int(sum(float(l.rsplit(' ', 1)[1]) for l in sys.stdin if l.startswith('aiscale_decisions_total{'))))"
}
m_before=$(metrics_sum)
n_api=$(($(decisions_where llm-prom True) + $(decisions_where llm-direct True)))
m_after=$(metrics_sum)
check "/metrics counts every stored decision ($m_before <= $n_api <= $m_after)" \
  test "$m_before" -le "$n_api" -a "$n_api" -le "$m_after"
explained() {
  "$aiscale" explain llm-prom --config "$ITEST_TMP/live.yaml" --limit 3 >"$ITEST_TMP/explain.txt" &&
    grep -q "recommended: .* by rule hpa_" "$ITEST_TMP/explain.txt"
}
check "decisions are in the SQLite store (explain reads them back)" explained

# --- 4. Prometheus killed while llm-prom is scaled up and the load drops ------------------------
sleep $((t_load_end + 1 - $(date +%s))) # the step ends
high_p=$(field llm-prom current)
prom_stop
sleep 2
t_prom_down=$(date +%s)
# --- 5. meanwhile llm-direct's load has dropped: kill -9 aiscale inside its window ---------------
sleep 8
high_d=$(field llm-direct current)
last_high_d=$(decisions llm-direct | "$py" -c "
import json, sys
ds = json.load(sys.stdin)['decisions']
print(max((d.get('wall_s', 0) for d in ds if d['recommended'] >= $high_d), default=0))")
kill -9 "$AISCALE_PID"
# PR_SET_PDEATHSIG sends each replica SIGTERM; the model server drains for up to 0.5 s. How long
# they take is reported; what is asserted is the promise itself: after the restart no replica
# of the killed daemon is left (its recorded process groups are reaped at start), checked below
# as listeners == ready == current.
t_kill=$(date +%s.%N)
left=$(model_pids "$base_d")
for _ in $(seq 1 40); do
  left=$(model_pids "$base_d")
  [ "$left" = 0 ] && break
  sleep 0.25
done
echo "info: after kill -9, $left llm-direct replica(s) still listening after $("$py" -c "print(round($(date +%s.%N) - $t_kill, 1))") s"
start_aiscale aiscale2
check "restart: llm-direct's engine starts at its last decided size ($high_d)" \
  grep -q "llm-direct: engine local, starting at $high_d replica" "$ITEST_TMP/aiscale2.log"
# Neither doubled nor orphaned: the processes listening are exactly the replicas the engine
# reports, once they are up (polled: the window may end and scale down meanwhile).
replicas_match() {
  local i cur rdy n
  for i in $(seq 1 40); do
    cur=$(field llm-direct current)
    rdy=$(field llm-direct ready)
    n=$(model_pids "$base_d")
    [ "$cur" -ge 1 ] && [ "$rdy" = "$cur" ] && [ "$n" = "$cur" ] && return 0
    sleep 0.25
  done
  echo "listeners $n, current $cur, ready $rdy"
  return 1
}
check "restart: no llm-direct replica doubled or orphaned (listeners == ready == current)" \
  replicas_match
down_d=$(wait_for llm-direct current '<' "$high_d" 40)
first_down=$(decisions llm-direct | "$py" -c "
import json, sys
ds = json.load(sys.stdin)['decisions']
print(min((d['wall_s'] for d in ds if d['action'] == 'scaled' and d['constrained'] < $high_d
           and d.get('wall_s', 0) > $last_high_d), default=0))")
lag=$("$py" -c "print(round($first_down - $last_high_d, 1))")
check "the window survived the restart: down $lag s after the last high recommendation (20 s window)" \
  "$py" -c "import sys; sys.exit(0 if 18 <= $lag <= 30 else 1)"
sleep $((t_prom_down + 30 - $(date +%s)))
check "no scale-down of llm-prom while Prometheus was down (held at $high_p)" \
  test "$(decisions_where llm-prom "d['action'] == 'scaled' and d['constrained'] < $high_p and d.get('wall_s', 0) > $t_prom_down")" = 0
check "llm-prom's decisions say the signal is missing" \
  test "$(decisions_where llm-prom "d.get('wall_s', 0) > $t_prom_down + 3 and d['inputs'][0]['status'] == 'fetch_failed'")" -gt 5
check "llm-direct came down meanwhile (${down_d:-never} s after restart)" test -n "${down_d:-}"

itest_stop_pid "$AISCALE_PID" 15
check "aiscale stopped cleanly and took its replicas along" test "$(model_pids "$base_d")" = 0
echo "live_e2e: $passed passed, $failed failed"
[ "$failed" = 0 ]
