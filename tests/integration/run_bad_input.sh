#!/bin/bash
# `aiscale run` against bad input from real processes (issue 7's list, at the daemon level).
# One bad_prom.py serves a different failure to each Prometheus source (by url path): HTTP 500,
# malformed JSON, NaN and +Inf samples, a metric that vanishes mid-run, a huge body, a body that
# never ends; one more source points at a port nothing listens on. Each source feeds one hpa
# workload that starts at 2 replicas (a first --once run with a static policy leaves them at 2
# in the store) with min 1, so a scale-down would show. Two more workloads have replicas that
# exit at once and that never become ready. A control workload on a valid low answer must scale
# down, so the harness can see one. Checks, via the API's decisions: each bad signal is
# recorded with its status and cause, no bad-input workload ever went below 2, the replica
# problems are named in the engine detail, the daemon stays up, and SIGTERM stops it with exit
# 0 and no process left.
# Usage: run_bad_input.sh <aiscale binary> <source dir>
set -u
bin="$1"
src="$2"
# shellcheck source=tests/integration/lib/common.sh
source "$src/tests/integration/lib/common.sh"
itest_init

read -r prom_port api_port dead_port never_port <<<"$(free_ports 4)"
itest_spawn badprom "$ITEST_PY" "$ITEST_TOOLS/bad_prom.py" --port "$prom_port" \
  --vanish-after 4 --huge-bytes 1048576 --endless-max 60
prom_pid=$ITEST_LAST_PID
wait_log_line "$ITEST_TMP/badprom.log" "listening port=$prom_port" 15 "$prom_pid" ||
  itest_fail "bad_prom.py did not start"

modes="low http500 badjson nan inf vanish huge endless unreachable"
dir="$ITEST_TMP/run"
mkdir -p "$dir"

# config POLICY_KIND: the ControllerConfig, with every source workload on hpa (main) or on a
# static 2 (seed, which also leaves out the replica workloads).
config() {
  local kind=$1 m url
  cat <<YAML
apiVersion: aiscale.dev/v1alpha1
kind: ControllerConfig
spec:
  period: 1s
  store: {path: $dir/store.db, heartbeat: 0}  # every decision: the checks count them
  server: {port: $api_port}
  sources:
YAML
  for m in $modes; do
    url="http://127.0.0.1:$prom_port/$m"
    [ "$m" = unreachable ] && url="http://127.0.0.1:$dead_port"
    echo "    - {name: s-$m, type: prometheus, url: '$url', timeout: 1s, max_body_bytes: 64Ki}"
  done
  echo "  workloads:"
  for m in $modes; do
    cat <<YAML
    - name: w-$m
      kind: Deployment
      min_replicas: 1
      max_replicas: 4
      target: {engine: local, command: [/bin/sleep, '600'], grace_period: 1s}
YAML
    if [ "$kind" = seed ]; then
      echo "      policy: {name: static, replicas: 2}"
      continue
    fi
    cat <<YAML
      behavior: {scaleDown: {stabilizationWindowSeconds: 0}}
      policy:
        name: hpa
        metrics: [{signal: concurrency, type: Pods, target: {type: AverageValue, value: 10}}]
      signals:
        - {name: concurrency, source: s-$m, query: 'sum by (pod) (vllm:num_requests_running{service="w-$m"})'}
YAML
  done
  [ "$kind" = seed ] && return
  cat <<YAML
    - name: w-crash
      kind: Deployment
      min_replicas: 1
      max_replicas: 2
      policy: {name: static, replicas: 1}
      target:
        engine: local
        command: [/bin/sh, -c, 'echo starting; exit 3']
        readiness: {log: serving}   # never printed: never ready, so every decision says why
        restart_backoff: {initial: 1s, max: 4s}
    - name: w-never
      kind: Deployment
      min_replicas: 1
      max_replicas: 2
      policy: {name: static, replicas: 1}
      target:
        engine: local
        command: [$ITEST_PY, $ITEST_TOOLS/model_server.py, --port, '{port}', --ready-after, '100000']
        base_port: $never_port
        readiness: {http: /health}
        grace_period: 2s
YAML
}

config seed >"$dir/seed.yaml"
config main >"$dir/main.yaml"
"$bin" run -c "$dir/seed.yaml" --once >"$ITEST_TMP/seed.log" 2>&1 ||
  itest_fail "the seed run failed"

itest_spawn aiscale "$bin" run -c "$dir/main.yaml" --verbose
daemon=$ITEST_LAST_PID
wait_log_line "$ITEST_TMP/aiscale.log" "serving .* on 127.0.0.1:$api_port" 20 "$daemon" ||
  itest_fail "aiscale run did not start"
