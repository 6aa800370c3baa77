#!/bin/bash
# tests/run-all.sh - everything `make check` runs after building.
#
#   1. unit tests (tests/run-unit.sh: cmocka binaries, as root and as nobody)
#   2. integration tests: every tests/integration/*.sh against the built
#      binary ($SBX, default ./sbx), TAP-ish output, exit 77 = file skipped
#   3. the escape battery, tests/escape/run.sh, when it exists
#   4. man page lint: `mandoc -Tlint -W warning` clean for every page
#   5. sanitizer reports (SANITIZE=... builds): any report is a failure
#
# Output: one line per test file (and each failing or skipped case), logs
# in tests/out/, and last a summary line alone: "N passed, N failed" (plus
# ", N skipped" when some were). Exits non-zero on any failure.
#
# Environment: SBX (binary under test), SBX_TEST_TIMEOUT (seconds per test
# file, default 300; a file may set its own with a "# sbx-test-timeout: N"
# line near its top), SBX_TEST_JOBS (integration files run at once,
# default 2 on a machine with 2 CPUs or more, else 1), ONLY=PATTERN (run only integration files matching the shell
# pattern, e.g. ONLY='*run*'), VERBOSE=1 (print every case).
set -u
cd "$(dirname "$0")/.." || exit 2
ROOT=$PWD

# Where the suite can run.  Its jails see the host's /tmp, /var/tmp, /run
# and /dev/shm as private tmpfs, its unprivileged half runs as nobody, and
# its scripts take paths without blanks: a checkout that is under one of
# those directories, that nobody cannot reach (a clone in /root, mode 0700)
# or whose path has a blank is copied to a staging directory that has
# none of these problems, the suite runs there, and its logs come back to
# tests/out/.  SBX_TEST_STAGE=0 never stages (then it says why it should).
stage_reason() {
	case "$ROOT" in
	/tmp/* | /var/tmp/* | /run/* | /dev/shm/*)
		echo "the checkout is under a directory that is private in the jails (${ROOT%"${ROOT#/*/}"})"
		return
		;;
	*[[:space:]]*)
		echo "the checkout's path has a blank"
		return
		;;
	esac
	if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null &&
		! setpriv --reuid=65534 --regid=65534 --clear-groups -- \
			sh -c 'test -x "$1" && test -r "$2"' sh "$ROOT/sbx" "$ROOT/tests/run-all.sh" 2>/dev/null; then
		echo "nobody (the unprivileged half) cannot reach the checkout (a directory above it is not searchable)"
	fi
}
why=$( [ -z "${SBX_TEST_STAGED:-}" ] && stage_reason)
if [ -n "$why" ] && [ "${SBX_TEST_STAGE:-1}" != 0 ]; then
	if [ "$(id -u)" = 0 ]; then
		top=/var/lib/sbx-test
	else
		top=${XDG_CACHE_HOME:-$HOME/.cache}/sbx-test
	fi
	mkdir -p "$top" && chmod 0755 "$top" || exit 2
	STAGE=$(mktemp -d "$top/run.XXXXXX") || exit 2
	chmod 0755 "$STAGE"
	echo "# $why: running the suite from a copy in $STAGE"
	tar -C "$ROOT" --exclude=./tests/out -cf - . | tar -C "$STAGE" -xf - &&
		chmod -R a+rX "$STAGE" || exit 2
	sbx=${SBX:-$ROOT/sbx}
	[ "$sbx" = "$ROOT/sbx" ] && sbx=$STAGE/sbx
	SBX_TEST_STAGED=$ROOT SBX=$sbx "$STAGE/tests/run-all.sh"
	rc=$?
	mkdir -p "$ROOT/tests/out" && cp -a "$STAGE/tests/out/." "$ROOT/tests/out/" 2>/dev/null
	rm -rf --one-file-system "$STAGE"
	exit $rc
elif [ -n "$why" ]; then
	echo "# warning: $why, and SBX_TEST_STAGE=0: tests that need it will fail"
fi

