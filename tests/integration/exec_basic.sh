#!/bin/bash
# sbx-test-timeout: 600
# sbx-test-lane: long
# tests/integration/exec_basic.sh - sbx exec into a running sandbox (the
# same namespaces as its command, no capabilities, no_new_privs, seccomp,
# its uid; only stdio fds, a cwd inside; exit statuses; -e -w -t; signals),
# into a kept exited sandbox (a new jail over its writable layer, the
# record's exit untouched), and the error paths (unknown, ambiguous, lost,
# no writable layer kept, a forged init_pid).  As root and as nobody.
. "$(dirname "$0")/../lib/tap.sh"
. "$(dirname "$0")/../lib/sbx.sh"

if [ "$(id -u)" -ne 0 ]; then
	echo "1..0 # SKIP needs root (runs the unprivileged half through setpriv)"
	exit 77
fi

sbx_base
IMG=$BASE/busybox.tar.gz
sbx_rootfs "$IMG"
sbx_wd

as_mode() {
	local mode=$1
	shift
	if [ "$mode" = root ]; then
		(cd "$WD" && env SBX_STATE_DIR="$BASE/state-root" SBX_CACHE_DIR="$BASE/cache-root" \
			SBX_TEST_PASS=passed-in SBX_TEST_HOSTONLY=leak "$@")
	else
		(cd "$WD" && setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all -- \
			env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME="$BASE" \
			${SBX_ENTER_PROC:+SBX_ENTER_PROC=$SBX_ENTER_PROC} \
			SBX_TEST_PASS=passed-in SBX_TEST_HOSTONLY=leak \
			SBX_STATE_DIR="$BASE/state-$mode" SBX_CACHE_DIR="$BASE/cache-$mode" "$@")
	fi
}

# start_sleeper MODE NAME: a running sandbox; sets $ID and $RUNPID.
start_sleeper() {
	as_mode "$1" "$SBX" run -q --keep -n "$2" --rootfs "$IMG" -- sleep 300 >/dev/null 2>&1 &
	RUNPID=$!
	ID=""
	for _ in $(seq 100); do
		ID=$(as_mode "$1" "$SBX" ps | awk -v n="$2" '$2 == n && $3 == "running" {print $1}')
		[ -n "$ID" ] && break
		sleep 0.1
	done
}

record() { python3 -c "import json,sys; r=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))" \
	"$BASE/state-$1/sandboxes/$2/record.json" "$3"; }

