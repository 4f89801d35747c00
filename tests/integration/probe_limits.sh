#!/bin/bash
# Issue 11's probe categories at the command line: `aiscale validate` and `aiscale simulate` on
# scenarios that are valid YAML but absurd (counts that would allocate past memory, work that
# would never end, numbers past their type's range, text that is not UTF-8). Each must exit 1
# with a message naming the field, within 10 s and 2 GiB of address space: no abort (134), no
# crash, no hang (124), and `validate` must never say ok to a file `simulate` refuses.
# Prints one line per case and a closing table per category.
# Usage: probe_limits.sh <aiscale binary> <source dir>
set -u
bin="$1"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
limit_s=10
limit_kb=$((2 * 1024 * 1024))

# training NAME SPEC_EXTRA CLUSTER JOB [WORKLOAD_EXTRA] [COMPARE]
training() {
  cat <<YAML
apiVersion: aiscale.dev/v1alpha1
kind: Scenario
spec:
  name: $1
  duration: 10h
$2
  cluster: {$3}
  workloads:
    - name: j
      kind: TrainingJob
      min_replicas: 1
      max_replicas: 4
      initial_replicas: 2
      policy: {name: static}
      job: {$4}
${5:-}
  compare: ${6:-[static]}
YAML
}

# inference NAME SPEC_EXTRA TRACE REPLICA [POLICY]
inference() {
  local pol="${5:-}"
  [ -n "$pol" ] || pol="{name: predictive, capacity_per_replica: 2}"
  cat <<YAML
apiVersion: aiscale.dev/v1alpha1
kind: Scenario
spec:
  name: $1
  duration: 1h
$2
  cluster: {nodes: 8, gpus_per_node: 8}
  workloads:
    - name: svc
      kind: InferenceService
      min_replicas: 1
      max_replicas: 8
      initial_replicas: 1
      policy: $pol
      service:
        trace: {format: rate_series, $3}
        replica: {$4}
        slo: {ttft_s: 2, latency_s: 20}
  compare: [static]
YAML
}

C="nodes: 4, gpus_per_node: 8"
J="total_steps: 1000, epochs: 2"
P="points: [[0, 2], [120, 0]]"
R="kind: llm, max_batch: 16"

declare -a names cats wants
n=0
add() {  # add CATEGORY NAME WANT (the file is on stdin)
  cat >"$tmp/case$n.yaml"
  cats[n]=$1 names[n]=$2 wants[n]=$3
  n=$((n + 1))
}

A="aborts on valid YAML"
add "$A" "1e9 nodes" "spec.cluster.nodes" < <(training a "" "nodes: 1e9, gpus_per_node: 8" "$J")
add "$A" "nodes x GPUs 1e10" "gpus_per_node" < <(training a "" "nodes: 100000, gpus_per_node: 64" "$J")
add "$A" "nodes past int" "spec.cluster.nodes" < <(training a "" "nodes: 1e10, gpus_per_node: 8" "$J")
add "$A" "failure rate 1e6" "rate_per_node_hour" < <(training a "  failures: [{rate_per_node_hour: 1e6}]" "$C" "$J")
add "$A" "failure rate x nodes x hours" "spec.failures" < <(training a "  failures: [{rate_per_node_hour: 3000}]" "$C" "$J")
add "$A" "invalid UTF-8 name" "spec.name" < <(training "$(printf '"t\xff"')" "" "$C" "$J")
add "$A" "invalid UTF-8 compare label" "label" < <(training a "" "$C" "$J" "" "$(printf '[{name: static, label: "s\xfe"}]')")
add "$A" "invalid UTF-8 compare entry" "spec.compare[0]" < <(training a "" "$C" "$J" "" "$(printf '["s\xc0\xaf"]')")
add "$A" "static replicas 1e9" "replicas" < <(training a "" "$C" "$J" "" "[{name: static, replicas: 1e9}]")
add "$A" "replica gpus 1e9" "replica.gpus" < <(inference a "" "$P" "$R, gpus: 1e9")

