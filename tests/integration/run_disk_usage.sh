#!/bin/bash
# tests/integration/run_disk_usage.sh - what a run's writable layer held
# at its end.  A build that fills its [limits] disk fails with "No space
# left on device" like one that fills the host's disk; the run log says it
# was the layer's cap (bytes or inodes), the record keeps how much was
# used (resources.disk), and sbx inspect shows it.  Measured once, at the
# end: a layer filled and emptied again is not called full.  As root (an
# ext4 image on a loop device; with --rm a tmpfs in the jail) and as nobody
# (a tmpfs in the jail); with `[limits] disk = unlimited` there is no cap
# and nothing is measured.
. "$(dirname "$0")/../lib/tap.sh"
. "$(dirname "$0")/../lib/sbx.sh"

need_tools jq
sbx_setup_busybox
PROJ=$WD/proj
mkdir -p "$PROJ" && chmod 0777 "$PROJ"
printf '[sandbox]\nextends = default\n[limits]\ndisk = 20m\n' >"$BASE/small.ini"
printf '[sandbox]\nextends = default\n[limits]\ndisk = unlimited\n' >"$BASE/unlimited.ini"
chmod 0644 "$BASE"/*.ini

FILL='dd if=/dev/zero of=big bs=1M count=64 2>/dev/null; echo dd=$?'
FILES='mkdir many && cd many && i=0; while [ $i -lt 40000 ] && true 2>/dev/null >f$i; do i=$((i+1)); done; echo made=$i'
LINE="sbx: disk: its writable layer was full at the end"

for mode in $MODES; do
	run() { sbx_as_mode_in "$PROJ" "$mode" "$SBX" run --rootfs "$IMG" "$@"; }
	as() { sbx_as_mode "$mode" "$SBX" "$@"; }

	capture run -n "fill-$mode" --keep -p "$BASE/small.ini" -- sh -c "$FILL"
	d=$(as inspect --json "fill-$mode" | jq -c .resources.disk)
	line=$(printf '%s\n' "$err" | grep -F "$LINE")
	[ "$rc" = 0 ] && [ "$out" = dd=1 ] &&
		[[ "$line" == "$LINE: "*" MiB of "*" MiB used; writes may have failed with 'No space left on device' ([limits] disk sets its size)" ]] &&
		jq -e '.full == true and .used > 15000000 and .size >= .used and .size <= 20971520' <<<"$d" >/dev/null
	ok $? "$mode: a run that filled its 20M layer is told so; the record has it ($line; $d)"
	as inspect "fill-$mode" | grep -Eq '^  disk used +[12][0-9]\.[0-9] MiB of [12][0-9]\.[0-9] MiB, [0-9]+ of [0-9]+ inodes \(full at the end\)$'
	ok $? "$mode: sbx inspect shows the layer's use ($(as inspect "fill-$mode" | grep 'disk used'))"
	as destroy "fill-$mode" >/dev/null 2>&1

	capture run -n "files-$mode" --keep -p "$BASE/small.ini" -- sh -c "$FILES"
	d=$(as inspect --json "files-$mode" | jq -c .resources.disk)
	line=$(printf '%s\n' "$err" | grep -F "$LINE")
	[ "$rc" = 0 ] && [[ "$out" == made=* ]] && [ "${out#made=}" -lt 40000 ] &&
		[[ "$line" == "$LINE: all "*" inodes used; creating files may have failed with 'No space left on device' ([limits] disk sets its size)" ]] &&
		jq -e '.full == true and .inodes > 0 and .inodes_used == .inodes' <<<"$d" >/dev/null
	ok $? "$mode: a run that used every inode of its layer is told so ($out; $line; $d)"
	as destroy "files-$mode" >/dev/null 2>&1

	capture run -n "little-$mode" --keep -p "$BASE/small.ini" -- sh -c 'echo x >made.txt'
	d=$(as inspect --json "little-$mode" | jq -c .resources.disk)
	[ "$rc" = 0 ] && [[ "$err" != *"sbx: disk:"* ]] &&
		jq -e '.full == false and .used > 0 and .used < 2000000 and .size > 15000000' <<<"$d" >/dev/null
	ok $? "$mode: a run that wrote a little: no line, the record has its use ($d)"
	as destroy "little-$mode" >/dev/null 2>&1

	capture run -p "$BASE/small.ini" -- sh -c "$FILL; rm big"
	[ "$rc" = 0 ] && [[ "$err" != *"sbx: disk:"* ]]
	ok $? "$mode: a layer filled and emptied again is not called full (measured at the end)"

	capture run --rm -q --log-json "$BASE/rm-$mode.jsonl" -p "$BASE/small.ini" -- sh -c "$FILL"
	[ "$rc" = 0 ] && [ -z "$err" ] &&
		[ "$(jq -c 'select(.event == "exit") | .resources.disk.full' "$BASE/rm-$mode.jsonl")" = true ]
	ok $? "$mode: --rm (layers in memory) too, in --log-json's exit event; -q prints nothing ($rc; $err; $(jq -c 'select(.event == "exit") | .resources' "$BASE/rm-$mode.jsonl" 2>&1))"

	capture run --rm -p "$BASE/small.ini" -- sh -c "$FILL"
	[ "$rc" = 0 ] && printf '%s\n' "$err" | grep -qF "$LINE"
	ok $? "$mode: --rm says it in the run log ($(printf '%s\n' "$err" | grep -F 'sbx: disk:'))"

	if [ "$mode" = root ]; then
		capture run -n "unl-$mode" --keep -p "$BASE/unlimited.ini" -- sh -c 'echo x >made.txt'
		d=$(as inspect --json "unl-$mode" | jq -c .resources.disk)
		[ "$rc" = 0 ] && [ "$d" = null ] && ! as inspect "unl-$mode" | grep -q 'disk used'
		ok $? "$mode: [limits] disk = unlimited: no cap, nothing measured ($d)"
		as destroy "unl-$mode" >/dev/null 2>&1
	fi
done

done_testing
