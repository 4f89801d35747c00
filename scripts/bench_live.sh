#!/usr/bin/env bash
# The live-tick benchmark (issue 7) against a real Prometheus, start to finish in ~2 minutes:
# starts an exporter of 1,000 vLLM-like workloads x 2 pods x 3 gauges
# (tests/integration/tools/many_targets.py), Debian's /usr/bin/prometheus scraping it every
# 1 s (tests/integration/lib/prometheus.sh), waits for the first samples, then runs
# build/live_tick_bench against it and prints its tables. Everything it started is stopped by
# PID on exit (trap on EXIT, via itest_init). Not part of CTest.
#   bash scripts/bench_live.sh [extra live_tick_bench flags, e.g. --hung-ticks 20]
# Needs build/live_tick_bench (ninja -C build live_tick_bench); AISCALE_BUILD_DIR overrides.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${AISCALE_BUILD_DIR:-$root/build}
workloads=${BENCH_WORKLOADS:-1000}
bin="$build/live_tick_bench"
[ -x "$bin" ] || { echo "bench_live: $bin not built (ninja -C build live_tick_bench)" >&2; exit 2; }

# shellcheck source=tests/integration/lib/prometheus.sh
source "$root/tests/integration/lib/prometheus.sh"
itest_init

read -r exporter_port prom_port < <(free_ports 2)
itest_spawn exporter "$ITEST_PY" "$ITEST_TOOLS/many_targets.py" --port "$exporter_port" \
  --workloads "$workloads" --pods 2
wait_log_line "$ITEST_TMP/exporter.log" 'listening port=' 10 "$ITEST_LAST_PID"
echo "bench_live: exporter on 127.0.0.1:$exporter_port ($workloads workloads x 2 pods x 3 gauges)"

prom_start "$ITEST_TMP/prom" "$prom_port" "127.0.0.1:$exporter_port"
echo "bench_live: prometheus $(/usr/bin/prometheus --version 2>&1 | head -1 | awk '{print $3}') on $PROM_URL, scraping every 1 s"
last=$((workloads - 1))
for metric in vllm:num_requests_running vllm:num_requests_waiting vllm:kv_cache_usage_perc; do
  prom_wait_sample "$prom_port" "$metric{workload=\"w$last\"}" 30
done
echo "bench_live: first samples in; running $bin"
"$bin" --prometheus "$PROM_URL" --workloads "$workloads" "$@"