U="unbounded work"
add "$U" "control period rounds to 0 ns" "spec.control_period" < <(training a "  control_period: 1e-10" "$C" "$J")
add "$U" "report interval rounds to 0 ns" "spec.report_interval" < <(training a "  report_interval: 0.0000000001" "$C" "$J")
add "$U" "report interval 1 ms over 12 h" "spec.report_interval" < <(training a "  report_interval: 1ms" "$C" "$J" | sed 's/duration: 10h/duration: 12h/')
add "$U" "control period 1 ms over 10 h" "spec.control_period" < <(training a "  control_period: 1ms" "$C" "$J")
add "$U" "scrape interval 1 us" "spec.scrape_interval" < <(training a "  scrape_interval: 0.000001" "$C" "$J")
add "$U" "report interval past duration" "spec.report_interval" < <(training a "  report_interval: 11h" "$C" "$J")
add "$U" "total_steps 1e308" "job.total_steps" < <(training a "" "$C" "total_steps: 1e308, epochs: 2")
add "$U" "total_samples 1e308" "job.total_samples" < <(training a "" "$C" "total_samples: 1e308, epochs: 2")
add "$U" "sample_compute_s 1e300" "sample_compute_s" < <(training a "" "$C" "$J, compute: {sample_compute_s: 1e300}")
add "$U" "global_batch 2e9" "job.global_batch" < <(training a "" "$C" "$J, global_batch: 2e9")
add "$U" "eval.samples 1e308" "job.eval.samples" < <(training a "" "$C" "$J, eval: {every_epochs: 1, samples: 1e308}")
add "$U" "epochs 2e9" "job.epochs" < <(training a "" "$C" "total_steps: 1000, epochs: 2000000000")
add "$U" "bandwidth 1e-300" "storage_gb_per_s" < <(training a "" "$C" "$J, load: {initial_gb: 10, storage_gb_per_s: 1e-300}")
add "$U" "rate series 1e9 requests" "trace.points" < <(inference a "" "points: [[0, 1000000], [1000, 0]]" "$R")
add "$U" "1e10 requests at one instant" "trace.points" < <(inference a "" "points: [[0, 1e16], [0.000001, 0]]" "$R")
add "$U" "1e6 requests at one instant" "trace.points" < <(inference a "" "points: [[0, 1e12], [0.000001, 0]]" "$R")
add "$U" "1e5 requests at one instant" "trace.points" < <(inference a "" "points: [[0, 1e11], [0.000001, 0]]" "$R")
add "$U" "input tokens 2e9" "input_tokens" < <(inference a "" "$P, input_tokens: 2000000000" "$R")
# Issue 27 §6: validated ok, then the phase scheduler looped forever / the oracle allocated one
# entry per interval of a trace stretched past the int64 range.
add "$U" "total_steps 1e-12 (less than a step)" "job.total_steps" < <(training a "" "$C" "total_steps: 1e-12, epochs: 2")
add "$U" "total_samples below one batch" "job.total_samples" < <(training a "" "$C" "total_samples: 1, global_batch: 64, epochs: 2")
add "$U" "time_compression stretches arrivals past int64" "trace" < <(inference a "" "points: [[0, 0.0001], [1000000000, 0]], time_compression: 0.001" "$R")

N="numbers past their type's range"
add "$N" "duration 1e10 s" "spec.duration" < <(training a "" "$C" "$J" | sed 's/duration: 10h/duration: 1e10/')
add "$N" "failure at 1e10 s" "spec.failures[0].at" < <(training a "  failures: [{at: 1e10s}]" "$C" "$J")
add "$N" "checkpoint 1e10 s" "restart.checkpoint" < <(training a "" "$C" "$J, restart: {checkpoint: 1e10}")
add "$N" "provisioning delay 1e10 s" "provisioning_delay" < <(training a "" "$C, provisioning_delay: 1e10" "$J")
add "$N" "service time 1e10 s" "service_time.mean_s" < <(inference a "" "$P" "kind: plain, service_time: {mean_s: 1e10}")
add "$N" "prefill per token 1e10 s" "prefill_s_per_token" < <(inference a "" "$P" "$R, prefill_s_per_token: 1e10")
add "$N" "kpa stable window 3e9 s" "stable_window" < <(inference a "" "$P" "$R" "{name: kpa, stable_window: 3e9}")
add "$N" "initial replicas 3e9" "initial_replicas" < <(training a "" "$C" "$J" | sed 's/initial_replicas: 2/initial_replicas: 3e9/')
add "$N" "trace start 1e10 s" "trace.start_s" < <(inference a "" "$P, start_s: 1e10" "$R")
add "$N" "price 1e300" "price_per_gpu_hour" < <(training a "" "$C, price_per_gpu_hour: 1e300" "$J")

fails=0
declare -A total clean
for ((i = 0; i < n; i++)); do
  cat_="${cats[i]}"
  total[$cat_]=$((${total[$cat_]:-0} + 1))
  ok=1
  for cmd in validate simulate; do
    args=("$tmp/case$i.yaml")
    [ "$cmd" = simulate ] && args+=(--quiet --out "$tmp/out$i")
    out="$(timeout "$limit_s" bash -c 'ulimit -v '"$limit_kb"'; exec "$@"' _ "$bin" "$cmd" \
      "${args[@]}" 2>&1)"
    rc=$?
    if [ "$rc" -ne 1 ] || [[ "$out" != *"${wants[i]}"* ]]; then
      ok=0
      echo "FAIL [$cat_] ${names[i]}: $cmd exit $rc (want 1 naming '${wants[i]}'): ${out:0:300}"
    fi
  done
  if [ "$ok" = 1 ]; then
    clean[$cat_]=$((${clean[$cat_]:-0} + 1))
    echo "ok   [$cat_] ${names[i]}"
  else
    fails=$((fails + 1))
  fi
done

# conformance: a number past a double's range is a clean error, not an abort.
echo '{"kind": "hpa", "cases": [{"name": "x", "currentReplicas": 1e999}]}' >"$tmp/c.json"
out="$(timeout "$limit_s" "$bin" conformance hpa "$tmp/c.json" 2>&1)"
rc=$?
if [ "$rc" -ne 1 ] && [ "$rc" -ne 2 ]; then  # 2: the file is not a vector file
  echo "FAIL conformance hpa 1e999: exit $rc: ${out:0:300}"
  fails=$((fails + 1))
fi

echo
echo "category | cases | exit 1 naming the field, <= ${limit_s} s, <= 2 GiB"
for c in "$A" "$U" "$N"; do echo "$c | ${total[$c]:-0} | ${clean[$c]:-0}"; done
[ "$fails" -eq 0 ] || { echo "$fails case(s) failed"; exit 1; }
echo "all $n cases exit cleanly"