# Long enough for the vanishing metric to vanish (4 s) and for several ticks after it.
sleep 9
pid_alive "$daemon" || itest_fail "aiscale run died while reading bad input"
[ "$(curl -s -o /dev/null -m 5 -w '%{http_code}' "http://127.0.0.1:$api_port/healthz")" = 200 ] ||
  itest_fail "aiscale run stopped answering /healthz"

# check WORKLOAD EXPECT...: the workload's decisions (newest first, from the API) against one
# expectation per argument, KIND=VALUE:
#   policy=P      only the decisions of policy P count (applied before the rest)
#   held=N        every decision has current N and decides N (no scale-down, nothing applied)
#   status=S      the newest decision's concurrency input has status S ...
#   detail=TEXT   ... and its detail contains TEXT
#   was_ok=1      some earlier decision read concurrency as ok
#   scaled=A:B    some decision scaled from A to B (the control)
#   ready=N       every decision saw N ready replicas
#   engine=TEXT   the newest decision's engine detail contains TEXT
#   any_engine=TEXT  some decision's engine detail contains TEXT
check() {
  local w=$1
  shift
  curl -s -m 5 "http://127.0.0.1:$api_port/api/v1/workloads/$w/decisions?limit=100" \
    >"$ITEST_TMP/$w.json" || itest_fail "no decisions for $w from the API"
  "$ITEST_PY" - "$ITEST_TMP/$w.json" "$@" <<'PY' || itest_fail "decisions of $w"
import json, sys

ds = json.load(open(sys.argv[1]))["decisions"]
wants = sys.argv[2:]
# policy=P first: keep only that policy's decisions (the seed run's static ones are older).
for want in [w for w in wants if w.startswith("policy=")]:
    ds = [d for d in ds if d["policy"] == want.split("=", 1)[1]]
problems = []
if len(ds) < 4:
    problems.append("only %d decisions" % len(ds))


def conc(d):
    return next((i for i in d["inputs"] if i["name"] == "concurrency"), {})


for want in wants:
    kind, _, value = want.partition("=")
    newest = ds[0] if ds else {}
    if kind == "held":
        n = int(value)
        bad = [d for d in ds if d["current"] != n or d["constrained"] != n or d["action"] != "none"]
        if bad:
            problems.append("not held at %d: %s" % (n, bad[0]["reason"] + " / " + bad[0]["action"]))
    elif kind == "status" and conc(newest).get("status") != value:
        problems.append("newest concurrency status %r, want %r" % (conc(newest), value))
    elif kind == "detail" and value not in conc(newest).get("detail", ""):
        problems.append("newest concurrency detail %r lacks %r" % (conc(newest), value))
    elif kind == "was_ok" and not any(conc(d).get("status") == "ok" for d in ds[1:]):
        problems.append("no earlier decision read concurrency as ok")
    elif kind == "scaled":
        a, b = (int(x) for x in value.split(":"))
        if not any(d["action"] == "scaled" and d["current"] == a and d["constrained"] == b
                   for d in ds):
            problems.append("never scaled %d -> %d" % (a, b))
    elif kind == "ready" and any(d["ready"] != int(value) for d in ds):
        problems.append("ready was not always %s" % value)
    elif kind == "engine" and value not in newest.get("engine_detail", ""):
        problems.append("newest engine detail %r lacks %r" % (newest.get("engine_detail"), value))
    elif kind == "any_engine" and not any(value in d.get("engine_detail", "") for d in ds):
        problems.append("no engine detail contains %r" % value)
for p in problems:
    print("  " + p)
sys.exit(1 if problems else 0)
PY
  echo "ok: $w"
}

check w-low policy=hpa scaled=2:1
check w-http500 policy=hpa held=2 status=fetch_failed "detail=prometheus answered HTTP 500 internal"
check w-badjson policy=hpa held=2 status=fetch_failed "detail=malformed prometheus response: invalid JSON"
check w-nan policy=hpa held=2 status=invalid "detail=all 2 values dropped (2 NaN, infinite or out of range)"
check w-inf policy=hpa held=2 status=invalid "detail=all 2 values dropped (2 NaN, infinite or out of range)"
check w-vanish policy=hpa held=2 status=missing "detail=no observations" was_ok=1
check w-huge policy=hpa held=2 status=fetch_failed "detail=response body exceeds 65536"
check w-endless policy=hpa held=2 status=fetch_failed "detail=timed out"
check w-unreachable policy=hpa held=2 status=fetch_failed \
  "detail=unable to read GET http://127.0.0.1:$dead_port/api/v1/query"
check w-crash ready=0 "engine=replica 0 exited with status 3" "engine=next start in" \
  "any_engine=times in a row"
check w-never ready=0 "engine=replica 0 not ready yet"

# The same, in words, through `aiscale explain --url`.
"$bin" explain w-nan --url "http://127.0.0.1:$api_port" --limit 1 >"$ITEST_TMP/explain.log" 2>&1 ||
  itest_fail "aiscale explain w-nan failed"
grep -q "concurrency invalid (not data): all 2 values dropped (2 NaN" "$ITEST_TMP/explain.log" ||
  itest_fail "aiscale explain does not say the signal was invalid"

# SIGTERM: the tick in flight finishes, every replica stops, exit 0, nothing left behind.
kill -TERM "$daemon"
for ((i = 0; i < 300; i++)); do
  pid_alive "$daemon" || break
  sleep 0.1
done
pid_alive "$daemon" && itest_fail "aiscale run still running 30 s after SIGTERM"
wait "$daemon"
rc=$?
[ "$rc" = 0 ] || itest_fail "aiscale run exited $rc after SIGTERM"
grep -q "aiscale: stopped" "$ITEST_TMP/aiscale.log" || itest_fail "no 'stopped' line"
if grep -Eq "terminate called|Segmentation|Aborted" "$ITEST_TMP/aiscale.log"; then
  itest_fail "aiscale run crashed"
fi
itest_stop_pid "$prom_pid" 5
itest_assert_no_leftovers || itest_fail "processes left behind"
echo "PASS: run_bad_input"