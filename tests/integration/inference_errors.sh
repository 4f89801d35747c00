#!/bin/bash
# `aiscale validate` and `aiscale simulate` on inference scenarios with one bad value each, and
# on scenarios whose trace file is malformed: both commands must exit 1 (not 0, not killed by a
# signal, not hang) and print the error with the file:line:column of the value and its field
# path (for a bad trace file: the trace file's own line and field as well). The valid base is
# checked first, so a broken harness cannot pass.
# Usage: inference_errors.sh <aiscale binary> <source dir>
set -u
bin="$1"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
status=0
passed=0
failed=0

# The valid scenario (line numbers matter: the cases replace lines by number).
cat >"$tmp/base.yaml" <<'EOF'
apiVersion: aiscale.dev/v1alpha1
kind: Scenario
spec:
  name: t
  seed: 1
  duration: 1h
  cluster:
    nodes: 8
    gpus_per_node: 8
  workloads:
    - name: svc
      kind: InferenceService
      min_replicas: 1
      max_replicas: 8
      initial_replicas: 1
      policy:
        name: predictive
        signal: request_rate
        capacity_per_replica: 2.0
      service:
        trace:
          format: rate_series
          points: [[0, 2], [120, 0]]
          rate_multiplier: 1
          time_compression: 1
        replica:
          kind: llm
          gpus: 1
          max_batch: 16
          kv_capacity_tokens: 100000
        cold_start:
          provisioning_s: 30
          model_load_s: 60
        price_per_gpu_hour: 2.5
        slo:
          ttft_s: 2
          latency_s: 20
          attainment: 0.99
        queue:
          timeout_s: 60
        oracle: {interval_s: 60}
  compare: [predictive, static]
EOF

# make NAME LINE TEXT [LINE TEXT]...: base.yaml with those lines replaced, as NAME.yaml.
make() {
  local name="$1"
  shift
  local script=""
  local -a vars=()
  local i=0
  while [ $# -ge 2 ]; do
    vars+=(-v "l$i=$1" -v "t$i=$2")
    script+="NR == l$i { print t$i; next } "
    i=$((i + 1))
    shift 2
  done
  awk "${vars[@]}" "$script { print }" "$tmp/base.yaml" >"$tmp/$name.yaml"
}

# run_both FILE WANT...: each command exits 1 and prints every WANT (a fixed string).
run_both() {
  local f="$1"
  shift
  local cmd out rc ok=1
  for cmd in validate simulate; do
    if [ "$cmd" = validate ]; then
      out=$(timeout 60 "$bin" validate "$f" 2>&1)
    else
      out=$(timeout 60 "$bin" simulate "$f" --out "$tmp/out" --quiet 2>&1)
    fi
    rc=$?
    if [ "$rc" -ne 1 ]; then
      case $rc in
        0) why="accepted" ;;
        124) why="hung (killed after 60 s)" ;;
        *) why="exit $rc$([ "$rc" -ge 128 ] && echo " (signal $((rc - 128)))")" ;;
      esac
      echo "FAIL $(basename "$f") $cmd: $why"
      printf '%s\n' "$out" | tail -n 3
      ok=0
      continue
    fi
    local w
    for w in "$@"; do
      if ! printf '%s\n' "$out" | grep -qF -- "$w"; then
        echo "FAIL $(basename "$f") $cmd: message lacks: $w"
        printf '%s\n' "$out" | tail -n 3
        ok=0
      fi
    done
  done
  if [ $ok = 1 ]; then
    echo "ok   $(basename "$f")"
    passed=$((passed + 1))
  else
    failed=$((failed + 1))
    status=1
  fi
}

# The base is valid and simulates.
if "$bin" validate "$tmp/base.yaml" >/dev/null 2>&1 &&
  "$bin" simulate "$tmp/base.yaml" --out "$tmp/out" --quiet >/dev/null 2>&1; then
  echo "ok   base.yaml (valid, simulates)"
  passed=$((passed + 1))
else
  echo "FAIL base.yaml: the valid base does not validate and simulate"
  failed=$((failed + 1))
  status=1
fi

s="spec.workloads[0].service"
# name | line | replacement | expected "line:column: path: message"
while IFS='|' read -r name line text want; do
  [ -z "$name" ] && continue
  make "$name" "$line" "$text"
  run_both "$tmp/$name.yaml" "$tmp/$name.yaml:$want"
