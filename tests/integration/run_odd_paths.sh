#!/bin/bash
# tests/integration/run_odd_paths.sh - a project whose path holds a ':'
# (a directory named for a time, "build 2026-12-07T01:00:00"), a ',' and
# a blank.  The default profile's `overlay = $PWD` split such a path at
# its ':' into SRC:DST and refused every run there ("destination '00' is
# not an absolute path").  Now the run works, a kept sandbox's resolved
# profile (written with "\:") reads back for `sbx exec`, and `--ro-bind`
# takes a literal ':' written "\:"; a kept sandbox in "My Project #2 ;b"
# (' #' and ' ;' start a comment in a profile) is entered the same way;
# a working directory removed under the caller is said, not silently /.
# As root and as nobody, on the host
# root (the default profile's overlays of $PWD and $HOME).
. "$(dirname "$0")/../lib/tap.sh"
. "$(dirname "$0")/../lib/sbx.sh"

sbx_setup_busybox
ODD="$WD/build 2026-12-07T01:00:00,v2"
DATA="$WD/data:1"
HASH="$WD/My Project #2 ;b"
mkdir -p "$ODD" "$DATA" "$HASH" && chmod 0777 "$ODD" "$DATA" "$HASH" &&
	echo in-hash >"$HASH/f" && chmod 0644 "$HASH/f" &&
	echo in-project >"$ODD/f" && echo in-data >"$DATA/file" && chmod 0644 "$ODD/f" "$DATA/file"

for mode in $MODES; do
	in_odd() { sbx_as_mode_in "$ODD" "$mode" "$SBX" "$@"; }

	capture in_odd run -q -- sh -c 'cat f; pwd; echo n >g'
	[ "$rc" = 0 ] && [ "$out" = "in-project
$ODD" ] && [ ! -e "$ODD/g" ]
	ok $? "$mode: a run in '$ODD' sees its files and its path ($rc: $out $err)"

	capture in_odd run -q --keep -n "odd-$mode" -- sh -c 'echo z >h; exit 3'
	[ "$rc" = 3 ]
	ok $? "$mode: a kept failing run there ($rc: $err)"
	capture in_odd exec "odd-$mode" -- sh -c 'pwd; cat h'
	[ "$rc" = 0 ] && [ "$out" = "$ODD
z" ]
	ok $? "$mode: sbx exec of the kept sandbox reads its profile back and sees its change ($rc: $out $err)"
	capture in_odd diff --name-only "odd-$mode"
	[ "$rc" = 0 ] && [ "$out" = h ]
	ok $? "$mode: sbx diff names the change ($rc: $out $err)"
	capture in_odd profile show default
	grep -qxF "overlay = ${ODD//:/\\:}" <<<"$out"
	ok $? "$mode: profile show writes the path's ':' as '\\:' ($(grep '^overlay' <<<"$out" | tail -n 1))"
	in_odd destroy "odd-$mode" >/dev/null 2>&1

	# ' #' and ' ;' start a comment in a profile; sbx exec reads the
	# record's written profile without them.
	capture sbx_as_mode_in "$HASH" "$mode" "$SBX" run -q --keep -n "hash-$mode" -- sh -c 'echo z >h; exit 3'
	capture sbx_as_mode_in "$HASH" "$mode" "$SBX" exec "hash-$mode" -- sh -c 'pwd; cat h f'
	[ "$rc" = 0 ] && [ "$out" = "$HASH
z
in-hash" ]
	ok $? "$mode: sbx exec of a kept sandbox in '$HASH' ($rc: $out $err)"
	sbx_as_mode "$mode" "$SBX" destroy "hash-$mode" >/dev/null 2>&1

	capture in_odd run -q --rm --ro-bind "${DATA//:/\\:}:/tmp/data" -- cat /tmp/data/file
	[ "$rc" = 0 ] && [ "$out" = in-data ]
	ok $? "$mode: --ro-bind takes a literal ':' written '\\:' ($rc: $out $err)"

	# A working directory removed under the caller: the run says where
	# its command runs instead of starting it in / without a word.
	G=$BASE/gone-$mode
	mkdir -p "$G" && chmod 0777 "$G"
	capture sbx_as_mode "$mode" sh -c 'cd "$1" && rmdir "$1" && "$2" run --rm -- pwd' sh "$G" "$SBX"
	[ "$rc" = 0 ] && [ "$out" = / ] &&
		grep -qF "sbx: warning: the working directory is gone (No such file or directory): the command runs in / (-w DIR sets another)" <<<"$err"
	ok $? "$mode: a removed working directory is said, the command runs in / ($rc: $out $(grep warning <<<"$err"))"

	# A name that is not UTF-8 (Latin-1 'café'): the run log's JSON cannot
	# carry its bytes, but it still names the directory (U+FFFD for them)
	# instead of leaving it out.
	L=$BASE/$(printf 'caf\xe9')-$mode
	mkdir -p "$L" && chmod 0777 "$L"
	capture sbx_as_mode_in "$L" "$mode" "$SBX" run -- sh -c 'echo x >made.txt'
	[ "$rc" = 0 ] && [ ! -e "$L/made.txt" ] &&
		grep -qF "sbx: discarded its changes to $BASE/caf$(printf '\xef\xbf\xbd')-$mode (copy-on-write)" <<<"$err"
	ok $? "$mode: a directory whose name is not UTF-8 is named in the discarded line ($rc: $(tail -n 1 <<<"$err"))"
done

done_testing
