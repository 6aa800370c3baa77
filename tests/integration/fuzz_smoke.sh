#!/bin/bash
# sbx-test-lane: long
# tests/integration/fuzz_smoke.sh - build the libFuzzer harnesses
# (tests/fuzz/fuzz_*.c, clang with ASan+UBSan: `make fuzz-build`) and run
# each for a short time (FUZZ_SMOKE_SECONDS, default 10) on its seed corpus
# and past crashes (tests/fuzz/run.sh).  Any crash, leak or failed harness
# check fails; so does a harness that executed nothing.  Skipped only when
# clang is not installed (tests/deps.sh installs it with the test deps).
. "$(dirname "$0")/../lib/tap.sh"

SECS=${FUZZ_SMOKE_SECONDS:-10}
if ! command -v clang >/dev/null 2>&1; then
	echo "1..0 # SKIP clang is not installed (make deps)"
	exit 77
fi
cd "$TAP_ROOT" || exit 1

capture make -s -j"$(nproc)" fuzz-build
ok $rc "make fuzz-build builds the harnesses"
[ $rc -eq 0 ] || { printf '%s\n' "$err" | tail -n 20 | sed 's/^/#   /'; done_testing; }

bins=$(ls tests/fuzz/build/fuzz_* 2>/dev/null)
n=$(ls tests/fuzz/fuzz_*.c | wc -l)
[ "$(lines "$bins")" -eq "$n" ]
ok $? "one harness binary per tests/fuzz/fuzz_*.c ($n)"

# Reports go to the fuzz logs, not to the suite's sanitizer directory.
# shellcheck disable=SC2086
capture env -u ASAN_OPTIONS -u UBSAN_OPTIONS -u LSAN_OPTIONS FUZZ_JOBS=2 \
	tests/fuzz/run.sh "$SECS" $bins
printf '%s\n' "$out" | sed 's/^/# /'
for b in $bins; do
	name=$(basename "$b" | sed 's/^fuzz_//')
	line=$(printf '%s\n' "$out" | grep "^fuzz $name: ")
	execs=$(printf '%s\n' "$line" | sed -n 's/.*s, \([0-9][0-9]*\) executions, no crash$/\1/p')
	[ -n "$execs" ] && [ "$execs" -gt 0 ]
	ok $? "fuzz_$name runs ${SECS}s under ASan+UBSan without a finding (${execs:-0} executions)"
done
done_testing
