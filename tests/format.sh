#!/usr/bin/env bash
# Fails if any C++ source or header differs from what clang-format (.clang-format) makes of it.
set -u
root=${1:-.}
cd "$root"
if ! command -v clang-format >/dev/null; then
  echo "format: clang-format not installed"; echo "0 passed, 1 failed"; exit 1
fi
# Fifty files to a clang-format process, as many processes as cores: one process per file
# spent most of its minute starting clang-format.
report=$(git ls-files 'src/*.cc' 'src/*.h' 'tests/*.cc' 'tests/*.h' 'bench/*.cc' 2>/dev/null |
  xargs -r -P "$(nproc)" -n 50 clang-format --dry-run -Werror 2>&1 >/dev/null)
status=$?
files=$(printf '%s\n' "$report" | grep -o '^[^: ]*\.\(cc\|h\):[0-9]*:[0-9]*: error' | cut -d: -f1 | sort -u)
bad=0
if [ -n "$files" ]; then
  printf 'needs clang-format: %s\n' $files
  bad=1
elif [ $status != 0 ]; then
  printf '%s\n' "$report" | head -20  # clang-format itself failed: say how
  bad=1
fi
[ $bad = 0 ] && echo "format: 1 passed, 0 failed" || echo "format: 0 passed, 1 failed"
exit $bad
