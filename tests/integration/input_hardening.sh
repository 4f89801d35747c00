#!/bin/bash
# Issue 11's probe categories, from the command line: special files, inputs that used to be
# accepted silently, hostile nesting, and outputs that must be atomic. Every bad input must
# make `aiscale validate`, `simulate` or `conformance` exit non-zero within 10 s, not by a
# signal (no abort, no hang), with the file (and the line, where there is one) in the message.
# The output checks kill `simulate` with SIGTERM at several points while it writes and require
# report.json to be absent, the old complete file or the new complete file (never truncated),
# run two simulations into one --out at once (one must fail clearly), and rerun with fewer
# policies (the old decision logs must go). Prints per-category counts.
# Usage: input_hardening.sh <aiscale binary> <source dir>
set -u
bin="$1"
tmp=$(mktemp -d)
pids=()
cleanup() {
  local p
  for p in "${pids[@]}"; do kill -KILL "$p" 2>/dev/null; done
  rm -rf "$tmp"
}
trap cleanup EXIT
declare -A total ok
failed=0

note() { # CATEGORY PASSED(0/1) MESSAGE
  total[$1]=$((${total[$1]:-0} + 1))
  if [ "$2" = 1 ]; then
    ok[$1]=$((${ok[$1]:-0} + 1))
  else
    failed=$((failed + 1))
    echo "FAIL [$1] $3"
  fi
}

# expect_error CATEGORY NAME WANT... -- ARGS: aiscale ARGS must exit 1 or 2 within 10 s, and
# its output must contain every WANT.
expect_error() {
  local cat=$1 name=$2 wants=() out rc w good=1
  shift 2
  while [ "$1" != "--" ]; do
    wants+=("$1")
    shift
  done
  shift
  out=$(timeout 10 "$bin" "$@" 2>&1 </dev/null)
  rc=$?
  if [ "$rc" != 1 ] && [ "$rc" != 2 ]; then
    good=0
    [ "$rc" = 124 ] && out="(hung: killed after 10 s) $out"
  fi
  for w in "${wants[@]}"; do
    case "$out" in *"$w"*) ;; *) good=0 ;; esac
  done
  note "$cat" "$good" "$name: exit $rc, want '${wants[*]}', got: ${out:0:400}"
}

