#!/bin/bash
# report_render: how long report.html takes to open and render in headless Chromium, and its
# size (issue 25's target: the alibaba-genai scenario's report in <= 3 s).
#
#   bash bench/report_render.sh [SCENARIO] [AISCALE] [RUNS]
#
# Simulates SCENARIO (default examples/inference-alibaba-genai.yaml) with AISCALE (default
# build/aiscale), then, RUNS times (default 5) each, interleaved: (a) launches Chromium on the
# report with a fresh profile (--headless --no-sandbox --disable-gpu
# --disable-background-networking --disable-component-update --disable-sync --no-first-run)
# and times launch to a saved screenshot; (b) the same on an empty page, so the browser's own
# start-up is known; (c) in a browser already running (tests/integration/tools/browser_check.py
# over the DevTools protocol), the time from asking for the page to its load event and to a
# rendered frame. Prints the medians. Run it on a quiet machine: the figures are wall times.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
scenario=${1:-$root/examples/inference-alibaba-genai.yaml}
aiscale=${2:-$root/build/aiscale}
runs=${3:-5}
chromium=${CHROMIUM:-/usr/bin/chromium}
[ -x "$chromium" ] || { echo "report_render: $chromium missing (apt-get install chromium)" >&2; exit 2; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

t0=$(date +%s.%N)
"$aiscale" simulate "$scenario" --out "$work/out" --quiet >/dev/null
t1=$(date +%s.%N)
page=$work/out/report.html
printf '<!DOCTYPE html><html><head><meta charset="utf-8"></head><body></body></html>\n' \
  >"$work/empty.html"

shot() {  # shot FILE: seconds from launch to a saved screenshot of FILE
  local prof
  prof=$(mktemp -d -p "$work")
  local a b
  a=$(date +%s.%N)
  "$chromium" --headless --no-sandbox --disable-gpu --disable-background-networking \
    --disable-component-update --disable-sync --no-first-run --user-data-dir="$prof" \
    --hide-scrollbars --window-size=1400,1000 --screenshot="$prof/shot.png" \
    "file://$1" >/dev/null 2>&1
  b=$(date +%s.%N)
  [ -s "$prof/shot.png" ] || { echo "report_render: no screenshot of $1" >&2; exit 1; }
  awk -v a="$a" -v b="$b" 'BEGIN {print b - a}'
}
median() { sort -g | awk '{v[NR] = $1} END {print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }

report=() empty=() load=() frame=()
for _ in $(seq "$runs"); do
  report+=("$(shot "$page")")
  empty+=("$(shot "$work/empty.html")")
  json=$(python3 "$root/tests/integration/tools/browser_check.py" --chromium "$chromium" \
    --page "$page" --timeout 120)
  load+=("$(python3 -c 'import json,sys; print(json.loads(sys.argv[1])["navigate_to_load_s"])' "$json")")
  frame+=("$(python3 -c 'import json,sys; print(json.loads(sys.argv[1])["navigate_to_frame_s"])' "$json")")
done
size=$(stat -c %s "$page")
printf 'scenario %s (simulated in %s s)\n' "$scenario" "$(awk -v a="$t0" -v b="$t1" 'BEGIN {printf "%.1f", b - a}')"
printf 'report.html: %s bytes (%s MiB)\n' "$size" "$(awk -v s="$size" 'BEGIN {printf "%.1f", s / 1048576}')"
printf 'launch -> screenshot, report.html: median %.2f s (%s)\n' \
  "$(printf '%s\n' "${report[@]}" | median)" "$(printf '%.2f ' "${report[@]}")"
printf 'launch -> screenshot, empty page:  median %.2f s (%s)\n' \
  "$(printf '%s\n' "${empty[@]}" | median)" "$(printf '%.2f ' "${empty[@]}")"
printf 'open in a running browser: load event median %.2f s, rendered frame median %.2f s\n' \
  "$(printf '%s\n' "${load[@]}" | median)" "$(printf '%s\n' "${frame[@]}" | median)"
