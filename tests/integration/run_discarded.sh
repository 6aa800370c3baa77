#!/bin/bash
# tests/integration/run_discarded.sh - a sandbox removed after its run
# (persist = on-failure and the command succeeded, persist = never, sbx
# stop) says whose writes it threw away: the working directory's
# copy-on-write view, the image's root.  Without it a developer who ran a
# build or an agent in the default profile found nothing of its work on
# the host and no line saying why.  Nothing is said when nothing was
# written, or with --rm (asked for); the JSON run log's "removed" event
# lists the same directories.  As root (the layers' ext4 image, and with
# `[limits] disk = unlimited` the state filesystem) and as nobody (a tmpfs
# in the jail).
. "$(dirname "$0")/../lib/tap.sh"
. "$(dirname "$0")/../lib/sbx.sh"

need_tools jq
sbx_setup_busybox
PROJ=$WD/proj
mkdir -p "$PROJ" && chmod 0777 "$PROJ" && echo old >"$PROJ/old.txt" && chmod 0666 "$PROJ/old.txt"
printf '[sandbox]\nextends = default\n[limits]\ndisk = unlimited\n' >"$BASE/unlimited.ini"
printf '[sandbox]\nextends = default\npersist = never\n' >"$BASE/never.ini"
chmod 0644 "$BASE"/*.ini

HINT="--keep keeps a run's changes for 'sbx diff' and 'sbx apply'"

for mode in $MODES; do
	run() { sbx_as_mode_in "$PROJ" "$mode" "$SBX" run --rootfs "$IMG" "$@"; }

	capture run -- sh -c 'echo new >made.txt; rm old.txt'
	[ "$rc" = 0 ] && [ ! -e "$PROJ/made.txt" ] && [ "$(cat "$PROJ/old.txt")" = old ] &&
		printf '%s\n' "$err" | grep -qxF "sbx: discarded its changes to $PROJ (copy-on-write); $HINT"
	ok $? "$mode: a successful run that wrote to the working directory says it threw that away ($rc: $(printf '%s\n' "$err" | tail -n 2))"

	capture run -- sh -c 'echo x >/root-file; echo y >made.txt'
	[ "$rc" = 0 ] &&
		printf '%s\n' "$err" | grep -qxF "sbx: discarded its changes to the image's root and $PROJ (copy-on-write); $HINT"
	ok $? "$mode: writes to the image's root are named too ($(printf '%s\n' "$err" | tail -n 1))"

	capture run -- sh -c 'cat old.txt >/dev/null; ls / >/dev/null'
	[ "$rc" = 0 ] && [[ "$err" == *"removed sandbox"* ]] && [[ "$err" != *discarded* ]]
	ok $? "$mode: a run that wrote nothing says nothing of changes ($(printf '%s\n' "$err" | tail -n 1))"

	capture run --rm -- sh -c 'echo new >made.txt'
	[ "$rc" = 0 ] && [[ "$err" == *"removed sandbox"* ]] && [[ "$err" != *discarded* ]]
	ok $? "$mode: --rm (asked for) says nothing of changes ($(printf '%s\n' "$err" | tail -n 1))"

	capture run -p "$BASE/never.ini" -- sh -c 'echo new >made.txt'
	[ "$rc" = 0 ] && printf '%s\n' "$err" | grep -qxF "sbx: discarded its changes to $PROJ (copy-on-write); $HINT"
	ok $? "$mode: persist = never says it too ($(printf '%s\n' "$err" | tail -n 1))"

	capture run -q --log-json "$BASE/log-$mode.jsonl" -- sh -c 'echo new >made.txt; echo x >/root-file'
	[ "$rc" = 0 ] && [ -z "$err" ] &&
		[ "$(jq -c 'select(.event == "removed") | .discarded' "$BASE/log-$mode.jsonl")" = "[\"/\",\"$PROJ\"]" ]
	ok $? "$mode: -q prints nothing; --log-json's removed event lists / and $PROJ ($(jq -c 'select(.event == "removed")' "$BASE/log-$mode.jsonl" 2>&1))"

	capture run --keep -n "kept-$mode" -- sh -c 'echo new >made.txt'
	[ "$rc" = 0 ] && [[ "$err" == *"kept sandbox"* ]] && [[ "$err" != *discarded* ]]
	ok $? "$mode: a kept run throws nothing away and says nothing of it"
	id=$(printf '%s\n' "$err" | sed -n 's/^sbx: kept sandbox \([0-9a-f]*\) .*/\1/p')
	printf '%s\n' "$err" | tail -n 1 |
		grep -qxF "sbx: its changes to $PROJ (copy-on-write): 'sbx diff $id' shows them, 'sbx apply $id' writes them"
	ok $? "$mode: a kept run that wrote to the working directory says how to review and apply it ($(printf '%s\n' "$err" | tail -n 1))"
	sbx_as_mode "$mode" "$SBX" destroy "kept-$mode" >/dev/null 2>&1

	capture run -- sh -c 'echo x >/root-file; exit 3'
	id=$(printf '%s\n' "$err" | sed -n 's/^sbx: kept sandbox \([0-9a-f]*\) .*/\1/p')
	[ "$rc" = 3 ] && [ -n "$id" ] && printf '%s\n' "$err" | tail -n 1 |
		grep -qxF "sbx: its changes to the image's root: 'sbx export $id -o FILE' writes them as a tarball"
	ok $? "$mode: a failed run kept with writes to the image's root only points to sbx export ($(printf '%s\n' "$err" | tail -n 1))"
	[ -n "$id" ] && sbx_as_mode "$mode" "$SBX" destroy "$id" >/dev/null 2>&1

	capture run -- sh -c 'exit 3'
	[ "$rc" = 3 ] && printf '%s\n' "$err" | tail -n 1 | grep -q '^sbx: kept sandbox '
	ok $? "$mode: a kept run that wrote nothing says nothing of changes ($(printf '%s\n' "$err" | tail -n 1))"
	id=$(printf '%s\n' "$err" | sed -n 's/^sbx: kept sandbox \([0-9a-f]*\) .*/\1/p')
	[ -n "$id" ] && sbx_as_mode "$mode" "$SBX" destroy "$id" >/dev/null 2>&1

	capture run -q --keep --log-json "$BASE/klog-$mode.jsonl" -- sh -c 'echo new >made.txt; echo x >/root-file'
	[ "$rc" = 0 ] && [ -z "$err" ] &&
		[ "$(jq -c 'select(.event == "kept") | .changed' "$BASE/klog-$mode.jsonl")" = "[\"/\",\"$PROJ\"]" ]
	ok $? "$mode: --log-json's kept event lists the changed directories ($(jq -c 'select(.event == "kept")' "$BASE/klog-$mode.jsonl" 2>&1))"
	id=$(jq -r 'select(.event == "kept") | .id' "$BASE/klog-$mode.jsonl")
	[ -n "$id" ] && sbx_as_mode "$mode" "$SBX" destroy "$id" >/dev/null 2>&1

	if [ "$mode" = root ]; then
		capture run -p "$BASE/unlimited.ini" -- sh -c 'echo new >made.txt'
		[ "$rc" = 0 ] && printf '%s\n' "$err" | grep -qxF "sbx: discarded its changes to $PROJ (copy-on-write); $HINT"
		ok $? "$mode: with the layers on the state filesystem ([limits] disk = unlimited) too ($(printf '%s\n' "$err" | tail -n 1))"
	fi

	# sbx stop: the user's own end, not a failure; the writes are gone
	(run -n "stopped-$mode" -- sh -c 'echo new >made.txt; exec sleep 30' >/dev/null 2>"$BASE/stop-$mode.err") &
	pid=$!
	for _ in $(seq 100); do
		sbx_as_mode "$mode" "$SBX" ps | grep -q "stopped-$mode .*running" && break
		sleep 0.1
	done
	sleep 0.3
	sbx_as_mode "$mode" "$SBX" stop "stopped-$mode" >/dev/null 2>&1
	wait $pid
	grep -qxF "sbx: discarded its changes to $PROJ (copy-on-write); $HINT" "$BASE/stop-$mode.err"
	ok $? "$mode: a run ended by sbx stop says it too ($(tail -n 1 "$BASE/stop-$mode.err"))"
	[ ! -e "$PROJ/made.txt" ]
	ok $? "$mode: nothing reached the host's working directory"
done

done_testing
