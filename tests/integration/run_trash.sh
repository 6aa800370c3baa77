#!/bin/bash
# tests/integration/run_trash.sh - removal off the caller's path: a sandbox
# that is not kept leaves STATE/sandboxes/ in one rename when `sbx run`
# returns (ps and names never see it again) and a detached, low-priority
# purger removes it; `$(sbx run ...)` never waits for that purger; an
# interrupted removal is finished by the next run and by `destroy --all`;
# `destroy --stale` and `--all` wait for the purgers at work;
# runs that cannot be kept (--rm, persist = never) have their writable
# layers in memory and say so; --keep keeps them on disk; a thrown-away
# image's filesystem is detached when run returns and released by the
# purger.  Root and nobody.
. "$(dirname "$0")/../lib/tap.sh"
. "$(dirname "$0")/../lib/sbx.sh"

sbx_setup_busybox

# trash_empty MODE: STATE/trash has nothing but its lock, within 20 s.
trash_empty() {
	local t=$BASE/state-$1/trash
	for _ in $(seq 200); do
		[ -z "$(ls -A "$t" 2>/dev/null | grep -v '^\.lock$')" ] && return 0
		sleep 0.1
	done
	return 1
}

# purgers_in STATE: how many purgers hold a descriptor in STATE.
purgers_in() {
	local p n=0
	for p in $(pgrep -x sbx-purge); do
		ls -l /proc/"$p"/fd 2>/dev/null | grep -qF " $1/" && n=$((n + 1))
	done
	echo $n
}

for mode in $MODES; do
	S=$BASE/state-$mode
	t0=$(date +%s%N)
	out=$(sbx_as_mode_in "$WD" $mode "$SBX" run -q --name tr-$mode --rootfs "$IMG" -- sh -c 'echo hi; dd if=/dev/zero of=/big bs=1M count=64 2>/dev/null')
	rc=$?
	ms=$((($(date +%s%N) - t0) / 1000000))
	left=$(sbx_sandbox_entries "$S/sandboxes" | tr '\n' ' ')
	[ $rc -eq 0 ] && [ "$out" = hi ] && [ -z "$left" ] && [ ! -e "$S/names/tr-$mode" ]
	ok $? "$mode: when run returns the sandbox is out of sandboxes/ and its name free ($ms ms, inside \$(...): the purger holds none of its pipes; rc $rc, out '$out', left '$left', name $([ -e "$S/names/tr-$mode" ] && echo taken || echo free))"
	capture sbx_as_mode $mode "$SBX" ps -a
	! printf '%s\n' "$out" | grep -q "tr-$mode"
	ok $? "$mode: ps -a does not list it"
	capture sbx_as_mode_in "$WD" $mode "$SBX" run -q --name tr-$mode --rootfs "$IMG" -- true
	[ $rc -eq 0 ]
	ok $? "$mode: its name can be used again at once"
	trash_empty $mode
	ok $? "$mode: the purger empties STATE/trash"

	# an interrupted removal: finished by the next run
	mkdir -p "$S/trash/0123456789ab.dead0001/upper/a/b" && touch "$S/trash/0123456789ab.dead0001/upper/a/b/f"
	chown -R "$(stat -c %u "$S")" "$S/trash/0123456789ab.dead0001"
	sbx_as_mode_in "$WD" $mode "$SBX" run -q --rm --rootfs "$IMG" -- true
	trash_empty $mode
	ok $? "$mode: the next run finishes an interrupted removal"
	# ... and destroy --all does it before it returns, saying so
	mkdir -p "$S/trash/0123456789ab.dead0002/x" && chown -R "$(stat -c %u "$S")" "$S/trash/0123456789ab.dead0002"
	capture sbx_as_mode $mode "$SBX" destroy --all
	[ $rc -eq 0 ] && printf '%s\n' "$out" | grep -q 'removed trash/0123456789ab.dead0002 (an interrupted removal)' &&
		[ ! -e "$S/trash/0123456789ab.dead0002" ]
	ok $? "$mode: destroy --all removes what an interrupted removal left ($out)"

	# the purger is detached and low-priority
	# (made aside and moved in whole: a purger still at work from an
	# earlier run would otherwise remove it as it is made)
	# 200,000 names, hard links to 4 files: as slow to remove as as many
	# files, but made without 200,000 new inodes (ext4 makes those slowly
	# right after a run freed many: 6 to 18 s here, against 4 s).
	mkdir -p "$S/slow0003"
	python3 - "$S/slow0003" <<'EOF'