OUT=$ROOT/tests/out
TIMEOUT=${SBX_TEST_TIMEOUT:-300}
export SBX=${SBX:-$ROOT/sbx}
export SBX_TEST_TIMEOUT=$TIMEOUT
# script(1) runs its command with $SHELL: a CI runner often has none set
# (/bin/sh, dash: it dies of the terminal's SIGINT where bash would go on),
# so every run of the suite uses what such a runner has.
export SHELL=/bin/sh
# `sudo make check` runs the suite as root, not as the user who ran sudo:
# under sudo, in that user's directory, sbx runs the command as the user
# (run_sudo_home.sh sets these itself).
unset SUDO_UID SUDO_GID SUDO_USER SUDO_COMMAND
mkdir -p "$OUT/integration"
START=$(date +%s)

pass=0 fail=0 skip=0

# Sanitized builds: reports go to files so no test can swallow them, with an
# exit status no test expects from sbx (1 and 2 are ordinary sbx statuses).
# Report files are named after the test that produced them (san_env).
# ASAN_OPTIONS/UBSAN_OPTIONS set by the caller are used as they are.
SAN_DIR=$OUT/sanitizer
rm -rf "$SAN_DIR"
mkdir -p "$SAN_DIR" && chmod 1777 "$SAN_DIR"
export SBX_SAN_DIR=$SAN_DIR
USER_ASAN=${ASAN_OPTIONS-unset} USER_UBSAN=${UBSAN_OPTIONS-unset}
export LSAN_OPTIONS=${LSAN_OPTIONS:-exitcode=99}
san_env() { # san_env NAME: sanitizer reports of what runs next go to NAME.*
	[ "$USER_ASAN" = unset ] &&
		export ASAN_OPTIONS="log_path=$SAN_DIR/$1.asan:exitcode=99:abort_on_error=0:detect_leaks=1:strict_string_checks=1:detect_stack_use_after_return=1:check_initialization_order=1"
	[ "$USER_UBSAN" = unset ] &&
		export UBSAN_OPTIONS="log_path=$SAN_DIR/$1.ubsan:print_stacktrace=1:halt_on_error=1:exitcode=99"
	return 0
}

