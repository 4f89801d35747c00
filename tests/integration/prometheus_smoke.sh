#!/bin/bash
# The live-test harness works end to end with a real Prometheus: two model_server.py replicas
# (vLLM metric names) behind balancer.py, a fake dcgm-exporter, and Prometheus scraping them
# through file_sd. Load from loadgen.py through the balancer must show in Prometheus as
# sum(vllm:num_requests_running) > 0, served by both replicas; the GPU utilisation set on the
# fake exporter must show with its Hostname label; and no process may outlive the test. The
# tools' own unit tests (tools/selftest.py) run first.
# Skips only when /usr/bin/prometheus is absent.
# Usage: prometheus_smoke.sh <aiscale binary (unused)> <source dir>
set -u
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
passed=0
# Each check depends on the ones before it: stop at the first failure, with the logs.
ITEST_FAIL_FAST=1

# The tools themselves first (loadgen arithmetic, FIFO queue, drain, balancer failover, ...).
selftest() { "$py" -B "$tools/selftest.py" >"$ITEST_TMP/selftest.log" 2>&1; }
check "tools self-test ($tools/selftest.py)" selftest

read -r m1 m2 lb dcgm prom <<<"$(free_ports 5)"
for r in 1 2; do
  port_var="m$r"
  itest_spawn "replica$r" "$py" "$tools/model_server.py" --port "${!port_var}" --replica "$r" \
    --delay 0.5 --max-concurrency 2 --ready-after 0.5
  wait_log_line "$ITEST_TMP/replica$r.log" '^ready$' 20 "$ITEST_LAST_PID" ||
    itest_fail "replica $r not ready"
done
printf '127.0.0.1:%s\n127.0.0.1:%s\n' "$m1" "$m2" >"$ITEST_TMP/backends"
itest_spawn balancer "$py" "$tools/balancer.py" --port "$lb" --backends-file "$ITEST_TMP/backends"
wait_log_line "$ITEST_TMP/balancer.log" 'backends live=.*,' 20 "$ITEST_LAST_PID" ||
  itest_fail "balancer did not see both replicas live"
itest_spawn dcgm "$py" "$tools/fake_dcgm.py" --port "$dcgm" --gpus 2 --hostname smoke-node
wait_log_line "$ITEST_TMP/dcgm.log" '^ready$' 20 "$ITEST_LAST_PID" || itest_fail "fake_dcgm not ready"

prom_start "$ITEST_TMP/prom" "$prom" "[
  {\"targets\": [\"127.0.0.1:$m1\", \"127.0.0.1:$m2\"], \"labels\": {\"job\": \"vllm\"}},
  {\"targets\": [\"127.0.0.1:$dcgm\"], \"labels\": {\"job\": \"dcgm\"}}]" ||
  itest_fail "prometheus did not start"
check "first vLLM sample from both replicas" \
  prom_wait_sample "$prom" 'count(vllm:num_requests_running{job="vllm"}) == 2' 30
check "first DCGM sample" prom_wait_sample "$prom" 'DCGM_FI_DEV_GPU_UTIL{job="dcgm"}' 30

curl -s -f -X POST "http://127.0.0.1:$dcgm/set?gpu=0&util=80" >/dev/null ||
  itest_fail "could not set GPU utilisation"

# 6 requests/s against 2 replicas x 2 slots x 0.5 s: about 3 running at any time.
"$py" "$tools/loadgen.py" --url "http://127.0.0.1:$lb/v1/completions" --schedule "10s@6" \
  --constant --timeout 10 --out "$ITEST_TMP/load.json" >"$ITEST_TMP/loadgen.log" 2>&1 ||
  itest_fail "loadgen failed"
cat "$ITEST_TMP/loadgen.log"
load_ok() {
  "$py" - "$ITEST_TMP/load.json" <<'EOF'
import json, sys
t = json.load(open(sys.argv[1]))["total"]
good = t["sent"] >= 50 and t["ok"] == t["sent"] and t["errors"] == 0 and t["unfinished"] == 0
both = all(t["replicas"].get(r, 0) > 0 for r in ("1", "2"))
sys.exit(0 if good and both else 1)
EOF
}
check "every request answered, by both replicas" load_ok

running_seen() {
  local max
  max=$(prom_range "$prom" 'sum(vllm:num_requests_running{job="vllm"})' 30 max) || return 1
  echo "  max sum(vllm:num_requests_running) over the last 30s: $max"
  "$py" -c 'import sys; sys.exit(0 if float(sys.argv[1]) > 0 else 1)' "$max"
}
check "sum(vllm:num_requests_running) > 0 during the load" running_seen
check "max_over_time agrees" prom_wait_sample "$prom" \
  'max_over_time(sum(vllm:num_requests_running{job="vllm"})[30s:1s]) > 0' 5
check "requests counted in vllm:request_success_total" prom_wait_sample "$prom" \
  'sum(vllm:request_success_total{finished_reason="stop"}) >= 50' 10
check "latency histogram scraped" prom_wait_sample "$prom" \
  'histogram_quantile(0.5, sum by (le) (rate(vllm:e2e_request_latency_seconds_bucket[30s]))) > 0' 10
check "DCGM_FI_DEV_GPU_UTIL at 80 with its Hostname label" prom_wait_sample "$prom" \
  'DCGM_FI_DEV_GPU_UTIL{Hostname="smoke-node",gpu="0",modelName!="",UUID=~"GPU-.+"} == 80' 10

itest_cleanup
check "no process left behind" itest_assert_no_leftovers
echo "prometheus_smoke: $passed passed, 0 failed"