import os, sys
d = sys.argv[1]
for f in range(4):
    src = os.path.join(d, "f%d" % f)
    open(src, "w").close()
    for i in range(50000):
        os.link(src, os.path.join(d, "%d.%d" % (f, i)))
EOF
	chown "$(stat -c %u "$S")" "$S/slow0003" "$S/slow0003"/f[0-3]
	mv "$S/slow0003" "$S/trash/0123456789ab.slow0003"
	sbx_as_mode_in "$WD" $mode "$SBX" run -q --rm --rootfs "$IMG" -- true
	# (the run's own purger may come and go first: any one seen counts)
	seen=""
	for _ in $(seq 100); do
		for pid in $(pgrep -x sbx-purge); do
			[ "$(ps -o ni= -p "$pid" | tr -d ' ')" = 19 ] &&
				[ "$(ps -o sid= -p "$pid" | tr -d ' ')" = "$pid" ] &&
				[ "$(readlink /proc/"$pid"/fd/1)" = /dev/null ] && seen=$pid && break
		done
		[ -n "$seen" ] && break
		sleep 0.02
	done
	[ -n "$seen" ]
	ok $? "$mode: the purger runs at nice 19 in a session of its own, stdout /dev/null (pid ${seen:-none seen})"
	trash_empty $mode
	ok $? "$mode: and it removes them all"

	# A run that starts while a purger is at work (it holds STATE/trash/.lock
	# and looks at the trash again when it lets go) forks none of its own
	# before the jail's clone; with nobody at work it does.  The clones sbx
	# itself makes, in order: a fork before the jail's (CLONE_NEWNS) is the
	# start-of-run purger.
	if command -v strace >/dev/null; then
		early_forks() { # early_forks FILE: forks before the jail's clone
			awk '/CLONE_NEWNS/ { exit } /^(clone|clone3|fork|vfork)\(/ { n++ } END { print n + 0 }' "$1"
		}
		mkdir -p "$S/trash/0123456789ab.held0004" && chown "$(stat -c %u "$S")" "$S/trash/0123456789ab.held0004"
		touch "$S/trash/.lock" "$TAP_TMP/held.$mode" "$TAP_TMP/free.$mode"
		chmod 0666 "$TAP_TMP/held.$mode" "$TAP_TMP/free.$mode"
		(exec 9<>"$S/trash/.lock" && flock 9 && exec sleep 60) &
		holder=$!
		for _ in $(seq 50); do flock -n "$S/trash/.lock" true || break; sleep 0.1; done
		sbx_as_mode_in "$WD" $mode strace -qq -e trace=clone,clone3,fork,vfork -o "$TAP_TMP/held.$mode" \
			"$SBX" run -q --rm --rootfs "$IMG" -- true
		held=$(early_forks "$TAP_TMP/held.$mode")
		kill $holder 2>/dev/null
		wait $holder 2>/dev/null
		sbx_as_mode_in "$WD" $mode strace -qq -e trace=clone,clone3,fork,vfork -o "$TAP_TMP/free.$mode" \
			"$SBX" run -q --rm --rootfs "$IMG" -- true
		free=$(early_forks "$TAP_TMP/free.$mode")
		[ "$held" -eq 0 ] && [ "$free" -ge 1 ]
		ok $? "$mode: with the trash lock held no purger is forked at the start ($held forks), with it free one is ($free)"
		trash_empty $mode
		ok $? "$mode: the entry left while the lock was held is removed by the next purger"
	else
		skip "$mode: no purger forked at the start while one is at work" "strace is not installed (tests/deps.sh)"
	fi

	# The run's own purger is a clone sharing its memory (CLONE_VM), not a
	# fork: it takes the memory over once sbx has exited, and removes the
	# sandbox then.  sbx killed before it marks a normal end: the clone
	# exits without touching that memory (it may have been killed inside
	# malloc), leaves the entry, and the next run's purger removes it.
	if command -v strace >/dev/null; then
		touch "$TAP_TMP/last.$mode" && chmod 0666 "$TAP_TMP/last.$mode"
		sbx_as_mode_in "$WD" $mode strace -qq -e trace=clone,clone3,fork,vfork -o "$TAP_TMP/last.$mode" \
			"$SBX" run -q --rm --rootfs "$IMG" -- true
		last=$(grep -E '^(clone|clone3|fork|vfork)\(' "$TAP_TMP/last.$mode" | tail -n 1)
		trash_empty $mode
		r=$?
		case "$last" in *CLONE_VM*) ;; *) r=1 ;; esac
		case "$last" in *CLONE_VFORK* | *CLONE_THREAD*) r=1 ;; esac
		ok $r "$mode: the run's last clone is its purger, sharing its memory, and the trash is emptied (${last%%, parent_tid*})"
	else
		skip "$mode: the run's purger shares its memory" "strace is not installed (tests/deps.sh)"
	fi
	for _ in $(seq 200); do pgrep -x -r R,S,D sbx-purge >/dev/null || break; sleep 0.1; done
	sbx_as_mode_in "$WD" $mode env SBX_FAULT=before-handoff-exit "$SBX" run -q --name ho-$mode --rm --rootfs "$IMG" -- true
	rc=$?
	# Its purger ends at once, but on a loaded machine not always within
	# a fixed half second: wait for it (up to 10 s), then look at the entry.
	for _ in $(seq 100); do
		purgers=$(pgrep -x -r R,S,D sbx-purge | wc -l) # not counting one its reaper has yet to reap
		[ "$purgers" -eq 0 ] && break
		sleep 0.1
	done
	ents=$(ls "$S/trash" | wc -l)
	[ $rc -eq 137 ] && [ "$ents" -eq 1 ] && [ "$purgers" -eq 0 ]
	ok $? "$mode: sbx killed before its normal end: the purger leaves its memory and the entry alone (rc $rc, $ents in trash, $purgers purgers)"
	sbx_as_mode_in "$WD" $mode "$SBX" run -q --rm --rootfs "$IMG" -- true
	trash_empty $mode
	ok $? "$mode: the next run's purger removes that entry"

	# The purger's sweep for lost sandboxes reads a kept sandbox's record
	# only as far as its state (1 KiB), not all of it, at every run's end.
	if command -v strace >/dev/null; then
		sbx_as_mode_in "$WD" $mode "$SBX" run -q --keep --name sw-$mode --rootfs "$IMG" -- true
		id=$(sbx_as_mode $mode "$SBX" inspect --json sw-$mode | jq -r .id)
		touch "$TAP_TMP/sweep.$mode" && chmod 0666 "$TAP_TMP/sweep.$mode"
		sbx_as_mode_in "$WD" $mode strace -f -qq -y -e trace=read -o "$TAP_TMP/sweep.$mode" \
			"$SBX" run -q --rm --rootfs "$IMG" -- true
		trash_empty $mode
		reads=$(grep -c "$id/record.json>" "$TAP_TMP/sweep.$mode")
		big=$(grep "$id/record.json>" "$TAP_TMP/sweep.$mode" | awk -F', ' '$NF+0 > 1024' | wc -l)
		[ "$reads" -eq 1 ] && [ "$big" -eq 0 ] && [ "$(stat -c %s "$S/sandboxes/$id/record.json")" -gt 1024 ]
		ok $? "$mode: the purger reads a kept record's first KiB only ($reads reads, $big of more)"
		sbx_as_mode $mode "$SBX" destroy sw-$mode >/dev/null
	else
		skip "$mode: the purger reads a kept record's first KiB only" "strace is not installed (tests/deps.sh)"
	fi

	# layers in memory when nothing can be kept; on disk with --keep
	capture sbx_as_mode_in "$WD" $mode "$SBX" run --rm --rootfs "$IMG" -- true
	printf '%s\n' "$err" | grep -q 'the writable layer is a tmpfs, in memory; --rm: nothing of the run is kept'
	ok $? "$mode: --rm: the run log says the layers are in memory, and why"
	printf '[sandbox]\npersist = never\n' >"$BASE/never.ini"
	capture sbx_as_mode_in "$WD" $mode "$SBX" run -p "$BASE/never.ini" --rootfs "$IMG" -- true
	printf '%s\n' "$err" | grep -q 'persist = never: nothing of the run is kept'
	ok $? "$mode: persist = never: the same"
	capture sbx_as_mode_in "$WD" $mode "$SBX" run --keep --name kp-$mode --rootfs "$IMG" -- sh -c 'echo kept >/k'
	! printf '%s\n' "$err" | grep -q 'nothing of the run is kept' &&
		[ "$(sbx_as_mode $mode "$SBX" exec kp-$mode cat /k)" = kept ]
	ok $? "$mode: --keep: the layers are not the in-memory kind, and its file is kept"
	sbx_as_mode $mode "$SBX" destroy kp-$mode >/dev/null
	trash_empty $mode

	# A script that removes its state directory when its runs are done
	# (a CI job's temporary one) first calls `sbx destroy --stale`: it
	# returns once the purgers still at work there have ended, so nothing
	# makes a file in the directory while it is being removed (rm -rf
	# failed with "Directory not empty" about once in 60 otherwise).  This
	# run's purger is held 1.5 s at its start.
	sbx_as_mode_in "$WD" $mode env SBX_FAULT=purger-start "$SBX" run -q --rm --rootfs "$IMG" -- true purger-title-$mode
	early=$(purgers_in "$S")
	# The purger, at work after run returned, is not the user's command
	# line in ps(1) or pgrep -f: it names itself (before: its command line
	# was sbx run's, the command's arguments included).
	titles=$(for p in $(pgrep -x sbx-purge); do
		[ "$(cut -d' ' -f3 /proc/"$p"/stat)" != Z ] && tr '\0' ' ' </proc/"$p"/cmdline && echo
	done)	# (an ended one, not yet reaped, has none)
	! pgrep -f "purger-title-$mode" >/dev/null && grep -q '^sbx-purge *$' <<<"$titles"
	ok $? "$mode: a purger at work names itself sbx-purge, not the run's command line ($(tr '\n' '|' <<<"$titles"))"
	capture sbx_as_mode $mode "$SBX" destroy --stale
	late=$(purgers_in "$S")
	[ $rc -eq 0 ] && [ "$early" -ge 1 ] && [ "$late" -eq 0 ]
	ok $? "$mode: destroy --stale returns once the purgers at work in the state directory have ended ($early when run returned, $late after; rc $rc)"
