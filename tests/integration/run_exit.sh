#!/bin/bash
# tests/integration/run_exit.sh - `sbx run` exit statuses, limits, signals,
# the run log and record, output capture, and hostile images whose /proc,
# /dev or a bind target is a symlink.  As root and as nobody.
. "$(dirname "$0")/../lib/tap.sh"
. "$(dirname "$0")/../lib/sbx.sh"

# As root: both halves (the unprivileged one through setpriv as 65534).
# As anyone else: the unprivileged half as that user.
sbx_modes
sbx_host_base

sbx_base
IMG=$BASE/busybox.tar.gz
sbx_rootfs "$IMG"
sbx_wd

# Hostile images: /proc -> host path, /dev -> /, a bind target -> host path.
mkimg() { # NAME SETUP-SHELL
	local d=$BASE/$1.d
	mkdir -p "$d" && tar -C "$d" -xzf "$IMG" && (cd "$d" && eval "$2") &&
		tar -C "$d" --numeric-owner -czf "$BASE/$1.tar.gz" . && chmod 0644 "$BASE/$1.tar.gz"
}
EVIL=$BASE/evil-target
mkimg proclink "rmdir proc && ln -s ../../../../../../$EVIL proc"
mkimg devlink "rm -rf dev && ln -s / dev"
mkimg bindlink "mkdir -p mnt && ln -s $EVIL-bind mnt/t"

as_mode() {
	local mode=$1
	shift
	if [ "$mode" = user ] && [ "$(id -u)" -ne 0 ]; then
		(cd "$WD" && exec env HOME="$BASE" SBX_STATE_DIR="$BASE/state-user" \
			SBX_CACHE_DIR="$BASE/cache-user" "$@")
	elif [ "$mode" = root ]; then
		(cd "$WD" && exec env SBX_STATE_DIR="$BASE/state-root" SBX_CACHE_DIR="$BASE/cache-root" "$@")
	else
		(cd "$WD" && exec setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all -- \
			env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME="$BASE" \
			SBX_STATE_DIR="$BASE/state-user" SBX_CACHE_DIR="$BASE/cache-user" "$@")
	fi
}

status_is() { # MODE WANT DESC CMD...
	local mode=$1 want=$2 desc=$3
	shift 3
	capture as_mode $mode "$SBX" run -q --rootfs "$IMG" "$@"
	[ "$rc" -eq "$want" ]
	ok $? "$mode: $desc: exit $want (got $rc)"
}