# scenario FORMAT TRACE_PATH [EXTRA YAML LINES]: a small inference scenario on a trace.
scenario() {
  cat <<YAML
apiVersion: aiscale.dev/v1alpha1
kind: Scenario
spec:
  name: probe
  seed: 1
  duration: 1h
  control_period: 15s
  report_interval: 60s
  scrape_interval: 15s
  cluster: {nodes: 8, gpus_per_node: 8, gpu_type: H100-80GB, price_per_gpu_hour: 2.5}
  workloads:
    - name: svc
      kind: InferenceService
      min_replicas: 1
      max_replicas: 4
      initial_replicas: 1
      policy: {name: static, replicas: 1}
      service:
        trace: {format: $1, path: '$2'}
        replica: {kind: llm, gpus: 1, max_batch: 8, kv_capacity_tokens: 100000, prefill_s_per_token: 0.0001, decode_base_s: 0.03, decode_per_seq_s: 0.0004}
        slo: {ttft_s: 2, latency_s: 20, attainment: 0.99}
        queue: {timeout_s: 60}
YAML
  [ $# -ge 3 ] && printf '%s\n' "$3"
}

gz() { /usr/bin/python3 -c 'import gzip,sys; sys.stdout.buffer.write(gzip.compress(sys.stdin.buffer.read()))'; }

azure_head='TIMESTAMP,ContextTokens,GeneratedTokens'
row() { echo "2023-11-16 18:15:$(printf %02d "$1"),100,10"; }
{
  echo "$azure_head"
  for i in 1 2 3 4 5; do row $i; done
} >"$tmp/good.csv"
scenario azure_llm "$tmp/good.csv" >"$tmp/good.yaml"
"$bin" validate "$tmp/good.yaml" >/dev/null 2>&1 || {
  echo "FAIL: the valid base scenario does not validate"
  "$bin" validate "$tmp/good.yaml"
  exit 1
}
hpa_ok='{"kind": "hpa", "cases": [{"name": "b", "step": "behavior", "currentReplicas": 2, "recommendation": 3, "minReplicas": 1, "maxReplicas": 5, "expectedReplicas": 3}]}'
echo "$hpa_ok" >"$tmp/hpa.json"
"$bin" conformance hpa "$tmp/hpa.json" >/dev/null 2>&1 || {
  echo "FAIL: the valid base vector file does not pass"
  exit 1
}

# --- Special files -------------------------------------------------------------------------
mkfifo "$tmp/fifo"
mkdir "$tmp/dir"
python3 -c "import sys; sys.stdout.write('#' * (17 << 20))" >"$tmp/big.yaml"
truncate -s 9G "$tmp/huge.csv" 2>/dev/null || true
for target in "$tmp/fifo" /dev/zero "$tmp/dir" "$tmp/big.yaml" /proc/self/status; do
  expect_error special "validate $target" "$target" "unable to read config file" -- validate "$target"
  expect_error special "simulate $target" "$target" -- simulate "$target" --out "$tmp/o-special" --quiet
  expect_error special "conformance hpa $target" "$target" -- conformance hpa "$target"
  expect_error special "conformance kpa $target" "$target" -- conformance kpa "$target"
done
specials=("$tmp/fifo" /dev/zero "$tmp/dir")
[ -f "$tmp/huge.csv" ] && specials+=("$tmp/huge.csv")
for target in "${specials[@]}"; do
  for format in azure_llm mooncake alibaba_genai rate_series; do
    scenario "$format" "$target" >"$tmp/s-special.yaml"
    expect_error special "$format trace $target" "s-special.yaml:19:" "$target" -- \
      validate "$tmp/s-special.yaml"
  done
done

# --- Silently accepted -----------------------------------------------------------------------
check_yaml() { # NAME WANT... -- (the scenario on stdin)
  local name=$1
  shift
  cat >"$tmp/y.yaml"
  expect_error silent "$name" "$@" -- validate "$tmp/y.yaml"
  expect_error silent "$name (simulate)" "$@" -- simulate "$tmp/y.yaml" --out "$tmp/o-y" --quiet
}
check_yaml "duplicate key" "y.yaml:6:3" "duplicate key 'seed' (first at line 5)" < <(sed 's/^  seed: 1$/  seed: 1\n  seed: 2/' "$tmp/good.yaml")
second_line=$(($(wc -l <"$tmp/good.yaml") + 1)) # its "---"
check_yaml "second document" "y.yaml:$second_line:1" "a second YAML document" < <({ cat "$tmp/good.yaml"; printf -- '---\nspec: {}\n'; })
check_yaml "compare labels share a log" "y.yaml:" "'a_b'" "'a/b'" "decisions-a_b.jsonl" < <(scenario azure_llm "$tmp/good.csv" "  compare: [static, {name: static, label: 'a/b'}, {name: static, label: a_b}]")

check_trace() { # FORMAT NAME WANT... -- (the trace bytes on stdin)
  local format=$1 name=$2
  shift 2
  cat >"$tmp/t-$name"
  scenario "$format" "$tmp/t-$name" >"$tmp/t.yaml"
  expect_error silent "$name" "t.yaml:19:" "$tmp/t-$name" "$@" -- validate "$tmp/t.yaml"
}
check_trace azure_llm dup-column "column ContextTokens appears twice in the header (columns 2 and 4)" < <(printf '%s,ContextTokens\n%s,5\n' "$azure_head" "$(row 1)")
check_trace azure_llm feb31 ":2: field TIMESTAMP: no such date or time" < <(printf '%s\n2023-02-31 10:00:00,5,1\n' "$azure_head")
check_trace azure_llm hour25 ":2: field TIMESTAMP: no such date or time" < <(printf '%s\n2023-02-01 25:00:00,5,1\n' "$azure_head")
check_trace azure_llm open-quote ":3: quoted field opened here is not closed" < <(printf '%s\n%s\n2023-11-16 18:16:00,"5,1\n' "$azure_head" "$(row 1)")
check_trace mooncake moon-dup ":1: duplicate key 'input_length'" < <(printf '{"timestamp": 0, "input_length": 5, "output_length": 1, "input_length": 7}\n' | gz)
check_trace mooncake moon-frac ":1: field input_length: must be a whole number" < <(printf '{"timestamp": 0, "input_length": 5.5, "output_length": 1}\n' | gz)
check_trace mooncake gzip-then-plain "after line 1" "not gzip" < <(
  printf '{"timestamp": 0, "input_length": 5, "output_length": 1}\n' | gz
  printf '{"timestamp": 1, "input_length": 5, "output_length": 1}\n'
)
check_trace alibaba_genai ali-feb29 ":2: field gmt_create: no such date or time" < <(printf 'gmt_create,prompt_length,num_images_per_prompt,num_inference_steps\n2023-02-29 10:00:00,5,1,30\n' | gz)
check_trace rate_series rate-dup "column t_s appears twice" < <(printf 't_s,rate_per_s,t_s\n0,1,0\n60,1,60\n')

# A quoted comma parses into the right column: the run sees every request.
{
  echo "TIMESTAMP,Note,ContextTokens,GeneratedTokens"
  echo '2023-11-16 18:15:01,"a, ""b""",100,10'
  printf '2023-11-16 18:15:02,"two\nlines, here",100,10\n'
} >"$tmp/quoted.csv"
scenario azure_llm "$tmp/quoted.csv" >"$tmp/quoted.yaml"
if timeout 10 "$bin" simulate "$tmp/quoted.yaml" --out "$tmp/o-quoted" --quiet >/dev/null 2>&1 &&
  python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); sys.exit(0 if r["runs"][0]["requests"] == 2 else 1)' \
    "$tmp/o-quoted/report.json"; then
  note silent 1 ""
