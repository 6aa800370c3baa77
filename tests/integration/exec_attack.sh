#!/bin/bash
# sbx-test-timeout: 900
# sbx-test-lane: long
# tests/integration/exec_attack.sh - a hostile jail against `sbx exec`
# (runc CVE-2016-9962, CVE-2019-5736, CVE-2024-21626).  The sandbox's
# command is tests/escape/exec_watch: it watches /proc and at once tries
# to ptrace every new process and to open its /proc/PID/exe, cwd, root,
# environ, mem and fd/N, while `sbx exec` runs 50 times from a host
# directory holding a marker file.  Nothing it gets may be the host's: not
# the sbx binary, not the marker directory or any host directory above what
# it opened, not sbx's state.  The exec'd processes have only stdio fds.
# As root and as nobody.
. "$(dirname "$0")/../lib/tap.sh"

if [ "$(id -u)" -ne 0 ]; then
	echo "1..0 # SKIP needs root (runs the unprivileged half through setpriv)"
	exit 77
fi
WATCH=$TAP_ROOT/tests/escape/exec_watch
if [ ! -x "$WATCH" ]; then
	make -C "$TAP_ROOT" -s tests/escape/exec_watch >/dev/null 2>&1 ||
		{ echo "Bail out! tests/escape/exec_watch is not built"; exit 1; }
fi

BASE=$TAP_TMP/base
mkdir -p "$BASE" && chmod 0777 "$BASE"
cp "$SBX" "$BASE/sbx" && chmod 0755 "$BASE/sbx" && SBX=$BASE/sbx
IMG=$BASE/busybox.tar.gz
"$TAP_ROOT/tests/lib/mkrootfs.sh" "$IMG" "$WATCH:/exec_watch" >/dev/null ||
	{ echo "Bail out! mkrootfs failed"; exit 1; }
chmod 0644 "$IMG"
WD=$BASE/wd
mkdir -p "$WD" && chmod 0777 "$WD"
MARK=host-marker-$$-$RANDOM
N=${EXEC_ATTACK_N:-50}

as_mode() {
	local mode=$1 dir=$2
	shift 2
	if [ "$mode" = root ]; then
		(cd "$dir" && env SBX_STATE_DIR="$BASE/state-root" SBX_CACHE_DIR="$BASE/cache-root" "$@")
	else
		(cd "$dir" && setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all -- \
			env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME="$BASE" \
			${SBX_ENTER_PROC:+SBX_ENTER_PROC=$SBX_ENTER_PROC} \
			SBX_STATE_DIR="$BASE/state-$mode" SBX_CACHE_DIR="$BASE/cache-$mode" "$@")
	fi
}

devino() { stat -L -c '%d:%i' "$1"; }

# The detector works: outside any jail, against a process whose cwd is the
# marked directory, it reports the escape.
CTL=$BASE/control
mkdir -p "$CTL" && touch "$CTL/$MARK"
# In a pid namespace of its own: the watcher ptraces every new process it
# sees, and on the host that would stop other programs on the machine.
# shellcheck disable=SC2016
unshare -pf --mount-proc sh -c '(cd "$1" && exec sleep 30) & echo $! >"$2/control.pid"
	cd "$2" && "$3" 1 /nonexistent "$4"; kill $! 2>/dev/null' sh "$CTL" "$BASE" "$WATCH" "$MARK" \
	>"$BASE/control.out" 2>&1
ctl=$(cat "$BASE/control.pid" 2>/dev/null)
[ -n "$ctl" ] && grep -q "^ESCAPE cwd $ctl:" "$BASE/control.out"
ok $? "control: the attacker reports a process whose cwd is the marked host directory"

# A policy that lets the jail ptrace: then only sbx exec's own protection
# (non-dumpable until execve, no host fds, no host cwd) stands in the way.
printf 'allow ptrace\nallow process_vm_readv\n' >"$BASE/ptrace.policy"
printf '[sandbox]\nextends = default\n\n[security]\nseccomp = %s\n' "$BASE/ptrace.policy" \
	>"$BASE/ptrace.ini"
chmod 0644 "$BASE/ptrace.policy" "$BASE/ptrace.ini"

