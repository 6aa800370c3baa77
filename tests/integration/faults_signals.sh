#!/bin/bash
# sbx-test-lane: wait (grace times and stop timeouts run out)
# tests/integration/faults_signals.sh - signals and exit statuses through
# `sbx run`, as root and as nobody:
#   - SIGINT, SIGTERM and SIGHUP sent to sbx reach the command (its trap
#     records the signal and exits with a code of its own, which sbx
#     returns), and log.jsonl has a `signal` event naming each;
#   - every exit status 0..255 of the command is sbx's exit status;
#   - a command killed by signal N makes sbx exit 128+N, and the record
#     says signaled, with the signal;
#   - a command that ignores SIGTERM/SIGINT is killed when it has not
#     ended within the stop timeout (--stop-timeout, [sandbox]
#     stop-timeout, 10 s by default), or at once on a second signal; the
#     footer and the record say so.
. "$(dirname "$0")/../lib/tap.sh"
. "$(dirname "$0")/../lib/sbx.sh"

if [ "$(id -u)" -ne 0 ]; then
	echo "1..0 # SKIP needs root (runs the unprivileged half through setpriv)"
	exit 77
fi

sbx_base
TARBALL=$BASE/busybox.tar.gz
sbx_rootfs "$TARBALL"

as_mode() { sbx_as_mode "$@"; }

# as_mode_exec MODE CMD...: as_mode, but replacing the calling (sub)shell,
# so that `as_mode_exec ... &` makes $! the pid of CMD itself.
as_mode_exec() {
	local mode=$1
	shift
	if [ "$mode" = root ]; then
		exec env SBX_STATE_DIR="$BASE/state-root" SBX_CACHE_DIR="$BASE/cache-root" "$@"
	else
		exec setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all -- \
			env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME="$BASE" \
			SBX_STATE_DIR="$BASE/state-user" SBX_CACHE_DIR="$BASE/cache-user" "$@"
	fi
}

