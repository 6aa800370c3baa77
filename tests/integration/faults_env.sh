#!/bin/bash
# tests/integration/faults_env.sh - sbx run in a hostile environment, as
# root and as nobody:
#   - the state directory (or its sandboxes/) cannot be written: read-only
#     mount (root), mode 0500 or another owner (nobody);
#   - the state directory is on a full filesystem (a 1M tmpfs, filled to
#     leave 0..256k);
#   - the image cache holds a corrupt image (files deleted or truncated in
#     CACHE/images/<sha>/, the image replaced by a file, a by-stat entry
#     that is garbage or names a missing image, a dead unpack's .tmp-).
# Either sbx fails before the command runs, with one clear "sbx: " line and
# exit 125, or (a cache it can repair) the run is correct; never a command
# that ran without its record, and every record.json left parses.
. "$(dirname "$0")/../lib/tap.sh"
. "$(dirname "$0")/../lib/sbx.sh"

if [ "$(id -u)" -ne 0 ]; then
	echo "1..0 # SKIP needs root (mounts tmpfs; the unprivileged half runs through setpriv)"
	exit 77
fi

BASE=$TAP_TMP/base
mkdir -p "$BASE" && chmod 0777 "$BASE"
cp "$SBX" "$BASE/sbx" && chmod 0755 "$BASE/sbx" && SBX=$BASE/sbx
TARBALL=$BASE/busybox.tar.gz
"$TAP_ROOT/tests/lib/mkrootfs.sh" "$TARBALL" >/dev/null 2>&1 || {
	echo "Bail out! cannot build the busybox rootfs"
	exit 1
}
chmod 0644 "$TARBALL"
NENTRIES=$(tar tzf "$TARBALL" | sed 's,/$,,; s,^\./,,' | grep -vc '^\.\?$')

