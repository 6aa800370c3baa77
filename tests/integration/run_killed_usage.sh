#!/bin/bash
# tests/integration/run_killed_usage.sh - a jail that sbx kills (its time
# limit, --stop-timeout, a second Ctrl-C) is still measured: the CPU time
# and peak memory of its processes reach the run log and the record.  When
# sbx killed the jail's pid 1 first, the kernel reaped the rest without
# counting them into pid 1's rusage: a run that was busy for 2 s said
# "cpu 6 ms, peak memory 1.5 MiB".  Without a cgroup (no memory, pids or
# cpus limit), that rusage is all sbx has.  Root and nobody.
. "$(dirname "$0")/../lib/tap.sh"
. "$(dirname "$0")/../lib/sbx.sh"
need_tools jq

sbx_modes
sbx_base
sbx_wd
# busy for at least as long as the run lasts, ignoring SIGTERM
busy='trap "" TERM; while :; do :; done'
cpu_of() { sed -n 's/.*; wall [0-9]* ms, cpu \([0-9]*\) ms.*/\1/p' <<<"$1" | tail -1; }
for mode in $MODES; do
	capture sbx_as_mode_in "$WD" "$mode" "$SBX" run --keep --name tl --time 2s -- sh -c "$busy"
	cpu=$(cpu_of "$err")
	[ "$rc" = 124 ] && [ -n "$cpu" ] && [ "$cpu" -ge 500 ]
	ok $? "$mode: killed at its time limit after 2 s busy: the run log counts its CPU (exit $rc, cpu '$cpu' ms)"
	rec=$(sbx_as_mode "$mode" "$SBX" inspect --json tl)
	rcpu=$(jq -r '.resources.cpu_ms // empty' <<<"$rec")
	[ -n "$rcpu" ] && awk -v c="$rcpu" 'BEGIN {exit !(c >= 500)}'
	ok $? "$mode: the record's CPU time too ('$rcpu' ms)"
	sbx_as_mode "$mode" "$SBX" destroy tl >/dev/null 2>&1

	# SIGTERM ignored: killed after --stop-timeout
	capture sbx_as_mode_in "$WD" "$mode" timeout -s TERM 2 "$SBX" run --rm --stop-timeout 1s -- \
		sh -c "$busy"
	cpu=$(cpu_of "$err")
	[ "$rc" = 124 ] && [[ "$err" == *"outlived --stop-timeout"* ]] && [ -n "$cpu" ] && [ "$cpu" -ge 1000 ]
	ok $? "$mode: killed after --stop-timeout: its CPU counted (exit $rc, cpu '$cpu' ms)"

	# a busy child in the background, the command itself waiting
	capture sbx_as_mode_in "$WD" "$mode" "$SBX" run --rm --time 2s -- \
		sh -c "sh -c '$busy' & wait"
	cpu=$(cpu_of "$err")
	[ "$rc" = 124 ] && [ -n "$cpu" ] && [ "$cpu" -ge 500 ]
	ok $? "$mode: a busy background process is counted too (exit $rc, cpu '$cpu' ms)"

	# the request is the supervisor's only: sent from inside, nothing happens
	capture sbx_as_mode_in "$WD" "$mode" "$SBX" run --rm -- \
		sh -c 'for s in 33 34 35 36; do kill -$s 1; done; sleep 0.3; echo alive'
	[ "$rc" = 0 ] && [ "$out" = alive ]
	ok $? "$mode: real-time signals sent to pid 1 from inside end nothing ($rc: $out)"
done

done_testing