# sandbox_dir MODE NAME: the state directory of the sandbox called NAME.
sandbox_dir() {
	local id
	id=$(as_mode "$1" "$SBX" ps -a --json | python3 -c '
import json, sys
for s in json.load(sys.stdin):
    if s.get("name") == sys.argv[1]:
        print(s["id"])' "$2")
	[ -n "$id" ] && echo "$BASE/state-$1/sandboxes/$id"
}

# json_get FILE EXPR: evaluate a python expression on the JSON in FILE (d).
json_get() {
	python3 -c 'import json, sys; d = json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$1" "$2" 2>&1
}

# Terminating signals (not STOP/TSTP/TTIN/TTOU, not CHLD/CONT/URG/WINCH,
# which do not end a process by default), including real-time ones.
DEATH_SIGNALS="1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 24 25 26 27 29 30 31 34 40 50 64"
if [ -x /bin/dash ]; then
	KILLER=(--rootfs host -- /bin/dash)
else
	KILLER=(--rootfs "$TARBALL" -- sh)
	DEATH_SIGNALS=${DEATH_SIGNALS/ 3 / }
fi

# par_runs MODE BASE SCRIPT N...: one jail per N, 4 at a time (a sanitized
# build on a busy machine is slow), running SCRIPT with every @ replaced by
# N in the host's dash (no image: the fastest jail); prints "N->STATUS" for
# each run whose exit status is not BASE+N.
par_runs() {
	local mode=$1 base=$2 script=$3 n
	shift 3
	for n in "$@"; do
		while [ "$(jobs -pr | wc -l)" -ge 4 ]; do wait -n; done
		(
			as_mode "$mode" "$SBX" run -q --rm "${KILLER[@]}" -c "${script//@/$n}" >/dev/null 2>&1
			rc=$?
			[ "$rc" -eq $((base + n)) ] || echo "$n->$rc"
		) &
	done
	wait
}

# await_ready FILE: until the command in the jail printed "ready" (10 s at most).
await_ready() {
	for _ in $(seq 200); do
		grep -q ready "$1" && return 0
		sleep 0.05
	done
	return 1
}

for mode in root user; do
	who=root
	[ "$mode" = user ] && who=nobody
	mkdir -p "$BASE/state-$mode" "$BASE/cache-$mode"
	[ "$mode" = user ] && chown 65534:65534 "$BASE/state-$mode" "$BASE/cache-$mode"
	capture as_mode "$mode" "$SBX" run -q --rm --rootfs "$TARBALL" -- echo warm
	[ "$rc" -eq 0 ] && [ "$out" = warm ]
	ok $? "as $who: the busybox image runs (cached for the loops) ($rc: $err)"

	# 1. INT, TERM, HUP to sbx reach the command's trap.
	code=40
	for sig in INT TERM HUP; do
		code=$((code + 1))
		name=sig-$sig-$mode
		out_f=$TAP_TMP/$name.out
		# Job control on: a background job of a script would otherwise
		# start with SIGINT and SIGQUIT ignored.
		set -m
		as_mode_exec "$mode" "$SBX" run -q --keep -n "$name" --rootfs "$TARBALL" -- \
			sh -c "trap 'echo got-$sig; exit $code' $sig; echo ready; while :; do sleep 0.05; done" \
			>"$out_f" 2>&1 &
		pid=$!
		set +m
		await_ready "$out_f"
		comm=$(cat /proc/$pid/comm 2>/dev/null)
		kill -s "$sig" "$pid"
		# Not forever, if the signal got lost.
		(sleep 20 && kill -KILL "$pid") 2>/dev/null &
		killer=$!
		wait "$pid"
		rc=$?
		pkill -P "$killer" sleep 2>/dev/null; kill "$killer" 2>/dev/null
		wait "$killer" 2>/dev/null
		[ "$comm" = sbx ] || diag "the background pid $pid was '$comm', not sbx"
		dir=$(sandbox_dir "$mode" "$name")
		ev=
		[ -n "$dir" ] && ev=$(grep -c "\"event\":\"signal\".*\"name\":\"$sig\"" "$dir/log.jsonl")
		st=
		[ -n "$dir" ] && st=$(json_get "$dir/record.json" 'd["exit"]["status"], d["exit"]["reason"], d["exit"]["code"]')
		[ "$rc" -eq "$code" ] && grep -q "got-$sig" "$out_f" && [ "$ev" = 1 ] && [ "$st" = "($code, 'exited', $code)" ]
		ok $? "as $who: SIG$sig to sbx reaches the command (exit $rc, want $code; output '$(tr '\n' ' ' <"$out_f")'; signal events: ${ev:-none}; record exit $st)"
	done

	# 2. Every exit status passes through.
	bad=$(par_runs "$mode" 0 'exit @' $(seq 0 255))
	[ -z "$bad" ]
	ok $? "as $who: exit status 0..255 of the command is sbx's exit status${bad:+ (wrong:$bad)}"

	# 3. Death by signal N: 128+N (busybox sh would ignore SIGQUIT even
	# with -c: the host's dash kills itself).
	# shellcheck disable=SC2086
	bad=$(par_runs "$mode" 128 'kill -@ $$; sleep 5' $DEATH_SIGNALS)
	[ -z "$bad" ]
	ok $? "as $who: a command killed by signal N ($(echo "$DEATH_SIGNALS" | wc -w) signals) makes sbx exit 128+N${bad:+ (wrong:$bad)}"

	for n in 6 11 15; do
		name=death-$n-$mode
		as_mode "$mode" "$SBX" run -q --keep -n "$name" --rootfs "$TARBALL" -- sh -c "kill -$n \$\$" >/dev/null 2>&1
		rc=$?
		dir=$(sandbox_dir "$mode" "$name")
		st=
		[ -n "$dir" ] && st=$(json_get "$dir/record.json" 'd["exit"]["status"], d["exit"]["reason"], d["exit"]["signal"]')
		[ "$rc" -eq $((128 + n)) ] && [ "$st" = "($((128 + n)), 'signaled', $n)" ]
		ok $? "as $who: killed by signal $n: exit $rc, record exit $st"
	done

	# 4. A command that ignores the signal: killed after the stop
	# timeout, or at once on a second one (not on the same signal again
	# within 100 ms: that is one request delivered twice).
	for how in timeout profile second twice; do
		name=stop-$how-$mode
		out_f=$TAP_TMP/$name.out
		opt=(--stop-timeout 1s)
		[ "$how" = profile ] && opt=(-p "$BASE/stop.ini")
		[ "$how" = second ] && opt=()
		printf '[sandbox]\nextends = default\nstop-timeout = 1s\n' >"$BASE/stop.ini"
		chmod 0644 "$BASE/stop.ini"
		set -m
		as_mode_exec "$mode" "$SBX" run --keep -n "$name" "${opt[@]}" --rootfs "$TARBALL" -- \
			sh -c "trap '' INT TERM HUP; echo ready; while :; do sleep 0.05; done" >"$out_f" 2>&1 &
		pid=$!
		set +m
		await_ready "$out_f"
		t0=$(date +%s%N)
		if [ "$how" = second ]; then
			kill -INT "$pid"
			sleep 0.3
			kill -INT "$pid"
		elif [ "$how" = twice ]; then
			# What timeout(1) does: the signal to sbx, then to its group.
			kill -TERM "$pid"
			sleep 0.01
			kill -TERM "$pid"
		else
			kill -TERM "$pid"
		fi
		(sleep 30 && kill -KILL "$pid") 2>/dev/null &
		killer=$!
		wait "$pid"
		rc=$?
		ms=$((($(date +%s%N) - t0) / 1000000))
		pkill -P "$killer" sleep 2>/dev/null; kill "$killer" 2>/dev/null
		wait "$killer" 2>/dev/null
		dir=$(sandbox_dir "$mode" "$name")
		st=
		[ -n "$dir" ] && st=$(json_get "$dir/record.json" 'd["exit"]["status"], d["exit"]["reason"], d["exit"]["stop"]')
		if [ "$how" = second ]; then
			want="(137, 'stopped', 'second-signal')"
			grep -q "sbx: a second SIGINT: killing the jail now (SIGKILL)" "$out_f" &&
				grep -q "exit 137" "$out_f" && [ "$ms" -lt 5000 ]
		else
			want="(137, 'stopped', 'stop-timeout')"
			grep -q "sbx: the command had not ended 1 s after SIGTERM: killing the jail (SIGKILL)" "$out_f" &&
				[ "$ms" -ge 900 ] && [ "$ms" -lt 8000 ]
		fi
		[ $? -eq 0 ] && [ "$rc" -eq 137 ] && [ "$st" = "$want" ]
		ok $? "as $who: a command ignoring the signal ($how) is killed: exit $rc after $ms ms, record $st"
	done
	# timeout(1) sends SIGTERM to sbx and again to its process group: one
	# request, so the stop timeout still applies.
	name=stop-timeout1-$mode
	t0=$(date +%s%N)
	(as_mode_exec "$mode" timeout -s TERM 1 "$SBX" run --keep -n "$name" --stop-timeout 1s \
		--rootfs "$TARBALL" -- sh -c "trap '' TERM; while :; do sleep 0.05; done" \
		>"$TAP_TMP/$name.out" 2>&1)
	rc=$?
	ms=$((($(date +%s%N) - t0) / 1000000))
	dir=$(sandbox_dir "$mode" "$name")
	st=
	[ -n "$dir" ] && st=$(json_get "$dir/record.json" 'd["exit"]["stop"]')
	[ "$rc" -eq 124 ] && [ "$st" = stop-timeout ] && [ "$ms" -ge 1900 ] &&
		grep -q "had not ended 1 s after SIGTERM" "$TAP_TMP/$name.out" &&
		! grep -q "a second SIGTERM" "$TAP_TMP/$name.out"
	ok $? "as $who: timeout(1)'s SIGTERM to sbx and its group is one request: the stop timeout applies ($rc after $ms ms, $st)"
	grep -q "forwarded SIGINT to the command; the jail is killed if it has not ended in 10 s (--stop-timeout), or at once on a second Ctrl-C or SIGTERM" \
		"$TAP_TMP/stop-second-$mode.out"
	ok $? "as $who: the run log says what happens next (10 s by default)"
	as_mode "$mode" "$SBX" destroy --all >/dev/null 2>&1
done
capture "$SBX" profile show default
grep -qx 'stop-timeout = 10s' <<<"$out"
ok $? "the default stop timeout is 10 s"
done_testing
