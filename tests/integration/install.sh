#!/bin/bash
# `cmake --install` (issue 25 §5): installs this build into a temporary prefix and checks that
# the installed aiscale runs from any directory: --help, validate of an example, and the demo
# (which finds examples/ in the source tree it was built from).
# Usage: install.sh <aiscale binary> <source dir>
set -u
aiscale=${1:?aiscale binary}
src=${2:-$(cd "$(dirname "$0")/../.." && pwd)}
# shellcheck source=tests/integration/lib/common.sh
source "$src/tests/integration/lib/common.sh"
itest_init
build=$(dirname "$aiscale")
prefix=$ITEST_TMP/prefix
check "cmake --install puts aiscale under the prefix" \
  cmake --install "$build" --prefix "$prefix" >"$ITEST_TMP/install.log" 2>&1
check "bin/aiscale is an executable" test -x "$prefix/bin/aiscale"
cd "$ITEST_TMP" || itest_fail "no work dir"
check "the installed aiscale answers --help" "$prefix/bin/aiscale" --help
check "it validates an example" "$prefix/bin/aiscale" validate "$src/examples/live-local.yaml"
check "its demo runs from another directory" \
  "$prefix/bin/aiscale" demo --out "$ITEST_TMP/demo" --quiet
check "the demo wrote its report" test -s "$ITEST_TMP/demo/report.html"
echo "install: $passed passed, $failed failed"
[ "$failed" = 0 ]
