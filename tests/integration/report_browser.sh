#!/bin/bash
# report.html in a real browser (issue 25 §4): headless Chromium (Debian's chromium, fresh
# profile, no network) opens the report of a training and an inference scenario, driven like a
# user over the DevTools protocol by tools/browser_check.py. Asserts, for each page:
#   1. it loads with no console error, uncaught exception or refused fetch, and its script ran;
#   2. charts are drawn (one <svg class="chart"> and series each);
#   3. the mouse over a chart shows the time and each visible series' value there;
#   4. clicking a legend entry hides that run's series, clicking again shows them;
#   5. typing in the decision log's search box opens the log and keeps only matching rows, and
#      "#q=" does the same on load.
# Screenshots and read-outs are kept in $AISCALE_TEST_ARTIFACTS/report_browser (default: the
# build directory's test-artifacts/). Timing is not asserted here: bench/report_render.sh
# measures it (docs/benchmarks.md).
# Usage: report_browser.sh <aiscale binary> <source dir>
set -u
aiscale=${1:?aiscale binary}
src=${2:-$(cd "$(dirname "$0")/../.." && pwd)}
chromium=${CHROMIUM:-/usr/bin/chromium}
if [ ! -x "$chromium" ]; then
  echo "SKIP: $chromium is not installed (apt-get install chromium; scripts/bootstrap.sh test does)"
  exit 0
fi
# shellcheck source=tests/integration/lib/common.sh
source "$src/tests/integration/lib/common.sh"
itest_init
artifacts=${AISCALE_TEST_ARTIFACTS:-$(dirname "$aiscale")/test-artifacts}/report_browser
mkdir -p "$artifacts"

# One page: simulate SCENARIO [FLAGS] into NAME/, open its report, check the read-out.
page() {
  local name=$1 scenario=$2 out=$ITEST_TMP/$1 json
  shift 2
  "$aiscale" simulate "$scenario" "$@" --out "$out" --quiet >"$ITEST_TMP/$name.sim.log" 2>&1 ||
    itest_fail "$name: simulate failed"
  mkdir -p "$artifacts/$name"
  "$ITEST_PY" "$ITEST_TOOLS/browser_check.py" --chromium "$chromium" --page "$out/report.html" \
    --out "$artifacts/$name" --timeout 120 >"$ITEST_TMP/$name.json" 2>"$ITEST_TMP/$name.err" ||
    itest_fail "$name: browser_check failed: $(tail -3 "$ITEST_TMP/$name.err")"
  json=$ITEST_TMP/$name.json
  field() { "$ITEST_PY" -c "import json,sys; d=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))" "$json" "$1"; }
  check "$name: no console errors or exceptions ($(field 'd["errors"]'))" \
    test "$(field 'len(d["errors"])')" = 0
  check "$name: the page script ran" test "$(field 'd["js_ready"]')" = True
  check "$name: charts drawn ($(field 'd["charts"]') charts, $(field 'd["series"]') series)" \
    test "$(field 'd["charts"] > 0 and d["series"] > d["charts"]')" = True
  check "$name: hover shows the time and values ($(field 'd["hover"]'))" \
    test "$(field 'len(d["hover"]) >= 2 and d["hover"][0].startswith("at ") and all(": " in l for l in d["hover"][1:])')" = True
  check "$name: a legend click hides its series and a second shows them ($(field 'd["toggle"]'))" \
    test "$(field 'd["toggle"]["shown_before"] > 0 and d["toggle"]["shown_off"] == 0 and d["toggle"]["shown_again"] == d["toggle"]["shown_before"]')" = True
  check "$name: the log search keeps matching rows only ($(field 'd["search"]'))" \
    test "$(field '0 < d["search"]["shown"] <= d["search"]["rows"] and d["search"]["all_match"] and d["search"]["opened"]')" = True
  check "$name: #q= filters the log on load" \
    test "$(field 'd["fragment_shown"] == d["search"]["shown"]')" = True
  check "$name: screenshot kept" test -s "$artifacts/$name/report.png"
}

page training "$src/tests/golden/sim-small-training.yaml" --policy training --policy static
page inference "$src/examples/inference-azure-conv.yaml"
echo "report_browser: $passed passed, $failed failed (artifacts in $artifacts)"
[ "$failed" = 0 ]
