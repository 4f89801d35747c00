#!/bin/bash
# The API of `aiscale run` under abuse (issue 27 §6, found by an outside probe: six clients
# streaming header lines grew the daemon to 1.9 GB; 500 idle connections or 40 clients sending a
# byte every 1.5 s made /healthz time out). Against a real daemon (one local-engine workload of
# the project's model server) tools/api_abuse.py holds 500 idle connections, 40 slow clients and
# 6 header streamers open for 20 s (each reopened when the server closes it, as an attacker
# would) while it asks /healthz every 50 ms. Checks: every probe answered 200; p99 under a bound
# generous enough for a busy 2-core machine (the figure is printed; docs/api-limits.md has the
# measurement); the daemon's resident memory stays under 300 MB; the server did close the
# slow and flooding connections; the read API still answers afterwards; SIGTERM stops it within
# 5 s.
# Usage: api_abuse.sh <aiscale binary> <source dir>
set -u
aiscale=${1:?aiscale binary}
src=${2:-$(cd "$(dirname "$0")/../.." && pwd)}
# shellcheck source=tests/integration/lib/common.sh
source "$src/tests/integration/lib/common.sh"
itest_init
py=$ITEST_PY
tools="$src/tests/integration/tools"

api=$(free_port)
base=$(port_block 1)
cat >"$ITEST_TMP/c.yaml" <<YAML
apiVersion: aiscale.dev/v1alpha1
kind: ControllerConfig
spec:
  period: 1s
  store: $ITEST_TMP/store.db
  server: {host: 127.0.0.1, port: $api}
  workloads:
    - name: svc
      kind: InferenceService
      min_replicas: 1
      max_replicas: 2
      policy: {name: static, replicas: 1}
      target:
        engine: local
        command: ["$py", "$tools/model_server.py", "--port", "{port}", "--ready-after", "0.2",
                  "--drain", "0.2"]
        base_port: $base
        readiness: {http: /health}
        grace_period: 2s
YAML
itest_spawn aiscale "$aiscale" run -c "$ITEST_TMP/c.yaml"
daemon=$ITEST_LAST_PID
wait_http "http://127.0.0.1:$api/healthz" 30 || itest_fail "the daemon did not serve"

ulimit -n 4096 2>/dev/null
"$py" "$tools/api_abuse.py" --port "$api" --idle 500 --slow 40 --headers 6 --seconds 20 \
  --pid "$daemon" >"$ITEST_TMP/abuse.json" 2>"$ITEST_TMP/abuse.err" ||
  itest_fail "api_abuse.py failed: $(cat "$ITEST_TMP/abuse.err")"
echo "abuse: $(cat "$ITEST_TMP/abuse.json")"
field() { "$py" -c "import json,sys; d=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))" "$ITEST_TMP/abuse.json" "$1"; }

check "every /healthz probe answered 200" [ "$(field 'd["failures"]')" = 0 ]
check "at least 100 probes were made" [ "$(field 'd["probes"] >= 100')" = True ]
check "/healthz p99 under 1 s while abused (printed above)" [ "$(field 'd["p99_s"] < 1.0')" = True ]
check "resident memory stayed under 300 MB" [ "$(field 'd["max_rss_kb"] < 300000')" = True ]
check "the 500 idle connections were held" [ "$(field 'd["held_at_end"]["idle"] >= 400')" = True ]
check "header floods were cut off" [ "$(field 'd["closed_by_server"]["headers"] > 0')" = True ]
check "slow clients were cut off" [ "$(field 'd["closed_by_server"]["slow"] > 0')" = True ]
check "the read API answers afterwards" wait_http "http://127.0.0.1:$api/api/v1/workloads" 10
curl -s "http://127.0.0.1:$api/metrics" >"$ITEST_TMP/metrics.txt"
check "refusals are counted in /metrics" grep -q 'aiscale_api_rejected_total{reason="head_too_large"}' "$ITEST_TMP/metrics.txt"

t0=$(date +%s%N)
kill -TERM "$daemon"
for _ in $(seq 50); do pid_alive "$daemon" || break; sleep 0.1; done
t1=$(date +%s%N)
check "SIGTERM stopped the daemon within 5 s ($(((t1 - t0) / 1000000)) ms)" bash -c "! kill -0 $daemon 2>/dev/null"
wait "$daemon" 2>/dev/null
echo "passed $passed, failed $failed"
[ "$failed" = 0 ]