for mode in $MODES; do
	# Exit statuses, exactly.
	status_is $mode 0 "true" -- true
	status_is $mode 3 "own status" -- sh -c 'exit 3'
	status_is $mode 127 "command not found" -- /no/such/command
	status_is $mode 127 "command not in PATH" -- no-such-command-anywhere
	status_is $mode 126 "not executable" -- /etc/passwd
	status_is $mode 137 "killed by SIGKILL" -- sh -c 'kill -9 $$'
	status_is $mode 143 "killed by SIGTERM" -- sh -c 'kill -15 $$'
	status_is $mode 124 "time limit" --time 1s -- sleep 30
	capture as_mode $mode "$SBX" run -q -p "$BASE/missing.ini" -- true
	[ "$rc" -eq 125 ] && [ "$(lines "$err")" -eq 1 ] && [[ "$err" == sbx:* ]]
	ok $? "$mode: bad profile: exit 125 with one line ($err)"
	capture as_mode $mode "$SBX" run -q --rootfs "$BASE/missing.tar.gz" -- true
	[ "$rc" -eq 125 ]
	ok $? "$mode: bad rootfs: exit 125 ($err)"
	capture as_mode $mode "$SBX" run -q --rootfs "$IMG" --bind "$BASE/no-such-dir:/x" -- true
	[ "$rc" -eq 125 ] && [ "$(lines "$err")" -eq 1 ] && [[ "$err" == *no-such-dir* ]]
	ok $? "$mode: set-up failure names what failed, exit 125 ($err)"
	capture as_mode $mode "$SBX" run -q --rootfs "$IMG" -w /no/such/dir -- true
	[ "$rc" -eq 125 ] && [ "$(lines "$err")" -eq 1 ] &&
		[[ "$err" == "sbx: cannot change to the working directory '/no/such/dir' in the jail (-w, [sandbox] workdir): No such file or directory" ]]
	ok $? "$mode: missing workdir: exit 125, one line saying it is the jail's and which option ($err)"
	capture as_mode $mode "$SBX" run -q --rootfs "$IMG" -w /etc -- pwd
	[ "$out" = /etc ]
	ok $? "$mode: -w sets the working directory"

	# stdout and stderr pass through, binary-safe, stdin too.
	capture as_mode $mode "$SBX" run -q --rootfs "$IMG" -- sh -c 'echo out; echo err >&2'
	[ "$out" = out ] && [ "$err" = err ]
	ok $? "$mode: stdout and stderr pass through separately"
	sum_in=$(head -c 300000 /dev/urandom | tee "$BASE/blob" | md5sum | cut -d' ' -f1)
	sum_out=$(as_mode $mode "$SBX" run -q --rootfs "$IMG" -- cat <"$BASE/blob" | md5sum | cut -d' ' -f1)
	[ "$sum_in" = "$sum_out" ]
	ok $? "$mode: stdin to stdout is binary-safe (300 kB)"

	# stdout and stderr to the same file keep their order.
	as_mode $mode "$SBX" run -q --rootfs "$IMG" -- sh -c 'for i in 1 2 3 4 5; do echo o$i; echo e$i >&2; done' >"$BASE/both.out" 2>&1
	[ "$(tr '\n' ' ' <"$BASE/both.out")" = "o1 e1 o2 e2 o3 e3 o4 e4 o5 e5 " ]
	ok $? "$mode: '>f 2>&1' keeps the order of stdout and stderr"

	# A reader that goes away stops the command (SIGPIPE), as without sbx.
	as_mode $mode timeout 20 "$SBX" run -q --rootfs "$IMG" -- yes | head -2 >"$BASE/yes.out"
	rc=${PIPESTATUS[0]}
	out=$(cat "$BASE/yes.out")
	[ "$rc" -eq 141 ] && [ "$out" = "$(printf 'y\ny')" ]
	ok $? "$mode: 'sbx run -- yes | head -2' ends with SIGPIPE, exit 141 (got $rc)"

	# Signals to sbx reach the command.
	as_mode $mode "$SBX" run -q --rootfs "$IMG" -- sh -c "trap 'exit 42' TERM; sleep 20 & wait; : sig-$mode-$$" &
	pid=$!
	sleep 0.5
	kill -TERM "$(pgrep -o -f "sig-$mode-$$")"
	wait $pid
	rc=$?
	[ "$rc" -eq 42 ]
	ok $? "$mode: SIGTERM to sbx is forwarded to the command (exit $rc)"

	# SIGINT reaches the command even though a non-interactive shell starts
	# background jobs with SIGINT ignored.
	as_mode $mode "$SBX" run -q --rootfs "$IMG" -- sh -c "trap 'exit 41' INT; while :; do sleep 0.05; done; : int-$mode-$$" &
	pid=$!
	sleep 0.7
	kill -INT "$(pgrep -o -f "int-$mode-$$")"
	{ wait $pid; } 2>/dev/null
	rc=$?
	[ "$rc" -eq 41 ]
	ok $? "$mode: SIGINT to a background sbx is forwarded to the command (exit $rc)"

	# SIGKILL of sbx: the whole jail dies with it (parent-death signal, pid ns).
	naps=$((300000 + $$))
	as_mode $mode "$SBX" run -q --rootfs "$IMG" -- sh -c "sleep $naps & sleep $naps; : die-$mode-$$" &
	pid=$!
	sleep 0.5
	sup=$(pgrep -o -f "die-$mode-$$")
	kill -KILL "$sup"
	{ wait $pid; } 2>/dev/null
	for i in $(seq 50); do
		pgrep -f "die-$mode-$$|sleep $naps" >/dev/null || break
		sleep 0.1
	done
	! pgrep -f "die-$mode-$$|sleep $naps" >/dev/null
	ok $? "$mode: SIGKILL of sbx takes the whole jail with it"

	# The command's end is the jail's: a process it left running is killed
	# and gone when run returns, and what it used is in the record (init
	# kills and reaps the rest, then reports their usage with the status).
	spin=$((400000 + $$))
	capture as_mode $mode "$SBX" run -q --keep --name "bg-$mode" --rootfs "$IMG" -- \
		sh -c "(while :; do :; done; : spin-$spin) & sleep 1; exit 5"
	left=$(pgrep -f "^sh -c .*spin-$spin" | wc -l) # (not the purger: it has sbx's command line)
	cpu=$(as_mode $mode "$SBX" inspect --json "bg-$mode" | jq -r '.resources.cpu_ms | floor')
	[ "$rc" -eq 5 ] && [ "$left" -eq 0 ] && [ "${cpu:-0}" -ge 300 ]
	ok $? "$mode: a process the command left running is gone when run returns, its CPU time counted (rc $rc, $left left, cpu_ms $cpu)"
	as_mode $mode "$SBX" destroy "bg-$mode" >/dev/null 2>&1

	# init holds nothing of the supervisor's: stdio and its sync socket only.
	as_mode $mode "$SBX" run -q --name "fds-$mode" --rootfs "$IMG" -- sleep 4 &
	pid=$!
	ipid=
	for _ in $(seq 30); do # its record, saved while the jail starts (a busy host: later)
		sleep 0.1
		ipid=$(python3 -c 'import json,sys,glob; print([json.load(open(f)).get("init_pid") for f in glob.glob(sys.argv[1] + "/sandboxes/*/record.json") if json.load(open(f)).get("name") == sys.argv[2]][0])' "$BASE/state-$mode" "fds-$mode" 2>/dev/null)
		[ -n "$ipid" ] && break
	done
	sleep 0.5 # init past its set-up
	nfd=$(ls /proc/"$ipid"/fd 2>/dev/null | wc -l)
	# (beyond stdio, which is the caller's: under make check a log file)
	targets=$(for f in /proc/"$ipid"/fd/*; do
		[ "${f##*/}" -gt 2 ] 2>/dev/null && readlink "$f"
	done | grep -c 'sbx\|state\|cache\|record\|log')
	wait $pid
	if [ "$(id -u)" -ne 0 ]; then
		skip "$mode: the jail's init holds only stdio and its socket" "needs root to look at a non-dumpable process"
	else
		[ -n "$ipid" ] && [ "$nfd" -le 4 ] && [ "$nfd" -ge 1 ] && [ "$targets" -eq 0 ]
		ok $? "$mode: the jail's init holds only stdio and its socket ($nfd fds, pid $ipid)"
	fi

	# Run log, --log-json, record and output.log of a kept sandbox.
	capture as_mode $mode "$SBX" run --keep --log-json "$BASE/log-$mode.jsonl" --rootfs "$IMG" -- sh -c 'echo captured-output; exit 5'
	id=$(printf '%s\n' "$err" | sed -n 's/^sbx: sandbox \([0-9a-f]*\).*/\1/p' | head -1)
	dir=$BASE/state-$mode/sandboxes/$id
	[ "$rc" -eq 5 ] && [ -n "$id" ] && [ -d "$dir" ]
	ok $? "$mode: --keep keeps the sandbox ($id)"
	printf '%s\n' "$err" | grep -q '^sbx: user: ' && printf '%s\n' "$err" | grep -q '^sbx: network: none' &&
		printf '%s\n' "$err" | grep -q '^sbx: started in image .* namespaces .* mounts .* seccomp .* exec' &&
		printf '%s\n' "$err" | grep -q '^sbx: exit 5; wall' && printf '%s\n' "$err" | grep -q "^sbx: kept sandbox $id"
	ok $? "$mode: run log: header, timings, footer, kept"
	if [ $mode = root ]; then
		printf '%s\n' "$err" | grep -q "root inside, uid $HOST_BASE on the host (not root)" ||
			printf '%s\n' "$err" | grep -q 'uid 0 inside\|uid [0-9]* inside, uid 1[0-9]* on the host (not root)'
	else
		printf '%s\n' "$err" | grep -q "uid $UID_U inside, uid $UID_U on the host (not root)"
	fi
	ok $? "$mode: run log says who the command is inside and on the host"
	grep -q captured-output "$dir/output.log" 2>/dev/null
	ok $? "$mode: output.log captured the output"
	python3 - "$dir/record.json" "$BASE/log-$mode.jsonl" "$dir/log.jsonl" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
