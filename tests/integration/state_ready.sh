#!/bin/bash
# tests/integration/state_ready.sh - sandbox directories made ahead of
# time: after a run its purger leaves STATE/sandboxes/.ready-0 and -1
# (0700, a lock file in each); the next run takes one in a rename (its
# sandbox directory is that inode), never one another run holds (locked),
# never one that is not sbx's own (the purger replaces it); a removed
# sandbox's directory becomes a missing ready one; ps and inspect
# never list them; destroy --all removes them.  Root and nobody.
. "$(dirname "$0")/../lib/tap.sh"
. "$(dirname "$0")/../lib/sbx.sh"

sbx_setup_busybox

# ready MODE: the ready directories' inodes, once both exist (20 s at most).
ready() {
	local S=$BASE/state-$1/sandboxes
	for _ in $(seq 200); do
		[ -d "$S/.ready-0" ] && [ -d "$S/.ready-1" ] && ! pgrep -x sbx-purge >/dev/null && break
		sleep 0.1
	done
	stat -c %i "$S/.ready-0" "$S/.ready-1" 2>/dev/null | sort | tr '\n' ' '
}
dir_of() { # dir_of MODE NAME: the inode of its sandbox directory
	stat -c %i "$BASE/state-$1/sandboxes/$(sbx_as_mode "$1" "$SBX" inspect --json "$2" | jq -r .id)"
}
fifo=$BASE/lockfifo
mkfifo "$fifo"

