#!/bin/bash
# report_render: how long report.html takes to open and render in headless Chromium, and its
# size (issue 25's target: the alibaba-genai scenario's report in <= 3 s).
#
#   bash bench/report_render.sh [SCENARIO] [AISCALE] [RUNS]
#
# Simulates SCENARIO (default examples/inference-alibaba-genai.yaml) with AISCALE (default
# build/aiscale), then, RUNS times (default 5), interleaved:
#   (a) launches Chromium on the report with a fresh profile (--headless --no-sandbox
#       --disable-gpu --disable-background-networking --disable-component-update
#       --disable-sync --no-first-run) and times launch to a saved screenshot: wall time, and
#       the CPU time of the whole browser (all its processes);
#   (b) the same on an empty page: the browser's own start-up;
#   (c) in a browser already running (tests/integration/tools/browser_check.py over the
#       DevTools protocol): wall time from asking for the page to a rendered frame, and the
#       CPU its renderer process spent to get there (Performance.getMetrics ProcessTime).
# Prints the medians. Wall times depend on what else the machine runs; the CPU times much less.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
scenario=${1:-$root/examples/inference-alibaba-genai.yaml}
aiscale=${2:-$root/build/aiscale}
runs=${3:-5}
chromium=${CHROMIUM:-/usr/bin/chromium}
[ -x "$chromium" ] || { echo "report_render: $chromium missing (apt-get install chromium)" >&2; exit 2; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

start=$SECONDS
"$aiscale" simulate "$scenario" --out "$work/out" --quiet >/dev/null
page=$work/out/report.html
printf '<!DOCTYPE html><html><head><meta charset="utf-8"></head><body></body></html>\n' \
  >"$work/empty.html"

# shot FILE: "WALL CPU" seconds from launch to a saved screenshot of FILE.
shot() {
  python3 - "$chromium" "$1" "$work" <<'PY'
import os, resource, subprocess, sys, tempfile, time
chromium, page, work = sys.argv[1:]
with tempfile.TemporaryDirectory(dir=work) as prof:
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.monotonic()
    subprocess.run([chromium, "--headless", "--no-sandbox", "--disable-gpu",
                    "--disable-background-networking", "--disable-component-update",
                    "--disable-sync", "--no-first-run", "--user-data-dir=" + prof,
                    "--hide-scrollbars", "--window-size=1400,1000",
                    "--screenshot=" + prof + "/shot.png", "file://" + page],
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
    t1 = time.monotonic()
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    if not os.path.getsize(prof + "/shot.png"):
        sys.exit("report_render: no screenshot of " + page)
    print("%.3f %.3f" % (t1 - t0, r1.ru_utime - r0.ru_utime + r1.ru_stime - r0.ru_stime))
PY
}
median() { sort -g | awk '{v[NR] = $1} END {print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }

rep_wall=() rep_cpu=() empty_wall=() empty_cpu=() frame=() renderer=()
for _ in $(seq "$runs"); do
  read -r w c <<<"$(shot "$page")"
  rep_wall+=("$w") rep_cpu+=("$c")
  read -r w c <<<"$(shot "$work/empty.html")"
  empty_wall+=("$w") empty_cpu+=("$c")
  json=$(python3 "$root/tests/integration/tools/browser_check.py" --chromium "$chromium" \
    --page "$page" --timeout 120)
  read -r f p <<<"$(python3 -c 'import json,sys; d=json.loads(sys.argv[1])
print(d["navigate_to_frame_s"], d["renderer_cpu_s"]["ProcessTime"])' "$json")"
  frame+=("$f") renderer+=("$p")
done
size=$(stat -c %s "$page")
m() { printf '%s\n' "$@" | median; }
echo "scenario $scenario (simulated in $((SECONDS - start)) s, then $runs rounds)"
printf 'report.html: %s bytes (%s MiB)\n' "$size" "$(awk -v s="$size" 'BEGIN {printf "%.2f", s / 1048576}')"
printf 'launch -> screenshot, report.html: wall %.2f s, browser CPU %.2f s (medians)\n' \
  "$(m "${rep_wall[@]}")" "$(m "${rep_cpu[@]}")"
printf 'launch -> screenshot, empty page:  wall %.2f s, browser CPU %.2f s\n' \
  "$(m "${empty_wall[@]}")" "$(m "${empty_cpu[@]}")"
printf 'in a running browser: request -> rendered frame %.2f s wall, renderer CPU %.2f s\n' \
  "$(m "${frame[@]}")" "$(m "${renderer[@]}")"
printf 'load average now: %s\n' "$(cut -d' ' -f1-3 /proc/loadavg)"