else
  note silent 0 "quoted CSV fields: the run does not see exactly 2 requests"
fi

conf() { # KIND NAME WANT... -- (the vector file on stdin)
  local kind=$1 name=$2
  shift 2
  cat >"$tmp/c-$name.json"
  expect_error silent "conformance $name" "$tmp/c-$name.json" "$@" -- conformance "$kind" "$tmp/c-$name.json"
}
conf hpa min-gt-max "case 0 (b)" "minReplicas 9 > maxReplicas 5" < <(sed 's/"minReplicas": 1/"minReplicas": 9/' "$tmp/hpa.json")
conf hpa negative "case 0 (b)" "currentReplicas: must be >= 0" < <(sed 's/"currentReplicas": 2/"currentReplicas": -2/' "$tmp/hpa.json")
conf hpa dup-key "duplicate key 'minReplicas'" < <(sed 's/"minReplicas": 1/"minReplicas": 1, "minReplicas": 2/' "$tmp/hpa.json")
conf kpa negative "cases[0] (c).readyPods: must be >= 0" < <(echo '{"kind": "kpa", "cases": [{"name": "c", "config": {"targetConcurrency": 10}, "readyPods": -1, "samples": [], "expectedPods": 1, "expectedPanic": false}]}')

# --- Nesting depth -------------------------------------------------------------------------
python3 -c "print('apiVersion: aiscale.dev/v1alpha1\nkind: Scenario\nspec: {x: ' + '['*100000)" >"$tmp/deep.yaml"
expect_error depth "yaml 100k [" "deep.yaml:" -- validate "$tmp/deep.yaml"
python3 -c "print('apiVersion: aiscale.dev/v1alpha1\nkind: Scenario\nspec: {x: ' + '['*80 + ']'*80 + '}')" >"$tmp/deep80.yaml"
expect_error depth "yaml depth 80" "deep80.yaml:3:" "nested deeper than 64 levels" -- validate "$tmp/deep80.yaml"
python3 -c "print('[' * 100000)" >"$tmp/deep.json"
expect_error depth "json 100k [ (hpa)" "deep.json" "nested deeper than 64 levels" -- conformance hpa "$tmp/deep.json"
expect_error depth "json 100k [ (kpa)" "deep.json" "nested deeper than 64 levels" -- conformance kpa "$tmp/deep.json"
python3 -c "print('{\"timestamp\": 0, \"input_length\": 1, \"output_length\": 1, \"x\": ' + '['*100 + ']'*100 + '}')" >"$tmp/deep.jsonl"
scenario mooncake "$tmp/deep.jsonl" >"$tmp/deep-moon.yaml"
expect_error depth "mooncake depth 100" "deep.jsonl:1:" "nested deeper than 64" -- validate "$tmp/deep-moon.yaml"

