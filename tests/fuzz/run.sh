#!/bin/sh
# tests/fuzz/run.sh SECONDS HARNESS... - run each libFuzzer harness for
# SECONDS on its seed corpus (tests/fuzz/corpus/<name>/, copied to a scratch
# working corpus so seeds stay as committed).  Crashes are saved in
# tests/out/fuzz/<name>/ and fail the run; print executions per harness.
set -u
secs=$1
shift
root=$(cd "$(dirname "$0")/../.." && pwd)
out=$root/tests/out/fuzz
status=0
for bin in "$@"; do
	name=$(basename "$bin" | sed 's/^fuzz_//')
	seeds=$root/tests/fuzz/corpus/$name
	work=$out/$name/corpus
	mkdir -p "$work" "$out/$name/crashes"
	[ -d "$seeds" ] && cp -n "$seeds"/* "$work"/ 2>/dev/null
	log=$out/$name/fuzz.log
	ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1} \
		"$bin" -max_total_time="$secs" -timeout=20 -rss_limit_mb=2048 -max_len=65536 \
		-artifact_prefix="$out/$name/crashes/" "$work" >"$log" 2>&1
	rc=$?
	execs=$(grep -Eo 'stat::number_of_executed_units: [0-9]+' "$log" | awk '{print $2}')
	[ -z "$execs" ] && execs=$(grep -Eo '#[0-9]+' "$log" | tail -n 1 | tr -d '#')
	if [ $rc -eq 0 ]; then
		echo "fuzz $name: ${secs}s, ${execs:-?} executions, no crash"
	else
		echo "fuzz $name: FAILED (exit $rc) after ${execs:-?} executions; see $log"
		grep -E 'ERROR|SUMMARY|runtime error' "$log" | head -n 5
		status=1
	fi
done
exit $status