done
# As root the layers are an ext4 image on a loop device.  Thrown away, its
# filesystem is detached before run returns (no mount of it anywhere) but
# torn down by the purger: writing back what the jail left dirty (here
# 512 MiB) and releasing the loop device are not on the caller's path.
if sbx_as_mode root sh -c '[ -w /dev/loop-control ] && command -v mke2fs' >/dev/null; then
	S=$BASE/state-root
	sbx_as_mode_in "$WD" root "$SBX" run -q --rootfs "$IMG" -- \
		sh -c 'dd if=/dev/zero of=/big bs=1M count=512 2>/dev/null'
	rc=$?
	loops=$(losetup -a | grep -cF "$S/")
	mnts=$(cat /proc/[0-9]*/mountinfo 2>/dev/null | grep -cF "$S/")
	for _ in $(seq 200); do
		losetup -a | grep -qF "$S/" || break
		sleep 0.1
	done
	left=$(losetup -a | grep -cF "$S/")
	[ $rc -eq 0 ] && [ "$loops" -ge 1 ] && [ "$mnts" -eq 0 ] && [ "$left" -eq 0 ]
	ok $? "root: a thrown-away image is unmounted when run returns ($mnts mounts of it in any namespace) and released by the purger ($loops loop device(s) at the return, $left after)"
	trash_empty root