done <<EOF
zero_batch|29|          max_batch: 0|29:22: $s.replica.max_batch: must be >= 1, got 0
huge_batch|29|          max_batch: 2000000000|29:22: $s.replica.max_batch: must be <= 65536
zero_kv|30|          kv_capacity_tokens: 0|30:31: $s.replica.kv_capacity_tokens: must be >= 1, got 0
zero_gpus|28|          gpus: 0|28:17: $s.replica.gpus: must be >= 1, got 0
negative_provisioning|32|          provisioning_s: -1|32:27: $s.cold_start.provisioning_s: must be >= 0, got -1
negative_model_load|33|          model_load_s: -5|33:25: $s.cold_start.model_load_s: must be >= 0, got -5
negative_price|34|        price_per_gpu_hour: -2.5|34:29: $s.price_per_gpu_hour: must be >= 0, got -2.5
zero_ttft|36|          ttft_s: 0|36:19: $s.slo.ttft_s: must be > 0, got 0
zero_latency|37|          latency_s: 0|37:22: $s.slo.latency_s: must be > 0, got 0
zero_attainment|38|          attainment: 0|38:23: $s.slo.attainment: must be > 0
attainment_above_one|38|          attainment: 1.5|38:23: $s.slo.attainment: must be <= 1, got 1.5
zero_queue_timeout|40|          timeout_s: 0|40:22: $s.queue.timeout_s: must be > 0, got 0
tiny_oracle_interval|41|        oracle: {interval_s: 1e-12}|41:30: $s.oracle.interval_s: must be >= 1
zero_rate_multiplier|24|          rate_multiplier: 0|24:28: $s.trace.rate_multiplier: must be > 0, got 0
negative_time_compression|25|          time_compression: -1|25:29: $s.trace.time_compression: must be >= 0.001, got -1
zero_capacity_per_replica|19|        capacity_per_replica: 0|19:31: spec.workloads[0].policy.capacity_per_replica: must be > 0, got 0
unknown_field|34|        price_per_gpu: 2.5|34:9: $s.price_per_gpu: unknown field
EOF

# Malformed trace files, next to the scenario and named by a relative path.
printf 'TIMESTAMP,ContextTokens\n2023-11-16 18:17:03,1\n' >"$tmp/missing_column.csv"
printf 'TIMESTAMP,ContextTokens,GeneratedTokens\n2023-11-16 18:17:03,5,x1\n' >"$tmp/bad_number.csv"
printf 'TIMESTAMP,ContextTokens,GeneratedTokens\n2023-11-16 18:17:05,1,1\n2023-11-16 18:17:04,1,1\n' \
  >"$tmp/backwards.csv"
: >"$tmp/empty.csv"
printf '{"timestamp": 0, "input_length": 5}\n' >"$tmp/moon_missing.jsonl"
printf '{"timestamp": 3, "input_length": 5, "output_length": 2}\n{"timestamp": 2, "input_length": 5, "output_length": 2}\n' \
  >"$tmp/moon_backwards.jsonl"
printf 'gmt_create,prompt_length,num_images_per_prompt,num_inference_steps\n2024-11-15 16:57:50,63,1,thirty\n' \
  >"$tmp/ali_bad_number.csv"
: >"$tmp/ali_empty.csv"
# name | format | trace file | expected "line: field NAME: message" in the trace file
while IFS='|' read -r name format file want; do
  [ -z "$name" ] && continue
  make "$name" 22 "          format: $format" 23 "          path: $file"
  run_both "$tmp/$name.yaml" "$tmp/$name.yaml:23:17: $s.trace.path: " "$tmp/$file:$want"
done <<EOF
azure_missing_column|azure_llm|missing_column.csv|1: field GeneratedTokens: missing column
azure_bad_number|azure_llm|bad_number.csv|2: field GeneratedTokens: unparsable number 'x1'
azure_backwards|azure_llm|backwards.csv|3: field TIMESTAMP: time goes backwards
azure_empty|azure_llm|empty.csv|1: empty file
mooncake_missing_field|mooncake|moon_missing.jsonl|1: field output_length: missing field
mooncake_backwards|mooncake|moon_backwards.jsonl|2: field timestamp: time goes backwards
alibaba_bad_number|alibaba_genai|ali_bad_number.csv|2: field num_inference_steps: unparsable number 'thirty'
alibaba_empty|alibaba_genai|ali_empty.csv|1: empty file
EOF

echo "inference_errors: $passed passed, $failed failed"
exit $status