# --- Outputs -------------------------------------------------------------------------------
# A run that takes a while: many requests, two policies.
python3 - "$tmp/long.csv" <<'EOF'
import sys
n = 60000
with open(sys.argv[1], "w") as f:
    f.write("TIMESTAMP,ContextTokens,GeneratedTokens\n")
    for i in range(n):
        t = i * 3600.0 / n
        f.write("2023-11-16 %02d:%02d:%09.6f,200,20\n" % (10 + int(t // 3600), int(t % 3600) // 60, t % 60))
EOF
scenario azure_llm "$tmp/long.csv" "  compare: [static, {name: static, label: extra, replicas: 2}]" >"$tmp/long.yaml"
out="$tmp/o-long"
start=$(date +%s%N)
timeout 60 "$bin" simulate "$tmp/long.yaml" --out "$out" --quiet >/dev/null 2>&1
rc=$?
full_ms=$((($(date +%s%N) - start) / 1000000))
note outputs "$([ $rc = 0 ] && echo 1 || echo 0)" "the long run itself failed (exit $rc)"
cp "$out/report.json" "$tmp/report.first"
valid_report() { # FILE: absent, or complete JSON
  [ ! -e "$1" ] || python3 -c 'import json,sys; json.load(open(sys.argv[1]))' "$1" 2>/dev/null
}
# SIGTERM at spread-out moments over the run (and past it, into the writes).
for frac in 10 30 50 70 85 90 95 98 99 100 102 105; do
  delay=$(awk -v ms="$full_ms" -v f="$frac" 'BEGIN { printf "%.3f", ms * f / 100000 }')
  "$bin" simulate "$tmp/long.yaml" --out "$out" --quiet >/dev/null 2>&1 &
  p=$!
  pids+=("$p")
  sleep "$delay"
  kill -TERM "$p" 2>/dev/null
  wait "$p" 2>/dev/null
  # The runs are deterministic: a complete report.json, old or new, equals the first one.
  if valid_report "$out/report.json" && cmp -s "$out/report.json" "$tmp/report.first"; then
    note outputs 1 ""
  else
    note outputs 0 "SIGTERM at ${frac}% left a report.json that is not the whole report"
  fi
done
# SIGTERM at the moment the first output file appears in the folder, and a few ms after: the
# write itself. An empty folder each time, so "absent" is the only other outcome allowed.
for after_ms in 0 0 1 2 5 10; do
  rm -rf "$out"
  python3 - "$bin" "$tmp/long.yaml" "$out" "$after_ms" <<'EOF'
import os, signal, subprocess, sys, time
binary, scenario, out, after_ms = sys.argv[1], sys.argv[2], sys.argv[3], float(sys.argv[4])
p = subprocess.Popen([binary, "simulate", scenario, "--out", out, "--quiet"],
                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
deadline = time.time() + 60
while p.poll() is None and time.time() < deadline:
    try:
        names = [n for n in os.listdir(out) if n != ".aiscale.lock"]
    except FileNotFoundError:
        names = []
    if names:
        time.sleep(after_ms / 1000)
        break
    time.sleep(0.0002)
p.send_signal(signal.SIGTERM)
p.wait(timeout=60)
EOF
  if [ ! -e "$out/report.json" ] ||
    { valid_report "$out/report.json" && cmp -s "$out/report.json" "$tmp/report.first"; }; then
    note outputs 1 ""
  else
    note outputs 0 "SIGTERM ${after_ms} ms into the writes left a report.json that is not whole ($(wc -c <"$out/report.json") bytes)"
  fi
done
# Two runs into one --out at once: one wins, the other fails at once and says why.
rm -rf "$out"
"$bin" simulate "$tmp/long.yaml" --out "$out" --quiet >"$tmp/a.log" 2>&1 &
a=$!
pids+=("$a")
# The pid goes into the lock file once the lock is held; a loaded machine may take a while.
for _ in $(seq 200); do
  [ -s "$out/.aiscale.lock" ] && break
  sleep 0.05
done
expect_error outputs "second run into a busy --out" "is in use by another aiscale run" -- \
  simulate "$tmp/good.yaml" --out "$out" --quiet
wait "$a"
note outputs "$([ $? = 0 ] && echo 1 || echo 0)" "the first of two concurrent runs failed: $(head -c 300 "$tmp/a.log")"
valid_report "$out/report.json"
note outputs "$([ $? = 0 ] && [ -f "$out/report.json" ] && echo 1 || echo 0)" "report.json after the concurrent runs is not complete"
# A rerun with fewer policies leaves no stale decision log.
timeout 10 "$bin" simulate "$tmp/good.yaml" --out "$out" --quiet >/dev/null 2>&1
logs=$(cd "$out" && ls decisions-*.jsonl | tr '\n' ' ')
note outputs "$([ "$logs" = "decisions-static.jsonl " ] && echo 1 || echo 0)" "stale decision logs after a rerun: $logs"
left=$(cd "$out" && ls -A | grep -c '^\.aiscale-tmp-')
note outputs "$([ "$left" = 0 ] && echo 1 || echo 0)" "$left temporary files left after a clean rerun"

for c in special silent depth outputs; do
  echo "$c: ${ok[$c]:-0} of ${total[$c]:-0} probe cases exit cleanly"
done
[ "$failed" = 0 ] || exit 1
echo "PASS"
