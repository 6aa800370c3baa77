#!/bin/sh
# tests/run-all.sh - placeholder runner (replaced by the full runner).
set -eu
cd "$(dirname "$0")/.."
pass=0 fail=0
for t in tests/unit/test_*; do
	case "$t" in *.c) continue ;; esac
	[ -x "$t" ] || continue
	if "$t"; then pass=$((pass+1)); else fail=$((fail+1)); fi
done
echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
