#!/bin/bash
# tests/integration/inspect_many.sh - one report of many sandboxes, as root
# and as nobody: `sbx inspect --json A B` (an array of records, in the
# order named), `sbx inspect --summary [--json] (SANDBOX... | --all)` (a
# row per sandbox: state, exit, wall, peak memory, connections denied and
# allowed; then the totals), a name that matches nothing (an error line,
# exit 1, the other rows still printed), the usage errors, and the run
# log's start event (name, image) that a report of shipped logs reads.
. "$(dirname "$0")/../lib/tap.sh"
. "$(dirname "$0")/../lib/sbx.sh"
sbx_setup_busybox

for mode in $MODES; do
	as() { sbx_as_mode_in "$WD" "$mode" "$@"; }
	as "$SBX" run -q --keep -n ok-a --rootfs "$IMG" -- true
	as "$SBX" run -q --keep -n fail-b --rootfs "$IMG" --net proxy \
		--log-json "$BASE/$mode-b.jsonl" -- \
		sh -c 'wget -q -O - http://denied.example/ || echo denied; exit 3' >/dev/null 2>&1
	ok $([ $? = 3 ]; echo $?) "$mode: a sandbox exits 3 after a denied connection"
	as "$SBX" run -q --keep -n ok-c --rootfs "$IMG" -- sh -c 'seq 1 1000 >/dev/null'

	capture as "$SBX" inspect --json fail-b ok-a
	ok $([ $rc = 0 ] && [ "$(printf '%s' "$out" | jq -c '[.[] | .name]')" = '["fail-b","ok-a"]' ]; echo $?) \
		"$mode: inspect --json of two: an array of their records, in the order named"
	capture as "$SBX" inspect --json ok-a
	ok $([ "$(printf '%s' "$out" | jq -r 'type + " " + .name')" = "object ok-a" ]; echo $?) \
		"$mode: inspect --json of one: its record, an object as before"

	capture as "$SBX" inspect --summary --json ok-a fail-b ok-c
	got=$(printf '%s' "$out" | jq -c '[.sandboxes, .ok, .failed, .connections_denied, [.rows[] | .name]]')
	ok $([ "$got" = '[3,2,1,1,["ok-a","fail-b","ok-c"]]' ]; echo $?) \
		"$mode: --summary --json: totals and one row each ($got)"
	got=$(printf '%s' "$out" | jq -r '.rows[1] | "\(.state) \(.exit) \(.reason) \(.connections.denied) \(.connections.allowed) \(.wall_ms > 0) \(.mem_peak > 0) \(.kept)"')
	ok $([ "$got" = "exited 3 3 exited 1 0 true true true" ]; echo $?) \
		"$mode: a row has state, exit, wall, peak memory and connections ($got)"

	capture as "$SBX" inspect --summary --all
	ok $([ $rc = 0 ] && [ "$(lines "$out")" = 5 ] && printf '%s\n' "$out" | head -n 1 | grep -q '^ID  *NAME  *STATE  *WALL  *PEAK MEM  *DENIED' &&
		printf '%s\n' "$out" | grep -q '^[0-9a-f]\{12\}  fail-b  .*exited 3 .*  1 ' &&
		printf '%s\n' "$out" | tail -n 1 | grep -q '^3 sandboxes: 2 exited 0, 1 failed, 0 running or lost; 1 connections denied'; echo $?) \
		"$mode: --summary --all: a table of the state directory's sandboxes and the totals"
	[ $rc = 0 ] || diag "$out $err"

	capture as "$SBX" inspect --summary ok-c
	ok $([ $rc = 0 ] && printf '%s\n' "$out" | tail -n 1 | grep -q '^1 sandbox: 1 exited 0, 0 failed' &&
		printf '%s\n' "$out" | sed -n 2p | grep -q ' [0-9][0-9.]* m\?s  '; echo $?) \
		"$mode: --summary of one: 'sandbox', and its wall time as a number ($(printf '%s' "$out" | tail -n 1))"

	capture as "$SBX" inspect --summary --json ok-a nosuch
	ok $([ $rc = 1 ] && printf '%s' "$err" | grep -q "nosuch" &&
		[ "$(printf '%s' "$out" | jq -c '[.sandboxes, .rows[0].name]')" = '[1,"ok-a"]' ]; echo $?) \
		"$mode: a name that matches nothing: an error line naming it, exit 1, the others still reported"

	for args in "ok-a fail-b" "--all ok-a" "--all" "--summary --changes ok-a" "--summary"; do
		# shellcheck disable=SC2086
		capture as "$SBX" inspect $args
		ok $([ $rc = 2 ] && [ -z "$out" ] && printf '%s' "$err" | grep -q "sbx inspect --help"; echo $?) \
			"$mode: sbx inspect $args: a usage error (2) that points at --help ($err)"
	done

	got=$(jq -c 'select(.event == "start") | [.name, (.rootfs.sha256 | length), .rootfs.spec == $img]' \
		--arg img "$IMG" "$BASE/$mode-b.jsonl")
	ok $([ "$got" = '["fail-b",64,true]' ]; echo $?) "$mode: the run log's start event names the sandbox and its image ($got)"
	as "$SBX" destroy --all >/dev/null
done
done_testing
