#!/usr/bin/env bash
# Fails if any C++ source or header differs from what clang-format (.clang-format) makes of it.
set -u
root=${1:-.}
cd "$root"
if ! command -v clang-format >/dev/null; then
  echo "format: clang-format not installed"; echo "0 passed, 1 failed"; exit 1
fi
bad=0
while IFS= read -r f; do
  if ! clang-format --dry-run -Werror "$f" >/dev/null 2>&1; then echo "needs clang-format: $f"; bad=1; fi
done < <(git ls-files 'src/*.cc' 'src/*.h' 'tests/*.cc' 'tests/*.h' 'bench/*.cc' 2>/dev/null)
[ $bad = 0 ] && echo "format: 1 passed, 0 failed" || echo "format: 0 passed, 1 failed"
exit $bad
