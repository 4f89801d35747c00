#!/usr/bin/env bash
# Checks the dependency rule (docs/architecture.md, "Layers") over #include lines: core depends on nothing;
# monitor, decide, act, store and control depend only on core; report (summaries, tables,
# charts, report.html) only on core, so the simulator, the CLI and the server can share it.
set -u
root=${1:-.}
fail=0
check() {
  local layer=$1; shift
  local allowed="$*"
  while IFS= read -r line; do
    inc=$(sed -n 's/.*#include "\([a-z_]*\)\/.*/\1/p' <<<"${line#*:}")
    [ -z "$inc" ] && continue
    ok=0
    for a in $layer $allowed; do [ "$inc" = "$a" ] && ok=1; done
    if [ $ok = 0 ]; then echo "layering violation: $line"; fail=1; fi
  done < <(grep -rn '#include "' "$root/src/$layer" 2>/dev/null)
}
check core
for l in monitor decide act store control report; do check $l core; done
check server core store report
[ $fail = 0 ] && echo "layering: 1 passed, 0 failed" || echo "layering: 0 passed, 1 failed"
exit $fail