assert r["exit"]["status"] == 5 and r["exit"]["reason"] == "exited", r["exit"]
assert r["state"] == "exited" and r["kept"] is True
assert r["command"] == ["sh", "-c", "echo captured-output; exit 5"]
for k in ("image", "namespaces", "mounts", "seccomp", "exec"):
    assert isinstance(r["timings_ms"][k], float), k
assert r["policy"]["user"]["root_on_host"] is False
for f in sys.argv[2:]:
    ev = [json.loads(l) for l in open(f)]
    types = [e["event"] for e in ev]
    for t in ("start", "policy", "phase", "exit", "kept"):
        assert t in types, (f, t, types)
PY
	ok $? "$mode: record.json and both JSON logs hold the run"
	as_mode $mode "$SBX" run -q --rootfs "$IMG" -- sh -c 'head -c 9000000 /dev/zero; exit 1' >/dev/null 2>&1
	dir=$(ls -td "$BASE/state-$mode/sandboxes"/*/ | head -1)
	size=$(stat -c %s "$dir/output.log")
	[ "$size" -le $((8 * 1024 * 1024)) ] && grep -q '"output_truncated": true' "$dir/record.json"
	ok $? "$mode: output.log capped at 8 MiB and truncation recorded ($size)"

	# Hostile images: nothing is mounted on the host through a symlink.
	for img in proclink devlink; do
		capture as_mode $mode "$SBX" run -q --rootfs "$BASE/$img.tar.gz" -- true
		[ "$rc" -eq 125 ] && [ ! -e "$EVIL" ] && ! grep -q "$BASE" /proc/self/mountinfo
		ok $? "$mode: image with a symlinked ${img%link}: refused, nothing on the host ($err)"
	done
	mkdir -p "$BASE/bsrc" && chmod 0777 "$BASE/bsrc"
	capture as_mode $mode "$SBX" run -q --rootfs "$BASE/bindlink.tar.gz" --bind "$BASE/bsrc:/mnt/t" -- true
	[ ! -e "$EVIL-bind" ] && ! grep -q "$BASE" /proc/self/mountinfo
	ok $? "$mode: bind target symlinked out of the root stays inside (rc $rc)"
	! grep -q "$BASE\|$EVIL" /proc/self/mountinfo
	ok $? "$mode: host mount table: nothing of this test mounted"
done

if [ "$(id -u)" -eq 0 ]; then
# Limits (cgroups need root here; the unprivileged fallback is rlimits).
capture as_mode root "$SBX" run -q --log-json "$BASE/limits.jsonl" --pids 20 --rootfs "$IMG" -- sh -c 'i=0; while [ $i -lt 60 ]; do sleep 3 & i=$((i+1)); done 2>/dev/null; echo started; wait'
[ "$rc" -ne 0 ] || [[ "$err" == *fork* ]] || [[ "$out" != started ]]
ok $? "root: fork bomb stopped by --pids 20 (rc $rc)"
capture as_mode root "$SBX" run --log-json "$BASE/limits.jsonl" --memory 32m --rootfs "$IMG" -- sh -c 'x=$(head -c 200000000 /dev/zero | tr "\0" a); echo survived'
[ "$rc" -eq 137 ] && [[ "$err" == *OOM* ]]
ok $? "root: memory hog OOM-killed: exit 137, logged as OOM (rc $rc)"
printf '[limits]\nfsize = 1m\n' >"$BASE/fsize.ini"
capture as_mode root "$SBX" run -q -p "$BASE/fsize.ini" --rootfs "$IMG" -- sh -c 'dd if=/dev/zero of=/tmp/big bs=1024 count=4096 2>/dev/null'
[ "$rc" -ne 0 ] && [ "$rc" -ne 125 ]
ok $? "root: a file bigger than fsize fails (rc $rc)"
capture as_mode user "$SBX" run -q -p "$BASE/fsize.ini" --rootfs "$IMG" -- sh -c 'dd if=/dev/zero of=/tmp/big bs=1024 count=4096 2>/dev/null'
[ "$rc" -ne 0 ] && [ "$rc" -ne 125 ]
ok $? "user: a file bigger than fsize fails (rc $rc)"
printf '[limits]\ndisk = 2m\n' >"$BASE/disk.ini"
capture as_mode root "$SBX" run -q --rm -p "$BASE/disk.ini" --rootfs "$IMG" -- sh -c 'dd if=/dev/zero of=/big bs=1024 count=4096 2>&1; rm /big; echo small > /small && cat /small'
[[ "$out" == *"No space left"* ]] && [[ "$out" == *small ]] && ! grep -q "$BASE.*sbx-disk" /proc/self/mountinfo
ok $? "root: [limits] disk caps the writable layer (ENOSPC), its tmpfs is gone after the run"
# As root the layers are an ext4 image on a loop device, mounted in the
# run's own mount namespace: the host never sees the mount.
capture as_mode root "$SBX" run -q --keep --name disk-kept -p "$BASE/disk.ini" --rootfs "$IMG" -- sh -c 'echo x > /etc/newfile'
kid=$(as_mode root "$SBX" inspect --json disk-kept | jq -r .id)
[ -f "$BASE/state-root/sandboxes/$kid/disk.img" ] && ! grep -q "$BASE" /proc/self/mountinfo &&
	as_mode root "$SBX" inspect --changes disk-kept | grep -q '^A /etc/newfile$' &&
	as_mode root "$SBX" export disk-kept -o - 2>/dev/null | tar -tf - | grep -qx 'etc/newfile' &&
	! grep -q "$BASE" /proc/self/mountinfo && as_mode root "$SBX" destroy disk-kept >/dev/null &&
	[ ! -e "$BASE/state-root/sandboxes/$kid" ] && ! losetup -a | grep -q "$BASE"
ok $? "root: a kept size-capped layer is an unmounted image: inspect and export mount it for themselves, destroy removes it, no loop device left"
as_mode root "$SBX" run -q --name disk-live --rootfs "$IMG" -- sh -c 'echo a > /a; sleep 30' >/dev/null 2>&1 &
live=$!
for _ in $(seq 100); do
	as_mode root "$SBX" ps | grep -q disk-live && break
	sleep 0.1
done
sleep 0.3
chg=$(as_mode root "$SBX" inspect --changes disk-live 2>&1)
hostmnt=$(grep -c "$BASE" /proc/self/mountinfo)
sup=$(as_mode root "$SBX" inspect --json disk-live | jq -r .supervisor_pid)
kill -KILL "$sup"
wait "$live" 2>/dev/null
for _ in $(seq 50); do losetup -a | grep -q "$BASE" || break; sleep 0.1; done
[ "$hostmnt" -eq 0 ] && grep -qx 'A /a' <<<"$chg" && ! losetup -a | grep -q "$BASE" &&
	as_mode root "$SBX" destroy --stale >/dev/null 2>&1 && ! grep -q "$BASE" /proc/self/mountinfo
ok $? "root: a running sandbox's image is mounted in its own namespace only: inspect --changes reads it live; SIGKILL of sbx leaves no mount or loop device ($hostmnt host mounts; $chg)"
# Unprivileged, the layers go on a tmpfs in the jail's own mount namespace.
before=$(ls "$BASE/state-user/sandboxes" 2>/dev/null)
capture as_mode user "$SBX" run -p "$BASE/disk.ini" --rootfs "$IMG" -- sh -c 'dd if=/dev/zero of=/big bs=1024 count=4096 2>&1; rm /big; echo small > /small && cat /small'
[ "$rc" -eq 0 ] && [[ "$out" == *"No space left"* ]] && [[ "$out" == *small ]] &&
	[[ "$err" == *"disk 2M (the writable layer is a tmpfs, in memory)"* ]] && [[ "$err" != *warning* ]] &&
	[ "$(ls "$BASE/state-user/sandboxes" 2>/dev/null)" = "$before" ]
ok $? "user: [limits] disk caps the writable layer (ENOSPC), the run log says how, nothing is left"
capture as_mode user "$SBX" run -q --name disk-kept -p "$BASE/disk.ini" --rootfs "$IMG" -- sh -c 'echo x > /etc/newfile; rm /bin/ls; mkdir /d; echo y > /d/f; exit 3'
[ "$rc" -eq 3 ] && chg=$(as_mode user "$SBX" inspect --changes disk-kept) &&
	grep -q '^A /etc/newfile$' <<<"$chg" && grep -q '^D /bin/ls$' <<<"$chg" && grep -q '^A /d/f$' <<<"$chg" &&
	[ "$(as_mode user "$SBX" exec disk-kept cat /etc/newfile /d/f)" = "$(printf 'x\ny')" ]
ok $? "user: a failed run's in-memory layer is kept on disk: inspect --changes and exec see it (rc $rc)"
# as if an earlier copy-back had crashed half-way: its leftover goes first
kid=$(as_mode user "$SBX" inspect --json disk-kept | jq -r .id)
as_mode user mkdir -p "$BASE/state-user/sandboxes/$kid/disk/upper.new/junk"
capture as_mode user "$SBX" exec disk-kept sh -c 'dd if=/dev/zero of=/big bs=1024 count=4096 2>&1; rm -f /big; echo two > /two'
[[ "$out" == *"No space left"* ]] && [ "$(as_mode user "$SBX" exec disk-kept cat /two /d/f)" = "$(printf 'two\ny')" ] &&
	as_mode user "$SBX" inspect --changes disk-kept | grep -q '^A /two$' &&
	[ -z "$(find "$BASE/state-user/sandboxes" -name '*.new')" ] &&
	as_mode user "$SBX" destroy disk-kept >/dev/null
ok $? "user: exec into it is capped the same way, and its writes are kept for the next (no upper.new left)"
# disk_live NAME: an unprivileged in-memory-layer run of NAME in the
# background (its pid in $live), once ps shows it running.
disk_live() {
	as_mode user "$SBX" run -q --name "$1" -p "$BASE/disk.ini" --rootfs "$IMG" -- sh -c 'echo a > /a; sleep 30' >/dev/null 2>&1 &
	live=$!
	for _ in $(seq 100); do
		as_mode user "$SBX" ps | grep -q " $1 .*running" && break
		sleep 0.1
	done
}
disk_live disk-live
capture as_mode user "$SBX" inspect --changes disk-live
text=$(as_mode user "$SBX" inspect disk-live)
rm -f "$BASE/live.html"
as_mode user "$SBX" inspect --html "$BASE/live.html" disk-live
as_mode user "$SBX" destroy disk-live >/dev/null 2>&1
wait "$live"
[ "$rc" -ne 0 ] && [[ "$err" == *"in memory while it runs"* ]] && [ -z "$out" ] &&
	grep -q 'layer kept in .*memory while it runs' <<<"$text" && grep -q 'in memory while it runs' "$BASE/live.html"
ok $? "user: inspect of a running sandbox with an in-memory layer says where it is, --changes and --html why they cannot list it ($err)"
disk_live disk-lost
pkill -KILL -f -- '--name disk-lost'
wait "$live"
capture as_mode user "$SBX" inspect --changes disk-lost
[ "$rc" -ne 0 ] && [[ "$err" == *"was lost: its changes are gone"* ]] &&
	as_mode user "$SBX" destroy --stale | grep -q disk-lost
ok $? "user: a killed run's in-memory layer is gone, and inspect --changes says so ($err)"
ids=$(sed -n 's/.*"event":"start","id":"\([0-9a-f]*\)".*/\1/p' "$BASE/limits.jsonl")
left=0
for id in $ids; do
	find /sys/fs/cgroup -maxdepth 4 -name "sbx-$id" | grep -q . && left=1
done
[ -n "$ids" ] && [ $left -eq 0 ]
ok $? "root: no cgroup left by the limited runs ($(echo $ids))"

as_mode root "$SBX" destroy --all >/dev/null 2>&1
as_mode user "$SBX" destroy --all >/dev/null 2>&1
fi
done_testing