# The same, the command running as another user than sbx's entering process
# (uid 1000: the ids change) and fs.suid_dumpable = 1, under which changing
# ids makes a process dumpable again: it must stay out of reach until execve.
printf '[sandbox]\nextends = default\nuser = 1000:1000\n\n[security]\nseccomp = %s\n' \
	"$BASE/ptrace.policy" >"$BASE/ptrace-uid.ini"
chmod 0644 "$BASE/ptrace-uid.ini"
SUID_DUMPABLE=$(cat /proc/sys/fs/suid_dumpable)
trap 'echo "$SUID_DUMPABLE" >/proc/sys/fs/suid_dumpable; tap_cleanup' EXIT

for run in ${EXEC_ATTACK_RUNS:-root:default user:default root:ptrace user:ptrace root:ptrace-uid}; do
	mode=${run%%:*}
	pol=${run#*:}
	prof=()
	[ "$pol" = ptrace ] && prof=(-p "$BASE/ptrace.ini")
	[ "$pol" = ptrace-uid ] && prof=(-p "$BASE/ptrace-uid.ini")
	if [ "$pol" = ptrace-uid ]; then
		echo 1 >/proc/sys/fs/suid_dumpable
	else
		echo "$SUID_DUMPABLE" >/proc/sys/fs/suid_dumpable
	fi
	EX=$BASE/execcwd-$mode
	mkdir -p "$EX" && chmod 0777 "$EX" && touch "$EX/$MARK"
	OUT=$BASE/attack-$mode.out
	as_mode $mode "$WD" "$SBX" run -q --keep -n "atk-$mode" "${prof[@]}" --rootfs "$IMG" -- \
		/exec_watch 300 /tmp/stop "$MARK" >"$OUT" 2>"$BASE/attack-$mode.err" &
	runpid=$!
	for _ in $(seq 100); do grep -q '^READY' "$OUT" 2>/dev/null && break; sleep 0.1; done
	grep -q '^READY' "$OUT"
	ok $? "$mode/$pol: the attacker runs as the sandbox's command and is watching"
	ID=$(as_mode $mode "$WD" "$SBX" ps | awk -v n="atk-$mode" '$2 == n {print $1}')

	fails=0
	stopped=0
	failed=""
	disturbed=""
	fdbad=""
	T="timeout -s KILL 20"
	for i in $(seq "$N"); do
		case $((i % 5)) in
		0) as_mode $mode "$EX" $T "$SBX" exec "atk-$mode" sh -c 'sleep 0.05' </dev/null >/dev/null 2>&1 ;;
		1) as_mode $mode "$EX" $T "$SBX" exec -w /tmp "atk-$mode" true </dev/null >/dev/null 2>&1 ;;
		2)
			fds=$(as_mode $mode "$EX" $T "$SBX" exec "atk-$mode" ls /proc/self/fd </dev/null 2>/dev/null)
			[ "$(echo $fds)" = "0 1 2 3" ] || [ -z "$fds" ] || fdbad="$fdbad [$(echo $fds)]"
			[ -n "$fds" ]
			;;
		3) as_mode $mode "$EX" $T "$SBX" exec -e X=1 "atk-$mode" cat /proc/self/status </dev/null >/dev/null 2>&1 ;;
		4) as_mode $mode "$EX" $T script -qec "$SBX exec -t atk-$mode true" /dev/null </dev/null >/dev/null 2>&1 ;;
		esac
		erc=$?
		# Where the policy lets it, the attacker may ptrace-stop (or kill) an
		# exec'd command after its execve, a jail process like any other:
		# that is no failure of sbx (125 would be).
		if [ $erc -ne 0 ] && [ $erc -ne 125 ] && [ "$pol" != default ]; then
			stopped=$((stopped + 1))
			disturbed="$disturbed $erc"
		elif [ $erc -ne 0 ]; then
			fails=$((fails + 1))
			failed="$failed $erc"
		fi
	done
	[ $fails -eq 0 ] && [ $stopped -le $((N / 10)) ]
	ok $? "$mode/$pol: $N sbx exec while the attacker watches succeed ($fails failed${failed:+ (exit$failed)}, $stopped disturbed by the attacker's ptrace${disturbed:+ (exit$disturbed)})"
	[ -z "$fdbad" ]
	ok $? "$mode/$pol: each exec'd process had only fds 0 1 2 (+ ls's dir fd)${fdbad:+:$fdbad}"

	as_mode $mode "$EX" "$SBX" exec "atk-$mode" touch /tmp/stop </dev/null
	wait $runpid
	runrc=$?
	grep -q '^DONE' "$OUT" && [ $runrc -eq 0 ]
	ok $? "$mode/$pol: the attacker finished ($(grep '^DONE' "$OUT"), run exit $runrc)"

	ctlline=$(grep '^CONTROL' "$OUT")
	want=no
	[ "$pol" != default ] && want=yes
	[[ $ctlline == "CONTROL ptrace=$want opens=2" ]]
	ok $? "$mode/$pol: inside the jail the probes work on the attacker's own child, ptrace $([ $want = yes ] && echo allowed || echo "refused by seccomp") ($ctlline)"
	saw=$(grep -c '^SAW ' "$OUT")
	[ "$saw" -ge $((N * 3 / 5)) ]
	ok $? "$mode/$pol: the attacker saw most exec'd processes ($saw new processes of $N)"
	pre=$(grep -c '^SAW [0-9]* sbx-exec$' "$OUT")
	[ "$pre" -ge 1 ]
	ok $? "$mode/$pol: it caught $pre of them before their execve (comm sbx-exec) and attacked them there"
	! grep -q '^ESCAPE' "$OUT"
	ok $? "$mode/$pol: no directory it opened leads to the marked host directory$(grep -m3 '^ESCAPE' "$OUT" | tr '\n' ' ')"
	# sbx exec's host command line (its path, -e values, the sandbox's
	# name) never shows in an exec'd process's /proc/PID/cmdline, even
	# read before its execve.
	leak=$(grep '^CMDLINE ' "$OUT" | grep -F -e "atk-$mode" -e "X=1" | sort -u | head -3)
	[ -n "$(grep '^CMDLINE ' "$OUT")" ] && [ -z "$leak" ]
	ok $? "$mode/$pol: no /proc/PID/cmdline it read shows sbx exec's command line ($(grep -c '^CMDLINE [0-9]* sbx-exec $' "$OUT") read as sbx-exec)${leak:+: $leak}"

	# Host objects that must never show up in what it got.
	declare -A host=()
	for f in "$SBX" "$TAP_ROOT/sbx" "$EX" "$BASE" "$WD" "$TAP_TMP" / /tmp /root /proc \
		"$BASE/state-$mode" "$BASE/state-$mode/sandboxes" "$BASE/state-$mode/sandboxes/$ID" \
		"$BASE/cache-$mode"; do
		[ -e "$f" ] && host[$(devino "$f")]=$f
	done
	leaks=""
	while read -r _ what pid comm di _; do
		[[ $di == *:* ]] && [ -n "${host[$di]:-}" ] && leaks="$leaks $what($pid,$comm)=${host[$di]}"
	done < <(grep '^GOT ' "$OUT")
	while read -r _ what pid level di; do
		[[ $di == *:* ]] && [ -n "${host[$di]:-}" ] && leaks="$leaks $what($pid)^$level=${host[$di]}"
	done < <(grep '^UP ' "$OUT")
	[ -z "$leaks" ]
	ok $? "$mode/$pol: nothing it opened (or any parent of it) is a host object${leaks:+:$leaks}"
	early=$(grep -cE '^GOT [^ ]+ [0-9]+ sbx-exec ' "$OUT")
	diag "$mode/$pol: $early probes of processes seen as sbx-exec succeeded (a host object among them fails the check above)"
	diag "$mode/$pol: ptrace/process_vm_readv succeeded $(grep -cE '^GOT (ptrace|process_vm)' "$OUT") times (on exec'd processes after their execve), $(grep -c '^GOT ' "$OUT") things opened (all after execve: the jail's own), $(grep '^DONE' "$OUT")"
	unset host
	as_mode $mode "$WD" "$SBX" destroy --all >/dev/null 2>&1
done
echo "$SUID_DUMPABLE" >/proc/sys/fs/suid_dumpable

done_testing
