#!/bin/sh
# tests/fuzz/run.sh SECONDS HARNESS... - run each libFuzzer harness for
# SECONDS on its seed corpus (tests/fuzz/corpus/<name>/) and its past
# crashes (tests/fuzz/regress/<name>/), both copied to a scratch working
# corpus (tests/out/fuzz/<name>/corpus/) so the committed files stay as
# they are.  A crash, leak, timeout or out-of-memory is saved in
# tests/out/fuzz/<name>/crashes/ and fails the run (add it to
# tests/fuzz/regress/<name>/ once fixed).  Prints one line per harness with
# its executions.  FUZZ_JOBS=2 (or more) runs them all at once.
set -u
secs=$1
shift
root=$(cd "$(dirname "$0")/../.." && pwd)
out=$root/tests/out/fuzz
status=0
mkdir -p "$out"

fuzz_one() {
	bin=$1
	name=$(basename "$bin" | sed 's/^fuzz_//')
	work=$out/$name/corpus
	mkdir -p "$work" "$out/$name/crashes" "$out/$name/scratch"
	for seeds in "$root/tests/fuzz/corpus/$name" "$root/tests/fuzz/regress/$name"; do
		[ -d "$seeds" ] && cp -n "$seeds"/* "$work"/ 2>/dev/null
	done
	log=$out/$name/fuzz.log
	# The image harness unpacks under $TMPDIR: keep that inside tests/out.
	TMPDIR=$out/$name/scratch ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1} \
		"$bin" -max_total_time="$secs" -timeout=20 -rss_limit_mb=2048 -max_len=65536 \
		-print_final_stats=1 -artifact_prefix="$out/$name/crashes/" "$work" >"$log" 2>&1
	rc=$?
	rm -rf "$out/$name/scratch"
	execs=$(grep -Eo 'stat::number_of_executed_units: [0-9]+' "$log" | awk '{print $2}' | tail -n 1)
	[ -z "$execs" ] && execs=$(grep -Eo '^#[0-9]+' "$log" | tail -n 1 | tr -d '#')
	if [ $rc -eq 0 ]; then
		echo "fuzz $name: ${secs}s, ${execs:-?} executions, no crash"
		return 0
	fi
	echo "fuzz $name: FAILED (exit $rc) after ${execs:-?} executions; see ${log#"$root"/}"
	# The harness's own complaint and the input (libFuzzer prints small
	# ones in base64): enough to replay a finding from CI's output alone.
	grep -aE 'ERROR|SUMMARY|runtime error|failed:|sbx: |Test unit written|^Base64: ' "$log" |
		cut -c1-400 | head -n 8
	return 1
}

if [ "${FUZZ_JOBS:-1}" -le 1 ]; then
	for bin in "$@"; do
		fuzz_one "$bin" || status=1
	done
else
	# All at once (there are few harnesses), results printed in order.
	for bin in "$@"; do
		fuzz_one "$bin" >"$out/$(basename "$bin").res" 2>&1 &
	done
	wait
	for bin in "$@"; do
		cat "$out/$(basename "$bin").res"
		grep -q ': FAILED' "$out/$(basename "$bin").res" && status=1
		rm -f "$out/$(basename "$bin").res"
	done
fi
exit $status