for mode in $MODES; do
	# A first run that is kept (no trash directory yet): its purger
	# makes them all the same.
	F=$BASE/fresh-$mode
	mkdir -p "$F"
	[ "$mode" = user ] && [ "$(id -u)" = 0 ] && chown 65534:65534 "$F"
	capture sbx_as_dirs $mode "$F/state" "$F/cache" sh -c "cd '$WD' && exec '$SBX' run -q --rootfs '$IMG' -- sh -c 'exit 2'"
	for _ in $(seq 200); do
		[ -d "$F/state/sandboxes/.ready-1" ] && [ -d "$F/state/sandboxes/.ready-0" ] && break
		sleep 0.1
	done
	[ $rc -eq 2 ] && [ -d "$F/state/sandboxes/.ready-0" ] && [ -d "$F/state/sandboxes/.ready-1" ]
	ok $? "$mode: a first run that is kept leaves the ready directories too (rc $rc: $(ls -A "$F/state/sandboxes" | tr '\n' ' ') $err)"

	S=$BASE/state-$mode/sandboxes
	capture sbx_as_mode_in "$WD" $mode "$SBX" run -q --rootfs "$IMG" -- true
	before=$(ready $mode)
	[ $rc -eq 0 ] && [ "$(wc -w <<<"$before")" = 2 ] &&
		[ "$(stat -c %a "$S/.ready-0" "$S/.ready-1" | sort -u)" = 700 ] &&
		[ -f "$S/.ready-0/lock" ] && [ -f "$S/.ready-1/lock" ]
	ok $? "$mode: after a run, its purger leaves two ready sandbox directories ($before)"

	capture sbx_as_mode_in "$WD" $mode "$SBX" run -q --name rd-$mode --rootfs "$IMG" -- sh -c 'echo x >/f; exit 3'
	ino=$(dir_of $mode rd-$mode)
	[ $rc -eq 3 ] && [[ " $before" == *" $ino "* ]] &&
		[ "$(sbx_as_mode $mode "$SBX" exec rd-$mode cat /f)" = x ]
	ok $? "$mode: the next run's sandbox directory is one of them, taken in a rename ($ino)"
	after=$(ready $mode)
	[ "$(wc -w <<<"$after")" = 2 ] && [ "$after" != "$before" ]
	ok $? "$mode: the purger of that (kept) run makes the one it took again"
	# A removed sandbox's directory is made the ready one it took: emptied
	# but for its lock, renamed back (no directory removed, none made).
	before=$(ready $mode)
	t0=$(date +%s.%N)
	capture sbx_as_mode_in "$WD" $mode "$SBX" run -q --rm --rootfs "$IMG" -- sh -c 'echo x >/f'
	after=$(ready $mode)
	born=$(stat -c %W "$S/.ready-0" "$S/.ready-1" | sort -n | tail -1)
	[ $rc -eq 0 ] && [ "$after" = "$before" ] && [ "$born" -gt 0 ] && [ "$born" -le "${t0%.*}" ] &&
		[ "$(ls -A "$S/.ready-0" "$S/.ready-1" | grep -c '^lock$')" = 2 ] &&
		[ "$(ls -A "$S/.ready-0" "$S/.ready-1" | grep -vc -e '^lock$' -e '^$' -e ':$')" = 0 ] &&
		[ "$(stat -c %a "$S/.ready-0" "$S/.ready-1" | sort -u)" = 700 ]
	ok $? "$mode: a removed sandbox's directory becomes the ready one it took, only its lock left ($before -> $after, born $born, run at ${t0%.*})"
	# One that a run could not take (its mode changed meanwhile) is removed.
	capture sbx_as_mode_in "$WD" $mode "$SBX" run -q --rm --name rm-$mode --rootfs "$IMG" -- sh -c 'sleep 1'&
	bg=$!
	for _ in $(seq 50); do
		id=$(sbx_as_mode $mode "$SBX" inspect --json rm-$mode 2>/dev/null | jq -r .id 2>/dev/null)
		[ -n "$id" ] && [ "$id" != null ] && break
		sleep 0.05
	done
	# a directory is its inode and its birth time: the purger's mkdir of
	# a new ready one may get the removed one's inode number again
	gone=$(stat -c '%i@%w' "$S/$id" 2>/dev/null)
	chmod 0755 "$S/$id"
	wait $bg
	ready $mode >/dev/null
	after=$(stat -c '%i@%w' "$S/.ready-0" "$S/.ready-1" 2>/dev/null | tr ' \n' '_ ')
	gone=${gone// /_}
	[ -n "$gone" ] && [[ " $after" != *" $gone "* ]] && [ "$(stat -c %a "$S/.ready-0" "$S/.ready-1" | sort -u)" = 700 ]
	ok $? "$mode: a removed sandbox directory that is not one a run could take is removed, not made ready ($gone; $after)"
	capture sbx_as_mode $mode "$SBX" ps -a --json
	[ "$(jq length <<<"$out")" = 1 ] && ! grep -q ready <<<"$out"
	ok $? "$mode: ps lists the sandbox, never a ready directory"
	capture sbx_as_mode $mode "$SBX" inspect .ready-0
	[ $rc -ne 0 ]
	ok $? "$mode: inspect .ready-0 finds no such sandbox ($err)"

	# Locked ones (another run taking them) are not taken.
	flock -x "$S/.ready-0/lock" flock -x "$S/.ready-1/lock" sh -c "echo \$\$ >$fifo; exec sleep 60" &
	holder=$!
	read -r leaf <"$fifo"
	before=$(ready $mode)
	capture sbx_as_mode_in "$WD" $mode "$SBX" run -q --name rl-$mode --rootfs "$IMG" -- sh -c 'exit 4'
	ino=$(dir_of $mode rl-$mode)
	[ $rc -eq 4 ] && [[ " $before" != *" $ino "* ]] &&
		[ "$(stat -c %i "$S/.ready-0" "$S/.ready-1" | sort | tr '\n' ' ')" = "$before" ]
	ok $? "$mode: ready directories another run holds are not taken"
	kill "$leaf" 2>/dev/null
	wait "$holder" 2>/dev/null

	# Not ours (a subdirectory in it, a symlink in its place): never
	# taken, replaced by the purger.
	ready $mode >/dev/null
	mkdir "$S/.ready-0/sub"
	rm -rf "$S/.ready-1" && mkdir -p "$BASE/elsewhere-$mode" && ln -s "$BASE/elsewhere-$mode" "$S/.ready-1"
	chown -h "$(stat -c %u "$S")" "$S/.ready-1" "$S/.ready-0/sub"
	j0=$(stat -c %i "$S/.ready-0")
	capture sbx_as_mode_in "$WD" $mode "$SBX" run -q --name rj-$mode --rootfs "$IMG" -- sh -c 'exit 5'
	ino=$(dir_of $mode rj-$mode)
	[ $rc -eq 5 ] && [ "$ino" != "$j0" ] && [ -d "$BASE/elsewhere-$mode" ]
	ok $? "$mode: a ready directory with something in it, or a symlink, is not taken"
	ready $mode >/dev/null
	[ ! -L "$S/.ready-1" ] && [ ! -e "$S/.ready-0/sub" ] && [ -d "$BASE/elsewhere-$mode" ]
	ok $? "$mode: the purger replaces them with ready directories of its own"

	capture sbx_as_mode $mode "$SBX" destroy --all
	[ $rc -eq 0 ] && [ -z "$(ls -A "$S")" ] && ! grep -q ready <<<"$out"
	ok $? "$mode: destroy --all leaves sandboxes/ empty, ready directories too ($out)"
done
done_testing
