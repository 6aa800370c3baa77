#!/bin/bash
# tests/integration/doctor.sh - `sbx doctor` says which isolation layers
# this host gives sbx, in text and --json, and exits non-zero when a run
# could not be isolated; a host without user namespaces is simulated with
# user.max_user_namespaces = 0 inside a user namespace of the test's own:
# doctor names the sysctl and the fix, and `sbx run` refuses with one line
# and never runs the command.  As root and as nobody.
. "$(dirname "$0")/../lib/tap.sh"
. "$(dirname "$0")/../lib/sbx.sh"

sbx_modes
sbx_base
sbx_wd
if ! unshare -U -r true 2>/dev/null; then
	echo "1..0 # SKIP unshare -U cannot make a user namespace here (the no-userns case needs one)"
	exit 77
fi

for mode in $MODES; do
	capture sbx_as_mode_in "$WD" $mode "$SBX" doctor
	[ "$rc" -eq 0 ] && [ "$(tail -n 1 <<<"$out")" = "sbx can isolate a run here." ] &&
		grep -qE '^  ok +user namespaces ' <<<"$out" && grep -qE '^  ok +pid namespace, /proc ' <<<"$out" &&
		grep -qE '^  (ok|fallback) +cgroups ' <<<"$out"
	ok $? "$mode: doctor: this host isolates runs, exit 0 ($rc: $(tail -n 1 <<<"$out"))"
	capture sbx_as_mode_in "$WD" $mode "$SBX" doctor --json
	names=$(jq -r '[.checks[].name] | join(" ")' <<<"$out")
	[ "$rc" -eq 0 ] && [ "$(jq .isolated <<<"$out")" = true ] &&
		for n in userns mountns overlay pidns netns seccomp cgroup tun nftables; do
			grep -qw "$n" <<<"$names" || exit 1
		done
	ok $? "$mode: doctor --json: isolated, one entry per layer ($names)"
	jq -e '.checks[] | select(.name == "nftables" and .status == "ok" and
		(.detail | startswith("proxy mode captures every TCP connection and DNS query")))' <<<"$out" >/dev/null
	ok $? "$mode: doctor tries proxy mode's capture as a jail's init sets it up: ok ($(jq -r '.checks[] | select(.name == "nftables") | .status + ": " + .detail' <<<"$out"))"
	if [ $mode = root ]; then
		jq -e '.checks[] | select(.name == "idmap" and .status == "ok")' <<<"$out" >/dev/null &&
			jq -e '.checks[] | select(.name == "userns_user")' <<<"$out" >/dev/null
		ok $? "root: doctor also probes idmapped mounts and an ordinary user's namespaces"
	else
		jq -e '.checks[] | select(.name == "subid")' <<<"$out" >/dev/null
		ok $? "user: doctor says whether the user has subordinate ids"
	fi

	# No user namespaces: doctor fails closed and says why; run refuses.
	mark=$BASE/ran-$mode
	noun='echo 0 >/proc/sys/user/max_user_namespaces && exec "$@"'
	capture sbx_as_mode_in "$WD" $mode unshare -U -r sh -c "$noun" sh "$SBX" doctor
	[ "$rc" -eq 1 ] && grep -qE '^  missing +user namespaces ' <<<"$out" &&
		grep -q "fix: user namespaces are turned off here (user.max_user_namespaces = 0)" <<<"$out" &&
		[ "$(tail -n 1 <<<"$out")" = "sbx cannot isolate a run here: sbx run will refuse (see above)." ]
	ok $? "$mode: no user namespaces: doctor exits 1 naming the sysctl and the fix ($rc)"
	! grep -qE "No space left on device:|the container's limit$" <<<"$out" &&
		{ [ $mode = user ] || grep -qE '^  fallback +idmapped mounts +not probed: an idmapped mount needs a user namespace' <<<"$out"; } &&
		grep -qE '^  fallback +capture \(nf_tables\) +not probed: capture is set up in a user namespace, and none can be created here' <<<"$out"
	ok $? "$mode: no user namespaces: the checks that need one say so, in sentences ($(grep -E 'idmapped|ENOSPC|No space' <<<"$out" | head -2))"
	capture sbx_as_mode_in "$WD" $mode unshare -U -r sh -c "$noun" sh "$SBX" run -q -- sh -c "echo ran >$mark"
	[ "$rc" -eq 125 ] && [ ! -e "$mark" ] && [ "$(lines "$err")" -eq 1 ] &&
		[[ "$err" == "sbx: cannot create the jail's namespaces: user namespaces are turned off here (user.max_user_namespaces = 0)"* ]]
	ok $? "$mode: no user namespaces: run refuses in one line and the command never ran ($rc: $err)"
done

capture "$SBX" doctor --bogus
[ "$rc" -eq 2 ]
ok $? "doctor: an unknown option is a usage error ($rc)"
done_testing
