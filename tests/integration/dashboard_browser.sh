#!/bin/bash
# The live dashboard in headless Chromium (issue 25): a real `aiscale run` driving local replica
# processes, and Debian's /usr/bin/chromium driven by playwright-core (tests/browser/, pinned in
# its package-lock.json and installed here with `npm ci`). tests/browser/dashboard.mjs checks:
# the overview shows the API's values and reads with JavaScript off, a workload page has
# non-empty charts and the decision log, a pause sent with the token changes the open page
# without a reload and the next decisions say "paused by API", no console errors, no request
# leaves the server. Screenshots: <build dir>/test-artifacts/dashboard/*.png.
# Usage: dashboard_browser.sh <aiscale binary> <source dir>
set -u
aiscale=${1:?aiscale binary}
src=${2:-$(cd "$(dirname "$0")/../.." && pwd)}
for need in /usr/bin/chromium node npm; do
  if ! command -v "$need" >/dev/null; then
    echo "SKIP: $need is not installed (scripts/bootstrap.sh test installs chromium)"
    exit 0
  fi
done
# shellcheck source=tests/integration/lib/common.sh
source "$src/tests/integration/lib/common.sh"
# shellcheck source=tests/integration/lib/operator.sh
source "$src/tests/integration/lib/operator.sh"
itest_init

browser="$src/tests/browser"
if [ ! -d "$browser/node_modules/playwright-core" ] ||
  [ "$browser/package-lock.json" -nt "$browser/node_modules/.package-lock.json" ]; then
  (cd "$browser" && npm ci --ignore-scripts --no-audit --no-fund >"$ITEST_TMP/npm.log" 2>&1) ||
    itest_fail "npm ci in tests/browser failed: $(tail -5 "$ITEST_TMP/npm.log")"
fi

OP_AISCALE=$aiscale
OP_API=$(free_port)
op_write_config "$ITEST_TMP/live.yaml" "$OP_API" "$(port_block 4)" "$(port_block 4)"
op_start aiscale
op_wait_field steady ready 2 30 || itest_fail "steady never had 2 ready replicas"
sleep 3  # a few ticks, so the charts have points

artifacts="$(dirname "$aiscale")/test-artifacts/dashboard"
rm -rf "$artifacts"
mkdir -p "$artifacts" "$ITEST_TMP/profile"
node "$browser/dashboard.mjs" "http://127.0.0.1:$OP_API" "$ITEST_TMP/api.token" steady \
  "$artifacts" "$ITEST_TMP/profile"
rc=$?
ls "$artifacts"
check "the browser checks passed" test "$rc" = 0
check "a screenshot of each page was kept" test -s "$artifacts/overview.png" -a -s "$artifacts/workload.png"
check "the token was never logged" bash -c "! grep -rqF '$(cat "$ITEST_TMP/api.token")' '$ITEST_TMP'/*.log"
itest_stop_pid "$OP_PID" 15
echo "dashboard_browser: $passed passed, $failed failed"
[ "$failed" = 0 ]