else
	skip "root: a thrown-away image is released by the purger" "no loop devices or mke2fs here: the layers are a tmpfs"
fi
# A supervisor SIGKILLed mid-run (a batch engine's KillWait shorter than
# the stop timeout): its jail dies with it, the record says lost, and the
# empty cgroup directories it made are removed by the next run's purger
# (the record stays for destroy --stale).
for mode in $MODES; do
	S=$BASE/state-$mode
	sbx_as_mode_in "$WD" $mode "$SBX" run -q --name lost-$mode --memory 256m --pids 64 --rootfs "$IMG" -- sleep 600 &
	bg=$!
	for _ in $(seq 100); do
		sbx_as_mode $mode "$SBX" ps --json | jq -e --arg n lost-$mode 'any(.[]; .name == $n and .state == "running")' >/dev/null 2>&1 && break
		sleep 0.1
	done
	rec=$(sbx_as_mode $mode "$SBX" inspect --json lost-$mode)
	sup=$(printf '%s' "$rec" | jq -r '.supervisor_pid')
	cgs=$(printf '%s' "$rec" | jq -r '.cgroup.paths // [] | .[]')
	kill -9 "$sup"
	wait $bg 2>/dev/null
	for _ in $(seq 100); do
		[ "$(sbx_as_mode $mode "$SBX" ps --json | jq -r --arg n lost-$mode '.[] | select(.name == $n) | .state')" = lost ] && break
		sleep 0.1
	done
	st=$(sbx_as_mode $mode "$SBX" ps --json | jq -r --arg n lost-$mode '.[] | select(.name == $n) | .state')
	ok $([ "$st" = lost ] && ! pgrep -f '^sleep 600$' >/dev/null; echo $?) "$mode: a SIGKILLed supervisor's jail dies with it; ps says lost ($st)"
	if [ -z "$cgs" ]; then
		skip "$mode: the next run removes the lost run's empty cgroups" "this run had no cgroup (limits fell back to rlimits)"
	else
		left=$(for d in $cgs; do [ -d "$d" ] && echo "$d"; done)
		ok $([ -n "$left" ]; echo $?) "$mode: the lost run's cgroup directories are there after the SIGKILL"
		sbx_as_mode_in "$WD" $mode "$SBX" run -q --rm --rootfs "$IMG" -- true
		for _ in $(seq 100); do
			left=$(for d in $cgs; do [ -d "$d" ] && echo "$d"; done)
			[ -z "$left" ] && break
			sleep 0.1
		done
		ok $([ -z "$left" ]; echo $?) "$mode: the next run's purger removes the lost run's empty cgroups ($left)"
	fi
	st=$(sbx_as_mode $mode "$SBX" ps --json | jq -r --arg n lost-$mode '.[] | select(.name == $n) | .state')
	ok $([ "$st" = lost ]; echo $?) "$mode: its record stays for a postmortem ($st)"
	sbx_as_mode $mode "$SBX" destroy --stale >/dev/null
	trash_empty $mode
done
done_testing
