#!/bin/bash
# tests/run-unit.sh - run the cmocka unit test binaries.
#
#   tests/run-unit.sh [BIN...]      (default: every tests/unit/test_* binary)
#
# Each binary runs as the calling user and, when that is root, a second time
# as nobody (uid 65534, no groups, no capabilities), because lib/ must work
# unprivileged too. Logs go to tests/out/unit/. One line per binary and
# pass; failing test cases are named. The last line is the summary
# "N passed, N failed[, N skipped]" counted in test cases (cmocka's own
# counts), a binary that dies without a count being one failure.
#
# Environment: VERBOSE=1 prints every test case, SBX_TEST_TIMEOUT (seconds
# per binary, default 300), SBX_UNIT_NOBODY=0 skips the unprivileged pass.
set -u
cd "$(dirname "$0")/.." || exit 2
ROOT=$PWD
OUT=$ROOT/tests/out/unit
TIMEOUT=${SBX_TEST_TIMEOUT:-300}
mkdir -p "$OUT"

if [ $# -eq 0 ]; then
	for f in tests/unit/test_*; do
		case "$f" in *.c | *.o | *.d) continue ;; esac
		[ -f "$f" ] && [ -x "$f" ] && set -- "$@" "$f"
	done
fi

pass=0 fail=0 skip=0

# count LOG RC LABEL: add the cmocka counts of LOG to the totals.
count() {
	local log=$1 rc=$2 label=$3 p f s
	p=$(sed -n 's/^\[  PASSED  \] \([0-9]*\) test.*/\1/p' "$log" | awk '{n+=$1} END {print n+0}')
	f=$(sed -n 's/^\[  FAILED  \] \([0-9]*\) test.*/\1/p' "$log" | awk '{n+=$1} END {print n+0}')
	s=$(sed -n 's/^\[  SKIPPED \] \([0-9]*\) test.*/\1/p' "$log" | awk '{n+=$1} END {print n+0}')
	if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then
		f=1 # crashed, timed out or failed outside a test case
	fi
	if [ "$rc" -eq 0 ] && [ "$p" -eq 0 ] && [ "$s" -eq 0 ] && [ "$f" -eq 0 ]; then
		p=1 # a binary without cmocka's counts: one test
	fi
	pass=$((pass + p)) fail=$((fail + f)) skip=$((skip + s))
	if [ "$f" -gt 0 ]; then
		local why="exit $rc"
		[ "$rc" -eq 124 ] && why="timed out after ${TIMEOUT}s"
		[ "$rc" -eq 99 ] && why="exit 99: a sanitizer stopped it"
		echo "not ok - $label: $p passed, $f failed ($why, log ${log#"$ROOT"/})"
		# The failing cases, then the end of the log for context.
		sed -n 's/^\[  FAILED  \] \([^0-9].*\)/#   failed: \1/p' "$log"  | sort -u
		tail -n 15 "$log" | sed 's/^/#   /'
	else
		local extra=""
		[ "$s" -gt 0 ] && extra=", $s skipped"
		echo "ok - $label: $p passed$extra"
	fi
	if [ "${VERBOSE:-0}" = 1 ]; then
		sed -n 's/^\[       OK \] /#   ok /p; s/^\[  FAILED  \] \([^0-9]\)/#   not ok \1/p' "$log"
	fi
}

# A place nobody can write, and a tree nobody can read, for the second pass.
NOBODY_TMP=
NOBODY_ROOT=$ROOT
nobody() {
	setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all -- "$@"
}
setup_nobody() {
	NOBODY_TMP=$(mktemp -d /tmp/sbx-unit.XXXXXX) || return 1
	chmod 0777 "$NOBODY_TMP"
	mkdir -m 0777 "$NOBODY_TMP/tmp" "$NOBODY_TMP/home"
	# Run in place when nobody can read the tree; otherwise from a copy.
	if ! nobody test -r "$ROOT/tests/unit" -a -x "$ROOT/tests/unit" 2>/dev/null; then
		NOBODY_ROOT=$NOBODY_TMP/tree
		mkdir -p "$NOBODY_ROOT"
		tar -C "$ROOT" --exclude=./.git --exclude=./tests/out -cf - . |
			tar -C "$NOBODY_ROOT" -xf -
		chmod -R a+rX "$NOBODY_ROOT"
	fi
}
cleanup() {
	[ -n "$NOBODY_TMP" ] && rm -rf "$NOBODY_TMP"
}
trap cleanup EXIT

run_nobody=0
if [ "$(id -u)" = 0 ] && [ "${SBX_UNIT_NOBODY:-1}" = 1 ] && command -v setpriv >/dev/null; then
	setup_nobody && run_nobody=1
fi

# Under tests/run-all.sh, sanitizer reports are named after the binary.
san_env() {
	[ -n "${SBX_SAN_DIR:-}" ] || return 0
	export ASAN_OPTIONS="${ASAN_OPTIONS/log_path=$SBX_SAN_DIR\/unit.asan/log_path=$SBX_SAN_DIR/$1.asan}"
	export UBSAN_OPTIONS="${UBSAN_OPTIONS/log_path=$SBX_SAN_DIR\/unit.ubsan/log_path=$SBX_SAN_DIR/$1.ubsan}"
}
SAVED_ASAN=${ASAN_OPTIONS-} SAVED_UBSAN=${UBSAN_OPTIONS-}

for bin in "$@"; do
	name=$(basename "$bin")
	log=$OUT/$name.log
	ASAN_OPTIONS=$SAVED_ASAN UBSAN_OPTIONS=$SAVED_UBSAN
	san_env "$name"
	timeout -k 10 "$TIMEOUT" "$bin" >"$log" 2>&1
	count "$log" $? "unit $name"
	[ "$run_nobody" = 1 ] || continue
	log=$OUT/$name.nobody.log
	case "$bin" in /*) nbin=$bin ;; *) nbin=$NOBODY_ROOT/$bin ;; esac
	: >"$log"
	chmod 0666 "$log"
	(cd "$NOBODY_ROOT" && nobody env HOME="$NOBODY_TMP/home" TMPDIR="$NOBODY_TMP/tmp" \
		XDG_STATE_HOME="$NOBODY_TMP/home/state" XDG_CACHE_HOME="$NOBODY_TMP/home/cache" \
		USER=nobody LOGNAME=nobody \
		timeout -k 10 "$TIMEOUT" "$nbin" >"$log" 2>&1)
	count "$log" $? "unit $name (as nobody)"
done

if [ "$skip" -gt 0 ]; then
	echo "$pass passed, $fail failed, $skip skipped"
else
	echo "$pass passed, $fail failed"
fi
[ "$fail" -eq 0 ]