# tap FILE LOG RC SECONDS: add the TAP results of one test file.
tap() {
	local file=$1 log=$2 rc=$3 secs=$4 p s f extra why # secs: "12s, cpu 9s"
	p=$(grep -Ec '^ok\b' "$log")
	s=$(grep -Eic '^ok\b.*#[[:space:]]*skip' "$log")
	p=$((p - s))
	f=$(grep -Ec '^(not ok\b|Bail out!)' "$log")
	why=
	if [ "$rc" -eq 77 ]; then
		s=$((s + 1))
		why="skipped: $(grep -Ei '^(1\.\.0|ok).*#[[:space:]]*skip|skip' "$log" | head -n 1)"
	elif [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then
		f=$((f + 1))
		why="timed out after $(file_timeout "$file")s"
	elif [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then
		f=$((f + 1))
		why="exit $rc without a failing case"
		[ "$rc" -eq 99 ] && why="$why (99: a sanitizer stopped it; see the log and tests/out/sanitizer/)"
	elif [ "$rc" -eq 0 ] && [ $((p + s + f)) -eq 0 ]; then
		f=1
		why="printed no test result"
	fi
	pass=$((pass + p)) fail=$((fail + f)) skip=$((skip + s))
	extra=
	[ "$s" -gt 0 ] && extra=", $s skipped"
	if [ "$f" -gt 0 ]; then
		echo "not ok - $file: $p passed, $f failed$extra (${secs}${why:+; $why}; log ${log#"$ROOT"/})"
		grep -E '^(not ok\b|Bail out!)' "$log" | sed 's/^/#   /'
		echo "#   --- end of log:"
		tail -n 20 "$log" | sed 's/^/#   /'
	else
		echo "ok - $file: $p passed$extra (${secs}${why:+; $why})"
		grep -Ei '^ok\b.*#[[:space:]]*skip' "$log" | sed 's/^/#   /'
	fi
	if [ "${VERBOSE:-0}" = 1 ]; then
		grep -E '^(ok|not ok)\b' "$log" | sed 's/^/#   /'
	fi
}

# file_timeout FILE: the file's own "# sbx-test-timeout: N" (seconds, in
# its first 30 lines) if it has one, else SBX_TEST_TIMEOUT.
file_timeout() {
	local t
	t=$(head -n 30 "$1" | sed -n 's/^# *sbx-test-timeout: *\([0-9][0-9]*\).*/\1/p' | head -n 1)
	echo "${t:-$TIMEOUT}"
}

# Does the file mostly wait ("# sbx-test-lane: wait" near its top: a
# batch engine's one-minute limit, a terminal's Ctrl-Z held for seconds)?
# Does it take a minute or more ("# sbx-test-lane: long")?
waits() {
	head -n 30 "$1" | grep -q '^# *sbx-test-lane: *wait'
}
long() {
	head -n 30 "$1" | grep -q '^# *sbx-test-lane: *long'
}

# Every process a test file starts carries SBX_TEST_MARK=<mark of the file>
# in its environment (the jail's own processes have a cleared environment,
# but they die with their sbx supervisor).  What still runs when the file
# has ended (or timed out: a supervisor that made its own process group
# escapes timeout's kill) is killed and counted as a failure of that file.
MARK_BASE="sbx-test-$$-$RANDOM"
stragglers() { # stragglers MARK: pids whose environment carries the mark
	# (one grep over every environ: -z reads NUL-separated entries)
	grep -lsxzF "SBX_TEST_MARK=$1" /proc/[0-9]*/environ 2>/dev/null |
		sed -n 's,^/proc/\([0-9]*\)/environ$,\1,p' | grep -vx "$$"
}
# reap MARK LOG: kill the file's stragglers; note them in its log.
reap() {
	local pids p
	pids=$(stragglers "$1")
	[ -z "$pids" ] && return 0
	sleep 1
	pids=$(stragglers "$1")
	[ -z "$pids" ] && return 0
	{
		echo "not ok - the test left processes running (killed now: TERM, then KILL):"
		for p in $pids; do
			echo "#   $p: $(tr '\0' ' ' <"/proc/$p/cmdline" 2>/dev/null | cut -c1-120)"
		done
	} >>"$2"
	# TERM first, so a supervisor can take its jail and cgroup down.
	# shellcheck disable=SC2086
	kill -TERM $pids 2>/dev/null
	sleep 2
	pids=$(stragglers "$1")
	# shellcheck disable=SC2086
	[ -n "$pids" ] && kill -KILL $pids 2>/dev/null
	return 0
}

# child_cpu: CPU_NOW = CPU seconds (user + system) of this shell's
# waited-for children so far, from bash's `times` (its second line: "0m1.5s
# 0m0.2s"; called in this shell, not in a command substitution's).
child_cpu() {
	local u s
	times >"$OUT/.times.$BASHPID"
	{ read -r _ _ && read -r u s; } <"$OUT/.times.$BASHPID"
	rm -f "$OUT/.times.$BASHPID"
	CPU_NOW=$(awk -v u="$u" -v s="$s" 'function sec(t, m) { m = t; sub(/m.*/, "", m)
		sub(/^[0-9]*m/, "", t); sub(/s$/, "", t); return m * 60 + t }
		BEGIN { printf "%d\n", sec(u) + sec(s) + 0.5 }')
}

# run_file LABEL LOG CMD...: run one test file with its timeout.
run_file() {
	local label=$1 log=$2 t0 rc mark c0
	shift 2
	t0=$(date +%s)
	child_cpu
	c0=$CPU_NOW
	san_env "$(basename "$log" .log)"
	FILE_TIMEOUT=$(file_timeout "$label")
	mark=$MARK_BASE-$(basename "$log" .log)
	SBX_TEST_MARK=$mark timeout -k 10 "$FILE_TIMEOUT" "$@" </dev/null >"$log" 2>&1
	rc=$?
	reap "$mark" "$log"
	child_cpu
	tap "$label" "$log" "$rc" "$(($(date +%s) - t0))s, cpu $((CPU_NOW - c0))s"
}

echo "# sbx test suite: $SBX"
if [ ! -x "$SBX" ]; then
	echo "not ok - the binary under test '$SBX' does not exist (run make)"
	fail=$((fail + 1))
fi

# What the suite must not leave behind: processes of the binary under test,
# mounts that mention sbx, cgroups named sbx-*.  Snapshot now, compare at
# the end (other sessions on a shared machine may add their own meanwhile,
# so outside CI a difference is a warning, under CI=true a failure).
# (tests/lib/leftovers.sh: only the suite's own count, not sandboxes the
# user runs meanwhile.)
USER_STATE_DIRS="${SBX_STATE_DIR:-} /var/lib/sbx ${XDG_STATE_HOME:-$HOME/.local/state}/sbx"
. tests/lib/leftovers.sh
leftovers | sort >"$OUT/leftovers.before"

# 1. Unit tests: run-unit.sh prints its lines and its own summary last.
echo "# unit tests"
san_env unit
unit_out=$(tests/run-unit.sh 2>&1)
unit_sum=$(printf '%s\n' "$unit_out" | tail -n 1)
printf '%s\n' "$unit_out" | sed '$d'
if [[ $unit_sum =~ ^([0-9]+)\ passed,\ ([0-9]+)\ failed(,\ ([0-9]+)\ skipped)?$ ]]; then
	pass=$((pass + BASH_REMATCH[1])) fail=$((fail + BASH_REMATCH[2]))
	skip=$((skip + ${BASH_REMATCH[4]:-0}))
else
	echo "not ok - tests/run-unit.sh ended without a summary: $unit_sum"
	fail=$((fail + 1))
fi

# 2. Integration tests, SBX_TEST_JOBS at a time: by default two files at
# once where there are 2 CPUs (each file keeps to its own state
# directories, its mark for the leftover check and free ports; the few
# timings a test checks have bounds seconds wide), one at a time on one
# CPU.  On the 2-core VM: 592 and 631 s against 870-890 s one at a time,
# both all passed.  With more than one job, the files that mostly wait
# (waits) run one after the other in a lane of their own beside those:
# they add little load, and in a lane of the others their ~340 s of
# waiting held a CPU's lane (the suite: 910 s, then ~780).
echo "# integration tests"
JOBS=${SBX_TEST_JOBS:-$(($(nproc 2>/dev/null || echo 1) >= 2 ? 2 : 1))}
files=()
for t in tests/integration/*.sh; do
	[ -f "$t" ] || continue
	# shellcheck disable=SC2254
	case "$t" in ${ONLY:-*}) ;; *) continue ;; esac
	files+=("$t")
done
if [ "$JOBS" -le 1 ]; then
	for t in "${files[@]}"; do
		run_file "$t" "$OUT/integration/$(basename "$t" .sh).log" bash "$t"
	done
else
	# bg_file FILE: run it, its status saved for the report below.
	bg_file() {
		local t=$1 log t0 mark rc c0
		log=$OUT/integration/$(basename "$t" .sh).log
		t0=$(date +%s)
		child_cpu	# (the waiting lane's files share one shell)
		c0=$CPU_NOW
		san_env "$(basename "$log" .log)"
		mark=$MARK_BASE-$(basename "$log" .log)
		SBX_TEST_MARK=$mark timeout -k 10 "$(file_timeout "$t")" bash "$t" </dev/null >"$log" 2>&1
		rc=$?
		reap "$mark" "$log"
		child_cpu
		echo "$rc $(($(date +%s) - t0))s, cpu $((CPU_NOW - c0))s" >"$log.status"
	}
	# Run in the background, then report in order from the saved statuses.
	# The long files start first, so the lanes end with short ones at
	# about the same time, not one with a long file alone at the end
	# (the files in name order left one lane ~50 s behind the other).
	waiting=() others=() short=()
	for t in "${files[@]}"; do
		if waits "$t"; then
			waiting+=("$t")
		elif long "$t"; then
			others+=("$t")
		else
			short+=("$t")
		fi
	done
	others+=("${short[@]}")
	lane=
	if [ ${#waiting[@]} -gt 0 ]; then
		(for t in "${waiting[@]}"; do bg_file "$t"; done) &
		lane=$!
	fi
	# JOBS of the others at once, the waiting lane beside them
	others_running() {
		local n
		n=$(jobs -pr | wc -l)
		[ -n "$lane" ] && jobs -pr | grep -qx "$lane" && n=$((n - 1))
		echo "$n"
	}
	for t in "${others[@]}"; do
		while [ "$(others_running)" -ge "$JOBS" ]; do wait -n; done
		bg_file "$t" &
	done
	wait
	for t in "${files[@]}"; do
		log=$OUT/integration/$(basename "$t" .sh).log
		read -r rc secs <"$log.status" || { rc=1 secs=0s; }
		rm -f "$log.status"
		tap "$t" "$log" "$rc" "$secs"
	done
fi

# 3. Escape battery.
if [ -f tests/escape/run.sh ]; then
	echo "# escape battery"
	run_file tests/escape/run.sh "$OUT/escape.log" bash tests/escape/run.sh
	grep -E '^escape: ' "$OUT/escape.log" | sed 's/^/# /'
fi

# 4. Man pages.
echo "# man pages"
for m in man/*.[1-8]; do
	[ -f "$m" ] || continue
	if ! command -v mandoc >/dev/null; then
		echo "not ok - lint $m: mandoc is not installed (make deps)"
		fail=$((fail + 1))
		continue
	fi
	lint=$(mandoc -Tlint -W warning "$m" 2>&1)
	if [ $? -eq 0 ] && [ -z "$lint" ]; then
		echo "ok - lint $m"
		pass=$((pass + 1))
	else
		echo "not ok - lint $m"
		printf '%s\n' "$lint" | sed 's/^/#   /'
		fail=$((fail + 1))
	fi
done

# 5. Sanitizer reports written by any process of any test.
for r in "$SAN_DIR"/*; do
	[ -f "$r" ] || continue
	echo "not ok - sanitizer report ${r#"$ROOT"/}: $(grep -m1 -oE '(ERROR|SUMMARY|runtime error): .*' "$r")"
	# The first frames in sbx's own code say where.
	grep -E '^ +#[0-9]+ 0x[0-9a-f]+ in [^ ]+ ([^ ]*/)?(lib/|cmd/|tests/|sbx\.c)' "$r" | head -n 4 | sed 's/^ */#   /'
	fail=$((fail + 1))
done

# 6. Nothing left behind, once the purgers of removed sandboxes (which
# work in the background, lib/state/trash.c) are done.
sleep 1
for _ in $(seq 600); do pgrep -x sbx-purge >/dev/null || break; sleep 0.1; done
leftovers | sort >"$OUT/leftovers.after"
left=$(comm -13 "$OUT/leftovers.before" "$OUT/leftovers.after")
if [ -z "$left" ]; then
	echo "ok - no process, mount, cgroup or scratch directory left behind by the suite"
	pass=$((pass + 1))
elif [ "${CI:-}" = true ] || [ "${SBX_TEST_STRICT:-0}" = 1 ]; then
	echo "not ok - the suite left sbx processes, mounts, cgroups or scratch directories behind"
	printf '%s\n' "$left" | head -n 20 | sed 's/^/#   /'
	fail=$((fail + 1))
else
	echo "# warning: new sbx processes, mounts, cgroups or scratch directories since the start (another session's, or leftovers; a failure under CI=true):"
	printf '%s\n' "$left" | head -n 20 | sed 's/^/#   /'
fi

echo "# $(($(date +%s) - START))s in all; logs in tests/out/"
if [ "$skip" -gt 0 ]; then
	echo "$pass passed, $fail failed, $skip skipped"
else
	echo "$pass passed, $fail failed"
fi
[ "$fail" -eq 0 ]