MOUNTS=()
cleanup() {
	local m i
	for ((i = ${#MOUNTS[@]} - 1; i >= 0; i--)); do
		m=${MOUNTS[$i]}
		umount -l "$m" 2>/dev/null
	done
	tap_cleanup
}
trap cleanup EXIT

# in_mode MODE STATE CACHE CMD...: run CMD as MODE with those directories.
in_mode() { sbx_as_dirs "$@"; }

# mkdir_for MODE DIR...: directories the user of MODE owns.
mkdir_for() {
	local mode=$1
	shift
	mkdir -p "$@"
	[ "$mode" = user ] && chown 65534:65534 "$@"
	true
}

# records_ok DIR: every record.json under DIR parses as a JSON object with
# an id and a state, and no temporary record file is left.
records_ok() {
	local r bad=0
	while IFS= read -r r; do
		python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
assert isinstance(d, dict) and d.get("id") and d.get("state"), "no id or state"
' "$r" 2>/dev/null || { echo "corrupt record $r"; bad=1; }
	done < <(find "$1" -name record.json 2>/dev/null)
	if find "$1" \( -name '*.tmp' -o -name '.tmp*' -o -name 'record.json.*' \) 2>/dev/null | grep -q .; then
		echo "temporary files left: $(find "$1" \( -name '*.tmp' -o -name '.tmp*' -o -name 'record.json.*' \) | head -n 3 | tr '\n' ' ')"
		bad=1
	fi
	return $bad
}

# failed_cleanly: $rc/$out/$err of a run whose command prints RAN: exit
# 125, stderr one or more "sbx: " lines (the first one the error), the
# command did not run.
failed_cleanly() {
	[ "$rc" -eq 125 ] && [ -n "$err" ] && ! printf '%s\n' "$err" | grep -qv '^sbx: ' &&
		! printf '%s\n' "$out" | grep -q RAN
}

# image_dir CACHE: the published image directory (one expected).
image_dir() {
	find "$1/images" -mindepth 1 -maxdepth 1 -type d ! -name by-stat ! -name '.tmp-*' | head -n 1
}

image_complete() {
	local d n
	d=$(image_dir "$1")
	[ -n "$d" ] || return 1
	n=$(cd "$d" && find . -mindepth 1 | wc -l)
	[ "$n" -eq "$NENTRIES" ]
}

for mode in root user; do
	who=root
	[ "$mode" = user ] && who=nobody
	M=$BASE/$mode
	mkdir -p "$M" && chmod 0755 "$M"
	mkdir_for "$mode" "$M/cache"
	CACHE=$M/cache
	mkdir_for "$mode" "$M/warm-state"
	capture in_mode "$mode" "$M/warm-state" "$CACHE" "$SBX" run -q --rm --rootfs "$TARBALL" -- echo warm
	[ "$rc" -eq 0 ] && [ "$out" = warm ]
	ok $? "as $who: a plain run works ($out$err)"

	# ---- 1. unwritable state directory ----
	if [ "$mode" = root ]; then
		S=$M/ro-state
		mkdir -p "$S/sandboxes"
		mount --bind "$S" "$S" && MOUNTS+=("$S") && mount -o remount,bind,ro "$S"
		capture in_mode "$mode" "$S" "$CACHE" "$SBX" run -q --rootfs "$TARBALL" -- echo RAN
		failed_cleanly && [ -z "$(sbx_sandbox_entries "$S/sandboxes")" ]
		ok $? "as root: a read-only state directory: exit $rc, '$err'"
		umount "$S" && unset 'MOUNTS[-1]' # no mount left under the other cases' HOME
		S=$M/ro-sandboxes
		mkdir -p "$S/sandboxes"
		mount --bind "$S/sandboxes" "$S/sandboxes" && MOUNTS+=("$S/sandboxes") &&
			mount -o remount,bind,ro "$S/sandboxes"
		capture in_mode "$mode" "$S" "$CACHE" "$SBX" run -q --rootfs "$TARBALL" -- echo RAN
		failed_cleanly && [ -z "$(sbx_sandbox_entries "$S/sandboxes")" ]
		ok $? "as root: a read-only STATE/sandboxes: exit $rc, '$err'"
		umount "$S/sandboxes" && unset 'MOUNTS[-1]'
	else
		S=$M/state-0500
		mkdir_for user "$S" && chmod 0500 "$S"
		capture in_mode "$mode" "$S" "$CACHE" "$SBX" run -q --rootfs "$TARBALL" -- echo RAN
		failed_cleanly && [ -z "$(ls -A "$S")" ]
		ok $? "as nobody: a state directory of mode 0500: exit $rc, '$err'"
		S=$M/state-root
		mkdir -p "$S" && chmod 0755 "$S"
		capture in_mode "$mode" "$S" "$CACHE" "$SBX" run -q --rootfs "$TARBALL" -- echo RAN
		failed_cleanly && [ -z "$(ls -A "$S")" ] &&
			grep -qF "cannot open state directory '$S' (--state-dir DIR or SBX_STATE_DIR picks another): Permission denied" <<<"$err"
		ok $? "as nobody: a state directory owned by root: exit $rc, '$err', and how to pick another"
		S=$M/state-sb0500
		mkdir_for user "$S" "$S/sandboxes" && chmod 0500 "$S/sandboxes"
		capture in_mode "$mode" "$S" "$CACHE" "$SBX" run -q --rootfs "$TARBALL" -- echo RAN
		failed_cleanly && [ -z "$(sbx_sandbox_entries "$S/sandboxes")" ]
		ok $? "as nobody: STATE/sandboxes of mode 0500: exit $rc, '$err'"
	fi

	# ---- 2. state directory on a full filesystem ----
	F=$M/full
	mkdir -p "$F"
	opts=size=1m,mode=0755
	[ "$mode" = user ] && opts=$opts,uid=65534,gid=65534
	if ! mount -t tmpfs -o "$opts" sbx-test-full "$F"; then
		ok 1 "as $who: mount a 1M tmpfs for the full-filesystem cases"
		continue
	fi
	MOUNTS+=("$F")
	for free in 0 4 8 16 32 64 256; do
		find "$F" -mindepth 1 -delete
		mkdir_for "$mode" "$F/state"
		# A first run creates what every run shares (sandboxes/, locks).
		in_mode "$mode" "$F/state" "$CACHE" "$SBX" run -q --rm --rootfs "$TARBALL" -- true >/dev/null 2>&1
		avail=$(df -k --output=avail "$F" | tail -n 1 | tr -d ' ')
		if [ "$avail" -gt "$free" ]; then
			dd if=/dev/zero of="$F/fill" bs=1k count=$((avail - free)) 2>/dev/null
		fi
		capture in_mode "$mode" "$F/state" "$CACHE" "$SBX" run -q --keep --rootfs "$TARBALL" -- \
			sh -c 'echo RAN; exit 3'
		why=
		if [ "$rc" -eq 125 ]; then
			failed_cleanly || why="exit 125 but the command ran or the error is not clean"
		elif [ "$rc" -eq 3 ]; then
			# The run worked: then no error, and a complete final record.
			[ -z "$err" ] || why="the command ran (exit 3) but sbx said: $(printf '%s' "$err" | tr '\n' '|')"
			if [ -z "$why" ]; then
				st=$(in_mode "$mode" "$F/state" "$CACHE" "$SBX" ps -a --json 2>&1 |
					python3 -c 'import json,sys; print(" ".join(s["state"] for s in json.load(sys.stdin)))' 2>&1)
				[ "$st" = "exited 3" ] || [ "$st" = exited ] ||
					why="the command ran but its sandbox is '$st', not exited"
			fi
		else
			why="exit $rc: $(printf '%s' "$err" | tr '\n' '|')"
		fi
		rec=$(records_ok "$F/state") || why="${why:+$why; }$rec"
		rm -f "$F/fill"
		in_mode "$mode" "$F/state" "$CACHE" "$SBX" destroy --all >/dev/null 2>&1
		[ -z "$why" ]
		ok $? "as $who: state on a full filesystem (${free}k free): exit $rc${why:+: $why}"
	done
	umount "$F" && unset 'MOUNTS[-1]'

	# ---- 3. a corrupt image in the cache ----
	S=$M/state-img
	mkdir_for "$mode" "$S"
	run_img() {
		capture in_mode "$mode" "$S" "$CACHE" "$SBX" run -q --rm --rootfs "$TARBALL" -- "${@:-echo}" RAN
	}
	fresh_cache() {
		rm -rf "$CACHE" && mkdir_for "$mode" "$CACHE"
		run_img
	}
	IMG_DESC=(
		"the image lost a file (bin/busybox deleted)"
		"a file of the image is truncated (bin/busybox empty)"
		"the image's /etc/passwd was deleted"
	)
	IMG_BREAK=(
		'rm -f "$img/bin/busybox"'
		': >"$img/bin/busybox"'
		'rm -f "$img/etc/passwd"'
	)
	# A run does not walk the cached image (start-up would grow with the
	# image): a command that fails on it makes sbx check, and name it.
	for i in "${!IMG_DESC[@]}"; do
		fresh_cache
		img=$(image_dir "$CACHE")
		eval "${IMG_BREAK[$i]}"
		run_img sh -c 'cat /etc/passwd >/dev/null 2>&1 && echo "$0"'
		failed_cleanly && records_ok "$S" >/dev/null && [[ $err == *"is damaged"*"remove it"* ]]
		ok $? "as $who: ${IMG_DESC[$i]}: exit $rc (want 125 and a clear error), '$err'"
	done
	fresh_cache
	img=$(image_dir "$CACHE")
	rm -f "$img/etc/group"
	run_img
	[ "$rc" -eq 0 ] && [ "$out" = RAN ] && [ -z "$err" ]
	ok $? "as $who: a damaged image whose command succeeds: the run is not held back (exit $rc$err)"
	run_img sh -c 'exit 3'
	failed_cleanly && [[ $err == *"is damaged"* ]]
	ok $? "as $who: ... and the first failing command names the damage: exit $rc, '$err'"

	fresh_cache
	img=$(image_dir "$CACHE")
	rm -rf "$img" && echo garbage >"$img"
	rm -f "$CACHE/images/by-stat/"*
	run_img
	failed_cleanly && records_ok "$S" >/dev/null
	ok $? "as $who: the image is a file, not a directory: exit $rc, '$err'"

	# Index damage sbx repairs: the run works and uses a complete image.
	for kind in garbage missing-image no-image; do
		fresh_cache
		img=$(image_dir "$CACHE")
		case $kind in
		garbage) for f in "$CACHE/images/by-stat/"*; do printf 'garbage\n' >"$f"; done ;;
		missing-image) for f in "$CACHE/images/by-stat/"*; do printf '%064d\n' 7 >"$f"; done ;;
		no-image) rm -rf "$img" ;;
		esac
		run_img
		[ "$rc" -eq 0 ] && [ "$out" = RAN ] && image_complete "$CACHE" && records_ok "$S" >/dev/null
		ok $? "as $who: by-stat index $kind: the run repairs the cache (exit $rc$err)"
	done

	# ---- 4. mount points inside the directories the profile overlays ----
	# The default profile gives a copy-on-write view of $PWD and $HOME; a
	# mount inside them (a FUSE or network mount, a bind) is ordinary.
	H=$M/home-with-mount
	mkdir -p "$H/mnt" "$H/work/vol" && chmod -R 0777 "$H"
	if mount -t tmpfs -o size=1m sbx-test-sub "$H/mnt" &&
		mount -t tmpfs -o size=1m sbx-test-sub "$H/work/vol"; then
		MOUNTS+=("$H/mnt" "$H/work/vol")
		capture in_mode "$mode" "$S" "$CACHE" env HOME="$H" sh -c \
			'cd "$HOME/work" && exec "$0" run -q --rm --rootfs "$1" -- echo RAN' "$SBX" "$TARBALL"
		[ "$rc" -eq 0 ] && [ "$out" = RAN ]
		ok $? "as $who: mount points inside \$HOME and the working directory: the run works (exit $rc$err)"
		umount "$H/work/vol" "$H/mnt"
		unset 'MOUNTS[-1]' 'MOUNTS[-1]'
	else
		ok 1 "as $who: mount tmpfs inside a home directory"
	fi

	# A dead unpack's .tmp- directory is never used as an image.
	rm -rf "$CACHE" && mkdir_for "$mode" "$CACHE" "$CACHE/images" "$CACHE/images/.tmp-dead1"
	chmod 0700 "$CACHE/images"
	run_img
	[ "$rc" -eq 0 ] && [ "$out" = RAN ] && image_complete "$CACHE"
	ok $? "as $who: a half image (.tmp-) in the cache is ignored (exit $rc$err)"