for mode in root user; do
	start_sleeper $mode "live-$mode"
	[ -n "$ID" ]
	ok $? "$mode: a running sandbox to enter (sbx ps shows it running)"
	INIT=$(record $mode "$ID" 'r["init_pid"]')
	CMDPID=$(cat /proc/"$INIT"/task/"$INIT"/children 2>/dev/null | awk '{print $1}')

	capture as_mode $mode "$SBX" exec "live-$mode" hostname
	[ $rc -eq 0 ] && [ "$out" = "sbx-${ID:0:8}" ]
	ok $? "$mode: exec by name runs hostname in the jail's uts namespace ($out, rc $rc: $err)"

	capture as_mode $mode "$SBX" exec "${ID:0:5}" cat /proc/self/status
	st=$out
	for k in CapInh CapPrm CapEff CapBnd CapAmb; do
		printf '%s\n' "$st" | grep -qx "$k:[[:space:]]*0000000000000000" || { echo "# $k not zero"; false; }
	done
	ok $? "$mode: exec by id prefix: all five capability sets are zero"
	printf '%s\n' "$st" | grep -qx 'NoNewPrivs:[[:space:]]*1' && printf '%s\n' "$st" | grep -qx 'Seccomp:[[:space:]]*2'
	ok $? "$mode: no_new_privs is set and a seccomp filter is loaded (Seccomp: 2)"
	capture as_mode $mode "$SBX" exec "$ID" sh -c 'grep -E "^(Uid|Gid):" /proc/self/status; grep -E "^(Uid|Gid):" /proc/2/status'
	[ $rc -eq 0 ] && [ "$(printf '%s\n' "$out" | sed -n 1,2p)" = "$(printf '%s\n' "$out" | sed -n 3,4p)" ]
	ok $? "$mode: same uid and gid as the sandbox's command ($(echo $out))"
	capture as_mode $mode "$SBX" exec "$ID" sleep 3
	[ $rc -eq 0 ]
	ok $? "$mode: exec sleep 3 exits 0"

	capture as_mode $mode "$SBX" exec "$ID" sh -c 'for n in cgroup ipc mnt net pid user uts; do echo "$n $(readlink /proc/self/ns/$n) $(readlink /proc/2/ns/$n)"; done'
	[ $rc -eq 0 ] && [ "$(lines "$out")" -eq 7 ] &&
		! printf '%s\n' "$out" | awk '$2 != $3 || $2 == "" {bad=1} END {exit !bad}'
	ok $? "$mode: the exec'd process's 7 namespaces equal the sandbox command's"
	if [ -n "$CMDPID" ]; then
		hostns=""
		for n in cgroup ipc mnt net pid user uts; do
			hostns="$hostns$n $(readlink /proc/$CMDPID/ns/$n)"$'\n'
		done
		capture as_mode $mode "$SBX" exec "$ID" sh -c 'for n in cgroup ipc mnt net pid user uts; do echo "$n $(readlink /proc/self/ns/$n)"; done'
		[ "$out"$'\n' = "$hostns" ] && ! printf '%s' "$hostns" | grep -q "$(readlink /proc/self/ns/mnt)"
		ok $? "$mode: ... and, seen from the host, the sandbox's command's (not the host's)"
	else
		ok 1 "$mode: the sandbox's command found from the host (init $INIT)"
	fi

	# The /proc/PID/ns path kernels before 6.11 take (forced by a test hook).
	capture as_mode $mode env SBX_ENTER_PROC=1 "$SBX" exec "$ID" sh -c 'for n in cgroup ipc mnt net pid user uts; do echo "$n $(readlink /proc/self/ns/$n) $(readlink /proc/2/ns/$n)"; done; grep -E "^(CapEff|Seccomp):" /proc/self/status'
	[ $rc -eq 0 ] && [ "$(printf '%s\n' "$out" | grep -c ':\[')" -eq 7 ] &&
		! printf '%s\n' "$out" | grep ':\[' | awk '$2 != $3 || $2 == "" {bad=1} END {exit !bad}' &&
		printf '%s\n' "$out" | grep -qx 'CapEff:[[:space:]]*0000000000000000' &&
		printf '%s\n' "$out" | grep -qx 'Seccomp:[[:space:]]*2'
	ok $? "$mode: through /proc/PID/ns (pre-6.11 kernels): the same 7 namespaces, no caps, seccomp ($rc)"

	capture as_mode $mode "$SBX" exec "$ID" ls /proc/self/fd
	[ $rc -eq 0 ] && [ "$(echo $out)" = "0 1 2 3" ]
	ok $? "$mode: the exec'd process has only stdio (+ ls's own dir fd): $(echo $out)"
	capture as_mode $mode "$SBX" exec "$ID" ls -l /proc/self/fd
	[ "$(printf '%s\n' "$out" | grep -cE ' [0-2] -> (pipe:|/dev/null$)')" -eq 3 ]
	ok $? "$mode: fds 0-2 are pipes or /dev/null ($(echo $out | tr -s ' '))"

	echo "host file content" >"$BASE/stdin.txt" && chmod 0644 "$BASE/stdin.txt"
	capture as_mode $mode "$SBX" exec "$ID" sh -c 'ls -l /proc/self/fd/0; cat' <"$BASE/stdin.txt"
	[ $rc -eq 0 ] && [[ $out == *"-> pipe:"* ]] && [[ $out == *"host file content"* ]]
	ok $? "$mode: a host file on stdin reaches the command through a pipe, not as the file ($(echo $out))"
	capture as_mode $mode "$SBX" exec "$ID" true <"$BASE"
	[ $rc -eq 125 ] && [[ $err == *"standard input is a directory"* ]]
	ok $? "$mode: a host directory on stdin is refused: 125 ($err)"

	capture as_mode $mode "$SBX" exec -w /tmp "$ID" sh -c 'readlink /proc/self/cwd; stat -c %i /proc/self/cwd/; stat -c %i /tmp/; readlink /proc/self/root'
	set -- $out
	[ $rc -eq 0 ] && [ "$1" = /tmp ] && [ "$2" = "$3" ] && [ "$4" = / ]
	ok $? "$mode: -w /tmp: cwd is the jail's /tmp, root the jail's / ($(echo $out))"
	capture as_mode $mode "$SBX" exec "$ID" sh -c 'readlink /proc/self/cwd; ls -di /proc/self/cwd/ /proc/1/cwd/ 2>/dev/null | wc -l; ls /proc/self/cwd/ >/dev/null && echo listable'
	[ $rc -eq 0 ] && [ "$(printf '%s\n' "$out" | sed -n 1p)" = "$WD" ] && [[ $out == *listable* ]]
	ok $? "$mode: default cwd is the sandbox's workdir, inside the jail ($(echo $out))"
	capture as_mode $mode "$SBX" exec "$ID" sh -c 'ls / | tr "\n" " "'
	[[ $out == *bin*proc*tmp* ]] && [[ $out != *work* || -d /work ]]
	ok $? "$mode: / is the jail's root ($out)"

	# CVE-2024-21626: a workdir through a descriptor sbx might still hold.
	leaked=""
	for n in $(seq 3 15); do
		capture as_mode $mode "$SBX" exec -w /proc/self/fd/$n "$ID" pwd
		[ $rc -eq 125 ] || leaked="$leaked fd$n($rc:$out)"
	done
	[ -z "$leaked" ]
	ok $? "$mode: -w /proc/self/fd/3..15 never lands anywhere (125 each)${leaked:+:$leaked}"

	capture as_mode $mode "$SBX" exec "$ID" sh -c 'exit 3'
	[ $rc -eq 3 ]
	ok $? "$mode: exit status passes through (3, got $rc)"
	capture as_mode $mode "$SBX" exec "$ID" no-such-command
	[ $rc -eq 127 ] && [ "$(lines "$err")" -eq 1 ] &&
		[[ "$err" == "sbx: 'no-such-command': not found on the jail's PATH ("*")" ]]
	ok $? "$mode: command not found: 127 ($rc: $err)"
	capture as_mode $mode "$SBX" exec "$ID" /etc/passwd
	[ $rc -eq 126 ] && [[ "$err" == "sbx: '/etc/passwd': is not executable (mode 0644"* ]]
	ok $? "$mode: not executable: 126 (got $rc)"
	capture as_mode $mode "$SBX" exec "$ID" sh -c 'kill -9 $$'
	[ $rc -eq 137 ]
	ok $? "$mode: killed by SIGKILL: 137 (got $rc)"

	capture as_mode $mode "$SBX" exec -e FOO=bar -e SBX_TEST_PASS "$ID" env
	printf '%s\n' "$out" | grep -qx FOO=bar && printf '%s\n' "$out" | grep -qx SBX_TEST_PASS=passed-in &&
		! printf '%s\n' "$out" | grep -q SBX_TEST_HOSTONLY
	ok $? "$mode: -e NAME=VAL sets, -e NAME passes, the rest of the host env stays out"
	capture as_mode $mode "$SBX" exec "$ID" -- sh -c 'echo "$0 $1"' a b
	[ "$out" = "a b" ]
	ok $? "$mode: '--' ends exec's options ($out)"

	capture as_mode $mode script -qec "$SBX exec -t $ID sh -c 'tty; exit 5'" /dev/null
	[ $rc -eq 5 ] && [[ $out == */dev/pts/* ]]
	ok $? "$mode: -t gives a pty of the jail's devpts and the status ($rc: $(echo $out | tr -d '\r'))"
	capture as_mode $mode sh -c "printf 'hello\nworld\n' | '$SBX' exec -t $ID cat"
	[ $rc -eq 0 ] && [ "$(printf '%s' "$out" | tr -d '\r')" = "$(printf 'hello\nworld')" ]
	ok $? "$mode: -t with piped input: not echoed ($rc: $(printf '%s' "$out" | tr '\r\n' '|'))"

	# Signals reach the command: SIGTERM to sbx exec -> 143.
	as_mode $mode "$SBX" exec "$ID" sleep 30 >/dev/null 2>&1 &
	epid=$!
	sleep 0.5
	# the sbx exec process itself (as_mode adds a subshell, and setpriv execs)
	target=$(pgrep -f "$SBX exec $ID sleep 30" | head -1)
	kill -TERM "$target"
	wait $epid
	erc=$?
	[ $erc -eq 143 ]
	ok $? "$mode: SIGTERM to sbx exec reaches the command (exit $erc)"

	# SIGKILL of sbx exec: what it started in the jail dies with it.
	as_mode $mode "$SBX" exec "$ID" sleep 97$$ >/dev/null 2>&1 &
	epid=$!
	for _ in $(seq 50); do pgrep -xf "sleep 97$$" >/dev/null && break; sleep 0.1; done
	before=$(pgrep -xf "sleep 97$$")
	kill -KILL "$(pgrep -f "$SBX exec $ID sleep 97$$" | head -1)"
	wait $epid 2>/dev/null
	for _ in $(seq 30); do pgrep -xf "sleep 97$$" >/dev/null || break; sleep 0.1; done
	[ -n "$before" ] && ! pgrep -xf "sleep 97$$" >/dev/null
	ok $? "$mode: SIGKILL of sbx exec kills the command it started in the jail"

	# Twenty at once: each its own status, pid and exec event.
	nev=$(grep -c '"event":"exec"' "$BASE/state-$mode/sandboxes/$ID/log.jsonl")
	# (their own pids: `jobs -p` drops jobs already done, and its last 20
	# then took in the sleeper's job, whose wait outlived the jail)
	par=()
	for i in $(seq 20); do
		(as_mode $mode "$SBX" exec "$ID" sh -c "echo \$\$; exit $((i % 7))" >"$BASE/par.$i" 2>&1
			echo $? >>"$BASE/par.$i") &
		par+=($!)
	done
	wait "${par[@]}" 2>/dev/null
	good=0
	for i in $(seq 20); do [ "$(sed -n 2p "$BASE/par.$i")" = $((i % 7)) ] && good=$((good + 1)); done
	pids=$(for i in $(seq 20); do sed -n 1p "$BASE/par.$i"; done | sort -u | wc -l)
	[ $good -eq 20 ] && [ "$pids" -eq 20 ] &&
		[ "$(grep -c '"event":"exec"' "$BASE/state-$mode/sandboxes/$ID/log.jsonl")" -eq $((nev + 20)) ]
	ok $? "$mode: 20 parallel execs: $good right statuses, $pids distinct jail pids, 20 more exec events"

	capture as_mode $mode "$SBX" inspect --json "$ID"
	grep -c '"event":"exec"' "$BASE/state-$mode/sandboxes/$ID/log.jsonl" | grep -qv '^0$' &&
		grep '"event":"exec"' "$BASE/state-$mode/sandboxes/$ID/log.jsonl" | grep -q '"mode":"running"'
	ok $? "$mode: exec events are appended to log.jsonl"

	# A forged record: init_pid naming a host process of the same user.
	# (a name of its own, and waited for: a loaded machine starts it late)
	dsec=61.$$
	as_mode $mode sleep $dsec 2>/dev/null &
	disown $!
	decoy=
	for _ in $(seq 100); do
		decoy=$(pgrep -f "^sleep $dsec\$" | tail -1)
		[ -n "$decoy" ] && break
		sleep 0.1
	done
	cp "$BASE/state-$mode/sandboxes/$ID/record.json" "$BASE/rec.bak"
	python3 - "$BASE/state-$mode/sandboxes/$ID/record.json" "$decoy" <<'PY'
import json, sys
p = sys.argv[1]; r = json.load(open(p)); r["init_pid"] = int(sys.argv[2]); r.pop("init_start", None)
json.dump(r, open(p, "w"))
PY
	forged=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1])).get("init_pid"))' \
		"$BASE/state-$mode/sandboxes/$ID/record.json" 2>&1)
	capture as_mode $mode "$SBX" exec "$ID" cat /proc/self/status
	[ $rc -eq 125 ] && [[ $err == *"not the jail's init"* ]]
	ok $? "$mode: a record whose init_pid names another process is refused: 125 (rc $rc, decoy '$decoy', record's init_pid $forged: $err)"
	echo '{' >"$BASE/state-$mode/sandboxes/$ID/record.json"
	capture as_mode $mode "$SBX" exec "$ID" true
	[ $rc -eq 125 ] && [[ $err == "sbx: sandbox '$ID' has no usable record: record.json is not valid ("*")" ]]
	ok $? "$mode: a damaged record is refused in one line saying what is wrong, no errno tail ($rc: $err)"
	cp "$BASE/rec.bak" "$BASE/state-$mode/sandboxes/$ID/record.json"
	kill $decoy 2>/dev/null
	as_mode $mode "$SBX" destroy "$ID" >/dev/null
	wait $RUNPID 2>/dev/null

	# Limits: the exec'd process joins the sandbox's cgroup (before setns).
	as_mode $mode "$SBX" run -q --keep -n "lim-$mode" --memory 64m --pids 64 --rootfs "$IMG" -- \
		sleep 300 >/dev/null 2>&1 &
	limrun=$!
	for _ in $(seq 100); do
		as_mode $mode "$SBX" ps | grep -q " lim-$mode .*running" && break
		sleep 0.1
	done
	LIM=$(as_mode $mode "$SBX" ps | awk -v n="lim-$mode" '$2 == n {print $1}')
	cgv=$(record $mode "$LIM" 'r["cgroup"]["version"]')
	if [ "$cgv" != 0 ]; then
		# Long enough to outlast a loaded machine's checks; ended below.
		as_mode $mode "$SBX" exec "lim-$mode" sleep 120.$$ >/dev/null 2>&1 &
		execpid=$!
		hp=""
		for _ in $(seq 50); do
			hp=$(pgrep -xf "sleep 120.$$" | head -1)
			[ -n "$hp" ] && break
			sleep 0.1
		done
		inall=yes
		for d in $(record $mode "$LIM" '" ".join(r["cgroup"]["paths"])'); do
			procs=$(cat "$d/cgroup.procs" "$d"/*/cgroup.procs 2>/dev/null)
			printf '%s\n' "$procs" | grep -qx "$hp" || inall="no ($d)"
		done
		capture as_mode $mode "$SBX" exec "lim-$mode" cat /proc/self/cgroup
		[ -n "$hp" ] && [ "$inall" = yes ] && ! printf '%s\n' "$out" | grep -qv ':/$'
		ok $? "$mode: the exec'd process ($hp) is in the sandbox's cgroup v$cgv, at its cgroup namespace's root ($inall; $(echo $out))"
		[ -n "$hp" ] && kill "$hp" 2>/dev/null
		wait $execpid
	else
		diag "$mode: sandbox without a cgroup (none usable for this user): the cgroup join is covered as root"
	fi
	as_mode $mode "$SBX" destroy "$LIM" >/dev/null
	wait $limrun 2>/dev/null

	# The same seccomp policy as the sandbox's command: strict refuses
	# socket(AF_INET) with ENOSYS where default lets it fail on the network.
	as_mode $mode "$SBX" run -q --keep -n "strict-$mode" -p strict --rootfs "$IMG" -- \
		sh -c 'nc 127.0.0.1 1 </dev/null >/tmp/cmd.txt 2>&1; sleep 300' >/dev/null 2>&1 &
	strictrun=$!
	# running, and its command's nc done (a loaded machine: up to 30 s)
	for _ in $(seq 300); do
		as_mode $mode "$SBX" ps | grep -q " strict-$mode .*running" &&
			as_mode $mode "$SBX" exec "strict-$mode" test -s /tmp/cmd.txt 2>/dev/null && break
		sleep 0.1
	done
	capture as_mode $mode "$SBX" exec "strict-$mode" sh -c 'cat /tmp/cmd.txt; nc 127.0.0.1 1 </dev/null 2>&1'
	[ "$(printf '%s\n' "$out" | grep -c 'socket: Function not implemented')" -eq 2 ]
	ok $? "$mode: in a strict sandbox the exec'd command gets strict's seccomp errno, as the sandbox's command did ($(echo $out) $err)"
	as_mode $mode "$SBX" destroy "strict-$mode" >/dev/null
	wait $strictrun 2>/dev/null
	capture as_mode $mode "$SBX" run -q --rootfs "$IMG" -- sh -c 'nc 127.0.0.1 1 </dev/null 2>&1'
	[[ $out != *"Function not implemented"* ]]
	ok $? "$mode: ... and the default policy does not ($out)"

	# A kept, exited sandbox: a new jail over its writable layer.
	capture as_mode $mode "$SBX" run -q --keep -n "kept-$mode" --rootfs "$IMG" -- \
		sh -c 'echo evidence > /failed.txt; rm /etc/hostname; exit 4'
	[ $rc -eq 4 ]
	ok $? "$mode: a kept failing run (exit $rc)"
	capture as_mode $mode "$SBX" exec "kept-$mode" sh -c 'cat /failed.txt; ls /etc/hostname 2>&1; grep -E "^(CapEff|NoNewPrivs|Seccomp):" /proc/self/status'
	[ $rc -eq 0 ] && printf '%s\n' "$out" | grep -qx evidence &&
		printf '%s\n' "$out" | grep -q 'No such file' &&
		printf '%s\n' "$out" | grep -qx 'CapEff:[[:space:]]*0000000000000000' &&
		printf '%s\n' "$out" | grep -qx 'Seccomp:[[:space:]]*2'
	ok $? "$mode: exec into the kept sandbox sees what the failed run wrote and deleted, confined ($(echo $out))"
	leaked=""
	for n in $(seq 3 15); do
		capture as_mode $mode "$SBX" exec -w /proc/self/fd/$n "kept-$mode" pwd
		[ $rc -eq 125 ] || leaked="$leaked fd$n($rc:$out)"
	done
	[ -z "$leaked" ]
	ok $? "$mode: kept sandbox: -w /proc/self/fd/3..15 never lands anywhere${leaked:+:$leaked}"
	capture as_mode $mode "$SBX" exec "kept-$mode" sh -c 'echo later > /after.txt; exit 6'
	[ $rc -eq 6 ]
	ok $? "$mode: its exit status passes through (6, got $rc)"
	capture as_mode $mode "$SBX" exec "kept-$mode" cat /after.txt
	[ "$out" = later ]
	ok $? "$mode: writes land in the same writable layer ($out)"
	KID=$(as_mode $mode "$SBX" ps -a | awk -v n="kept-$mode" '$2 == n {print $1}')
	[ "$(record $mode "$KID" 'r["exit"]["status"], r["state"]')" = "(4, 'exited')" ] &&
		as_mode $mode "$SBX" ps -a | grep -q " kept-$mode .*exited 4 " &&
		[ "$(grep -c '"event":"exec".*"mode":"new jail"' "$BASE/state-$mode/sandboxes/$KID/log.jsonl")" -eq 3 ] &&
		[ "$(grep -c '"event":"exit"' "$BASE/state-$mode/sandboxes/$KID/log.jsonl")" -eq 1 ]
	ok $? "$mode: the record still holds the run's exit 4; log.jsonl got 3 exec events"
	capture as_mode $mode "$SBX" exec "kept-$mode" sh -c 'grep " / " /proc/self/mountinfo | grep -c overlay; ps | wc -l'
	[ $rc -eq 0 ] && [ "$(printf '%s\n' "$out" | sed -n 1p)" -ge 1 ]
	ok $? "$mode: the new jail's root is the overlay ($(echo $out))"

	# [limits] disk (as root): the layers live on a tmpfs in the sandbox dir.
	if [ $mode = root ]; then
		printf '[sandbox]\nextends = default\n\n[limits]\ndisk = 32m\n' >"$BASE/disk.ini"
		capture as_mode $mode "$SBX" run -q --keep -n "disk-$mode" -p "$BASE/disk.ini" --rootfs "$IMG" -- \
			sh -c 'echo on-disk > /d.txt; exit 9'
		capture as_mode $mode "$SBX" exec "disk-$mode" sh -c 'cat /d.txt; df -k / | tail -1'
		[ $rc -eq 0 ] && [[ $out == on-disk* ]]
		ok $? "$mode: a kept sandbox whose layers are on its [limits] disk tmpfs ($(echo $out))"
	fi

	# Error paths: 125 and one line naming the problem.
	capture as_mode $mode "$SBX" exec no-such-sandbox true
	[ $rc -eq 125 ] && [ "$(lines "$err")" -eq 1 ] && [[ $err == "sbx: "*no-such-sandbox* ]]
	ok $? "$mode: unknown sandbox: 125 ($err)"
	for _ in $(seq 40); do
		as_mode $mode "$SBX" run -q --keep --rootfs "$IMG" -- true >/dev/null 2>&1
		dup=$(as_mode $mode "$SBX" ps -a | awk 'NR > 1 {print substr($1, 1, 1)}' | sort | uniq -d | head -1)
		[ -n "$dup" ] && break
	done
	capture as_mode $mode "$SBX" exec "$dup" true
	[ -n "$dup" ] && [ $rc -eq 125 ] && [[ $err == *ambiguous* || $err == *candidates* || $err == *matches* ]] &&
		[ "$(printf '%s\n' "$err" | grep -o "${dup}[0-9a-f]\{11\}" | sort -u | wc -l)" -ge 2 ]
	ok $? "$mode: ambiguous prefix '$dup': 125, lists the candidates ($err)"
	# The host root with the default profile: its copy-on-write working
	# directory is the kept layer (the default and ci case).
	capture as_mode $mode "$SBX" run -q --keep -n "hostroot-$mode" --rootfs host -- \
		sh -c 'echo from-run >hostroot-made.txt; exit 2'
	capture as_mode $mode "$SBX" exec "hostroot-$mode" sh -c 'cat hostroot-made.txt; echo from-exec >>hostroot-made.txt'
	[ $rc -eq 0 ] && [ "$out" = from-run ] && [ ! -e "$WD/hostroot-made.txt" ]
	ok $? "$mode: exec into a kept host-root sandbox sees its copy-on-write changes ($rc: $out $err)"
	capture as_mode $mode "$SBX" exec "hostroot-$mode" cat hostroot-made.txt
	[ "$out" = "$(printf 'from-run\nfrom-exec')" ] && [ ! -e "$WD/hostroot-made.txt" ]
	ok $? "$mode: and what that exec wrote stays in the sandbox ($out)"
	printf '[sandbox]\nrootfs = host\n' >"$BASE/nolayer.ini" && chmod 0644 "$BASE/nolayer.ini"
	capture as_mode $mode "$SBX" run -q --keep -n "nolayer-$mode" -p "$BASE/nolayer.ini" -- sh -c 'exit 2'
	capture as_mode $mode "$SBX" exec "nolayer-$mode" true
	[ $rc -eq 125 ] && [[ $err == *"no writable layer"* ]]
	ok $? "$mode: exited sandbox without a kept writable layer: 125 ($err)"
	capture as_mode $mode "$SBX" exec
	[ $rc -eq 125 ] && [[ $err == *"no sandbox given"* ]]
	ok $? "$mode: no sandbox: 125 ($err)"
	capture as_mode $mode "$SBX" exec "kept-$mode"
	[ $rc -eq 125 ] && [[ $err == *"no command"* ]]
	ok $? "$mode: no command: 125 ($err)"

	# Lost: the supervisor SIGKILLed, the jail died with it.
	as_mode $mode "$SBX" run -q --keep -n "lost-$mode" --rootfs "$IMG" -- sleep 8765 >/dev/null 2>&1 &
	for _ in $(seq 100); do
		as_mode $mode "$SBX" ps | grep -q " lost-$mode .*running" && break
		sleep 0.1
	done
	LID=$(as_mode $mode "$SBX" ps | awk -v n="lost-$mode" '$2 == n {print $1}')
	sup=$(record $mode "$LID" 'r["supervisor_pid"]')
	kill -KILL "$sup"
	wait
	sleep 0.3
	capture as_mode $mode "$SBX" exec "lost-$mode" true
	[ $rc -eq 125 ] && [[ $err == *lost* ]] && ! pgrep -f '^sleep 8765' >/dev/null
	ok $? "$mode: lost sandbox: 125 ($err)"

	as_mode $mode "$SBX" destroy --all >/dev/null 2>&1
	as_mode $mode "$SBX" destroy --stale >/dev/null 2>&1
done

done_testing
