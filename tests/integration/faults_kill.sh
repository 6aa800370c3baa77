#!/bin/bash
# sbx-test-lane: long
# tests/integration/faults_kill.sh - `kill -9` of sbx at every injected point
# of start-up (lib/util/fault.h: SBX_FAULT=<point>), a few times each, as root and
# as nobody.  After each kill: sbx exited by SIGKILL (137), `sbx ps -a` shows
# the sandbox lost, `sbx destroy --stale` cleans it up, and then nothing of
# that run remains: no process (sbx, sbx-init, the command: found by a marker
# in their environment), no mount under the test's state/cache dirs, no
# sbx-<id> cgroup, no sandbox directory, no loop device on its layers' image,
# no half image (the next run of the
# same tarball publishes a complete image and removes the dead unpack's
# .tmp- directory once it is stale), and the next run succeeds.
. "$(dirname "$0")/../lib/tap.sh"
. "$(dirname "$0")/../lib/sbx.sh"

if [ "$(id -u)" -ne 0 ]; then
	echo "1..0 # SKIP needs root (runs the unprivileged half through setpriv)"
	exit 77
fi

ITER=${FAULT_ITER:-3}
POINTS="after-clone during-mounts before-exec after-record during-run during-unpack"
sbx_base
TARBALL=$BASE/busybox.tar.gz
sbx_rootfs "$TARBALL"
NENTRIES=$(tar tzf "$TARBALL" | sed 's,/$,,; s,^\./,,' | grep -vc '^\.\?$')

# A profile with a cgroup (pids) and, as root, a tmpfs writable layer
# mounted on the sandbox's state directory: both must be cleaned up.
cat >"$BASE/fault.ini" <<EOF
[sandbox]
rootfs = $TARBALL
[limits]
pids = 64
disk = 4m
EOF
chmod 0644 "$BASE/fault.ini"

as_mode() { sbx_as_mode "$@"; }

# marked MARK: pid, name and uid of every process carrying MARK in its
# environment or command line (sbx and init keep sbx's environment; the
# command gets it through -e).
# (one grep over all of them; the mark comes from a file, so that grep's
# own command line does not carry it)
marked() {
	local p
	printf '%s\n' "$1" >"$TAP_TMP/mark.pat"
	for p in $(grep -lsF -f "$TAP_TMP/mark.pat" /proc/[0-9]*/environ /proc/[0-9]*/cmdline 2>/dev/null |
		sed -n 's,^/proc/\([0-9]*\)/[a-z]*$,\1,p' | sort -u); do
		echo "$p $(cat "/proc/$p/comm" 2>/dev/null) uid=$(awk '/^Uid:/ {print $2}' "/proc/$p/status" 2>/dev/null)"
	done
}