done
# No $HOME: the error names the directory it cannot find and how to give
# it (SBX_STATE_DIR given, the cache's not; then neither).
mkdir -p "$TAP_TMP/nohome-state"
capture env -u HOME -u SBX_CACHE_DIR -u XDG_CACHE_HOME -u XDG_STATE_HOME \
	SBX_STATE_DIR="$TAP_TMP/nohome-state" setpriv --reuid=65534 --regid=65534 --clear-groups \
	--inh-caps=-all "$SBX" ps
[ "$rc" -ne 0 ] && grep -q 'cache directory' <<<"$err" && grep -q 'SBX_CACHE_DIR' <<<"$err" &&
	! grep -q 'state directory' <<<"$err"
ok $? "no \$HOME, SBX_STATE_DIR set: the error names the cache directory and SBX_CACHE_DIR (rc=$rc: $err)"
capture env -u HOME -u SBX_CACHE_DIR -u SBX_STATE_DIR -u XDG_CACHE_HOME -u XDG_STATE_HOME \
	setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all "$SBX" ps
[ "$rc" -ne 0 ] && grep -q 'state directory' <<<"$err" && grep -q -- '--state-dir' <<<"$err" &&
	grep -q 'SBX_STATE_DIR' <<<"$err"
ok $? "no \$HOME and nothing set: the error names the state directory, --state-dir and SBX_STATE_DIR (rc=$rc: $err)"
done_testing
