#!/bin/bash
# tests/integration/run_output_lost.sh - the command's output that cannot
# reach the caller (stdout or stderr on a full disk: /dev/full) is never
# lost in silence: sbx says which stream, why and how much, the sandbox's
# output log still has it, and a command that succeeded ends in 125 (sbx
# could not deliver its output), as a program writing there itself would
# fail.  A reader that went away (EPIPE) stays the command's own SIGPIPE.
# sbx run and sbx exec, as root and as nobody.
. "$(dirname "$0")/../lib/tap.sh"
. "$(dirname "$0")/../lib/sbx.sh"

sbx_modes
[ -w /dev/full ] || { echo "1..0 # SKIP no /dev/full"; exit 77; }

sbx_base
IMG=$BASE/busybox.tar.gz
sbx_rootfs "$IMG"
mkdir -p "$BASE/wd" && chmod 0777 "$BASE/wd"

# python3 -c "$slow_reader" CMD...: CMD's stdout a pipe left non-blocking,
# read only after a second; prints CMD's status, its last word and count.
slow_reader='
import fcntl, os, subprocess, sys, time
r, w = os.pipe()
fcntl.fcntl(w, fcntl.F_SETFL, fcntl.fcntl(w, fcntl.F_GETFL) | os.O_NONBLOCK)
p = subprocess.Popen(sys.argv[1:], stdout=w)
os.close(w)
time.sleep(1)
data = b""
while True:
    b = os.read(r, 65536)
    if not b:
        break
    data += b
print(p.wait(), data.split()[-1].decode() if data else "-", len(data.split()))
'

for mode in $MODES; do
	export SBX_STATE_DIR=$BASE/state-$mode SBX_CACHE_DIR=$BASE/cache-$mode
	run_in() { sbx_as_mode_in "$BASE/wd" $mode "$@"; }

	capture run_in sh -c "'$SBX' run -q -n full-$mode --rootfs '$IMG' -- echo hello >/dev/full"
	[ "$rc" = 125 ] && grep -q "stdout" <<<"$err" && grep -q "No space left on device" <<<"$err" &&
		grep -q "sbx inspect --output full-$mode" <<<"$err"
	ok $? "$mode: stdout on a full disk: said, and 125 for a command that succeeded ($rc: $err)"
	capture run_in "$SBX" inspect --json full-$mode
	grep -q '"reason": *"error"' <<<"$out" && grep -q '"error": *"cannot write the command.s output to stdout' <<<"$out"
	ok $? "$mode: the record says why it ended in 125"
	run_in "$SBX" destroy full-$mode >/dev/null 2>&1
	capture run_in sh -c "'$SBX' run -q --rm --rootfs '$IMG' -- echo hello >/dev/full"
	[ "$rc" = 125 ] && grep -q "not kept (--rm" <<<"$err"
	ok $? "$mode: with --rm it says the output log is gone with the sandbox ($err)"

	capture run_in sh -c "'$SBX' run -q -n lost-$mode --rootfs '$IMG' -- sh -c 'echo kept-output; exit 3' >/dev/full"
	[ "$rc" = 3 ] && grep -q "stdout.*No space left on device" <<<"$err"
	ok $? "$mode: a command that failed keeps its own status, the loss said ($rc)"
	capture run_in "$SBX" inspect --output lost-$mode
	[ "$rc" = 0 ] && grep -q '^kept-output$' <<<"$out"
	ok $? "$mode: the sandbox's output log has what did not reach stdout ($out)"
	grep -q '"event":"output-lost","message":"cannot write the command.s output to stdout: No space left on device' \
		"$SBX_STATE_DIR"/sandboxes/*/log.jsonl
	ok $? "$mode: the sandbox's run log has the loss too"
	run_in "$SBX" destroy lost-$mode >/dev/null 2>&1

	# stderr on /dev/full: nothing can be said there, the status says it
	capture run_in sh -c "'$SBX' run -q --rootfs '$IMG' -- sh -c 'echo oops >&2' 2>/dev/full"
	[ "$rc" = 125 ]
	ok $? "$mode: stderr on a full disk: 125 ($rc)"

	# a command writing for a while is not killed by the loss: all of it
	# reaches the output log (up to its cap), and it ends by itself
	capture run_in sh -c "'$SBX' run -q -n lost2-$mode --rootfs '$IMG' -- sh -c 'seq 1 20000; exit 4' >/dev/full"
	[ "$rc" = 4 ]
	ok $? "$mode: a long writer runs to its own end ($rc)"
	capture run_in "$SBX" inspect --output lost2-$mode
	[ "$(tail -1 <<<"$out")" = 20000 ]
	ok $? "$mode: ... and its output log has every line ($(tail -1 <<<"$out"))"
	capture run_in python3 -c "$slow_reader" "$SBX" logs lost2-$mode
	[ "$out" = "0 20000 20000" ]
	ok $? "$mode: sbx logs to a non-blocking stdout with a slow reader: all of it ($out)"
	run_in "$SBX" destroy lost2-$mode >/dev/null 2>&1

	# a caller's stdout left non-blocking (by another process sharing it)
	# and a slow reader: sbx waits for room, nothing is lost
	capture run_in python3 -c "$slow_reader" "$SBX" run -q --rootfs "$IMG" -- seq 1 200000
	[ "$out" = "0 200000 200000" ]
	ok $? "$mode: a non-blocking stdout with a slow reader gets all of it ($out)"

	# a reader that went away: unchanged, the command's own SIGPIPE
	capture run_in sh -c "'$SBX' run -q --rootfs '$IMG' -- yes | head -1"
	[ "$rc" = 0 ] && [ "$out" = y ]
	ok $? "$mode: yes | head -1: the reader's end is still the command's SIGPIPE ($rc)"

	# the other commands' stdout on a full disk: one line and 1, never 0
	# with half a patch (`sbx diff ID >fix.patch`)
	run_in "$SBX" run -q --keep -n rev-$mode --rootfs "$IMG" -- sh -c 'seq 1 50; seq 1 50 >f.txt' >/dev/null 2>&1
	for c in "diff rev-$mode" "inspect rev-$mode" "inspect --json rev-$mode" \
		"inspect --output rev-$mode" "logs rev-$mode" ps "profile show default"; do
		capture run_in sh -c "'$SBX' $c >/dev/full"
		[ "$rc" = 1 ] && grep -q "cannot write .*: No space left on device" <<<"$err"
		ok $? "$mode: sbx $c >/dev/full: said, exit 1 ($rc: $err)"
	done
	run_in "$SBX" destroy rev-$mode >/dev/null 2>&1

	# sbx exec into a running sandbox: the same
	run_in "$SBX" run -q -d -n ex-$mode --rootfs "$IMG" -- sleep 60 >/dev/null
	capture run_in sh -c "'$SBX' exec ex-$mode -- echo hello >/dev/full"
	[ "$rc" = 125 ] && grep -q "stdout.*No space left on device" <<<"$err"
	ok $? "$mode: sbx exec: stdout on a full disk: said, 125 ($rc: $err)"
	run_in "$SBX" destroy ex-$mode >/dev/null 2>&1
	unset SBX_STATE_DIR SBX_CACHE_DIR
done

done_testing