# leftovers MODE MARK IDS: what a killed run and destroy --stale left.
leftovers() {
	local mode=$1 mark=$2 ids=$3 id S=$BASE/state-$1 C=$BASE/cache-$1
	marked "$mark" | sed 's/^/process /'
	awk -v s="$S" -v c="$C" 'index($5, s) == 1 || index($5, c) == 1 {print "mount " $5}' /proc/self/mountinfo
	for id in $ids; do
		find /sys/fs/cgroup -maxdepth 4 -type d -name "sbx-$id*" 2>/dev/null | sed 's/^/cgroup /'
	done
	[ -d "$S/sandboxes" ] && find "$S/sandboxes" -mindepth 1 -maxdepth 1 ! -name '.ready-[0-9]' | sed 's/^/sandbox dir /'
	for f in /sys/block/loop*/loop/backing_file; do
		[ -r "$f" ] && case "$(cat "$f" 2>/dev/null)" in "$S"/*) echo "loop device $f: $(cat "$f")" ;; esac
	done
	true
}

# image_complete MODE: the published image of TARBALL has every entry.
image_complete() {
	local C=$BASE/cache-$1 d n
	d=$(find "$C/images" -mindepth 1 -maxdepth 1 -type d ! -name by-stat ! -name '.tmp-*' | head -n 1)
	[ -n "$d" ] || { echo "no published image"; return 1; }
	n=$(cd "$d" && find . -mindepth 1 | wc -l)
	[ "$n" -eq "$NENTRIES" ] || { echo "image $d has $n entries, the tarball $NENTRIES"; return 1; }
}

# one_kill MODE POINT I: one killed run; prints problems, returns non-zero.
one_kill() {
	local mode=$1 point=$2 i=$3 mark ids rc st out fault=$2 C=$BASE/cache-$1 tmps
	mark=sbxfault-$mode-$point-$i-$$
	[ "$point" = during-unpack ] && fault=during-unpack@100
	if [ "$point" = during-unpack ]; then
		rm -rf "$C"	# a fresh cache: the unpack happens in this run
	fi
	as_mode "$mode" env SBX_FAULT="$fault" SBX_FAULT_MARK="$mark" \
		"$SBX" run -q -p "$BASE/fault.ini" -e SBX_FAULT_MARK -- sh -c "sleep 5; echo $mark" \
		>"$TAP_TMP/run.out" 2>"$TAP_TMP/run.err"
	rc=$?
	[ "$rc" -eq 137 ] || { echo "sbx exited $rc, not 137 (SIGKILL): $(head -c 300 "$TAP_TMP/run.err")"; return 1; }
	ids=$(ls "$BASE/state-$mode/sandboxes" 2>/dev/null)
	if [ "$point" = during-unpack ]; then
		[ -z "$ids" ] || true	# the sandbox dir exists before the image
		tmps=$(find "$C/images" -mindepth 1 -maxdepth 1 -name '.tmp-*' -type d | wc -l)
		[ "$tmps" -ge 1 ] || { echo "no .tmp- unpack directory after a kill during the unpack"; return 1; }
		if find "$C/images" -mindepth 1 -maxdepth 1 -type d ! -name by-stat ! -name '.tmp-*' | grep -q .; then
			echo "an image was published although the unpack was killed"
			return 1
		fi
		if [ -n "$(ls -A "$C/images/by-stat" 2>/dev/null)" ]; then
			echo "a by-stat index entry was written although the unpack was killed"
			return 1
		fi
	fi
	# Killed before its first record, a run is "created" while its lock is
	# held: the jail's init holds it too until the kernel's parent-death
	# signal has ended it, a moment after sbx died (longer on a loaded
	# machine): give that up to 5 s, then it must be lost.
	for id in $ids; do
		for _ in $(seq 50); do
			st=$(as_mode "$mode" "$SBX" ps -a --json |
				python3 -c 'import json,sys; d=json.load(sys.stdin); d=d.get("sandboxes", d) if isinstance(d, dict) else d; print(" ".join(s.get("state","?") for s in d if s.get("id")==sys.argv[1]))' "$id" 2>&1)
			[ "$st" = created ] || break
			sleep 0.1
		done
		[ "$st" = lost ] || { echo "sandbox $id: ps -a says '$st', not lost"; return 1; }
	done
	out=$(as_mode "$mode" "$SBX" destroy --stale 2>&1) || { echo "destroy --stale failed: $out"; return 1; }
	sleep 0.2
	out=$(leftovers "$mode" "$mark" "$ids")
	[ -z "$out" ] || { echo "left behind after destroy --stale:"; echo "$out"; return 1; }
	if [ "$point" = during-unpack ]; then
		# The dead unpack's directory is removed by a later unpack once
		# it is stale (lib/image/image.c STALE_TMP_SEC, 10 min): age it.
		find "$C/images" -mindepth 1 -maxdepth 1 -name '.tmp-*' -exec touch -h -d '-11 minutes' {} +
	fi
	out=$(as_mode "$mode" "$SBX" run -q --rm -p "$BASE/fault.ini" -- sh -c 'cat /etc/passwd >/dev/null && echo fine' 2>&1)
	[ "$out" = fine ] || { echo "the next run failed: $out"; return 1; }
	if [ "$point" = during-unpack ]; then
		tmps=$(find "$C/images" -mindepth 1 -maxdepth 1 -name '.tmp-*' | wc -l)
		[ "$tmps" -eq 0 ] || { echo "$tmps .tmp- directories remain after the next unpack"; return 1; }
		locks=$(find "$C/images" -name '.unpack-*' | wc -l)
		[ "$locks" -eq 0 ] || { echo "$locks .unpack- lock files remain after the next unpack"; return 1; }
		image_complete "$mode" || return 1
	fi
	out=$(leftovers "$mode" "$mark" "$ids")
	[ -z "$out" ] || { echo "left behind after the next run:"; echo "$out"; return 1; }
	return 0
}

for mode in root user; do
	who=root
	[ "$mode" = user ] && who=nobody
	mkdir -p "$BASE/state-$mode" "$BASE/cache-$mode"
	[ "$mode" = user ] && chown 65534:65534 "$BASE/state-$mode" "$BASE/cache-$mode"
	# Warm the cache (the other points must not depend on an unpack).
	out=$(as_mode "$mode" "$SBX" run -q --rm -p "$BASE/fault.ini" -- true 2>&1)
	ok $? "as $who: a plain run works ($out)"
	points=$POINTS
	# as root the layers' image is mounted after the clone (lib/jail/disk.c)
	[ "$mode" = root ] && sbx_as_mode root sh -c '[ -w /dev/loop-control ] && command -v mke2fs' >/dev/null &&
		points="$points during-disk"
	for point in $points; do
		n=$ITER
		[ "$point" = during-unpack ] && n=2
		bad=
		for i in $(seq "$n"); do
			msg=$(one_kill "$mode" "$point" "$i") || { bad="iteration $i: $msg"; break; }
		done
		if [ -z "$bad" ]; then
			ok 0 "as $who: kill -9 at $point ($n times): lost, destroy --stale leaves nothing, next run works"
		else
			ok 1 "as $who: kill -9 at $point"
			printf '%s\n' "$bad" | sed 's/^/#   /'
			# Clean up for the next point.
			as_mode "$mode" "$SBX" destroy --all >/dev/null 2>&1
		fi
	done
done

# Not a fault: with SBX_FAULT naming no reached point, sbx runs normally.
out=$(as_mode root env SBX_FAULT=no-such-point,during-unpack@100000 "$SBX" run -q --rm -p "$BASE/fault.ini" -- sh -c 'echo fine' 2>&1)
[ "$out" = fine ]
ok $? "SBX_FAULT naming other points leaves a run alone ($out)"

as_mode root "$SBX" destroy --all >/dev/null 2>&1
as_mode user "$SBX" destroy --all >/dev/null 2>&1
done_testing
